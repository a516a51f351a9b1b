"""Route53 records found by name and type; copies of one record are ambiguous."""

from __future__ import annotations

from typing import Any

import pytest

from automation.aws.lookup import Ambiguous, Lookup, LookupProblem, Missing, find
from tests.support.moto_fixtures import MotoServer

RECORD = "aws:route53/record:Record"


def _zone(route53: Any) -> str:
    zone = route53.create_hosted_zone(Name="example.internal", CallerReference="z")
    return str(zone["HostedZone"]["Id"].rsplit("/", 1)[-1])


def _put(route53: Any, zone: str, name: str, **extra: Any) -> None:
    route53.change_resource_record_sets(
        HostedZoneId=zone,
        ChangeBatch={"Changes": [{"Action": "CREATE", "ResourceRecordSet": {
            "Name": name, "Type": "CNAME", "TTL": 30,
            "ResourceRecords": [{"Value": "lb.example.com"}], **extra}}]},
    )  # fmt: skip


def test_a_record_gets_pulumi_aws_import_id(moto: MotoServer, lookup: Lookup) -> None:
    route53 = moto.client("route53")
    zone = _zone(route53)
    _put(route53, zone, "api.shop.example.internal")

    found = find(lookup, RECORD, "api", {"zoneId": zone, "type": "CNAME",
                 "name": "api.shop.example.internal"})  # fmt: skip

    assert found.import_id == f"{zone}_api.shop.example.internal_CNAME"


def test_a_wildcard_record_is_found_under_its_escaped_name(
    moto: MotoServer, lookup: Lookup
) -> None:
    route53 = moto.client("route53")
    zone = _zone(route53)
    _put(route53, zone, "*.apps.example.internal")

    found = find(lookup, RECORD, "apps", {"zoneId": zone, "type": "CNAME",
                 "name": "*.apps.example.internal"})  # fmt: skip

    assert found.import_id == f"{zone}_*.apps.example.internal_CNAME"


def test_a_record_that_exists_twice_is_ambiguous(moto: MotoServer, lookup: Lookup) -> None:
    route53 = moto.client("route53")
    zone = _zone(route53)
    for identifier in ("blue", "green"):
        _put(route53, zone, "api.shop.example.internal", SetIdentifier=identifier, Weight=50)

    with pytest.raises(Ambiguous, match=r"exists 2 times .* \(set identifiers blue, green\)"):
        find(lookup, RECORD, "api", {"zoneId": zone, "type": "CNAME",
             "name": "api.shop.example.internal"})  # fmt: skip


def test_a_name_holding_a_record_of_another_type_is_a_problem_not_missing(
    moto: MotoServer, lookup: Lookup
) -> None:
    """Route53 refuses a CNAME beside any other record of its name, so the declared record
    could not be added there: adoption must say so rather than plan to create it."""
    route53 = moto.client("route53")
    zone = _zone(route53)
    _put(route53, zone, "api.shop.example.internal")

    with pytest.raises(LookupProblem, match=r"is a CNAME record, not the A record declared"):
        find(lookup, RECORD, "api", {"zoneId": zone, "type": "A",
             "name": "api.shop.example.internal"})  # fmt: skip


def test_a_private_zone_is_found_by_its_name_and_vpc_among_zones_of_that_name(
    moto: MotoServer, lookup: Lookup
) -> None:
    ec2, route53 = moto.client("ec2"), moto.client("route53")
    mirror, other = (ec2.create_vpc(CidrBlock=c)["Vpc"]["VpcId"] for c in ("10.30.0.0/16",
                                                                             "10.40.0.0/16"))
    zones = {}
    for vpc, ref in ((other, "a"), (mirror, "b")):
        made = route53.create_hosted_zone(
            Name="mirror.example.internal", CallerReference=ref,
            VPC={"VPCRegion": moto.region, "VPCId": vpc},
            HostedZoneConfig={"PrivateZone": True, "Comment": ref},
        )  # fmt: skip
        zones[vpc] = made["HostedZone"]["Id"].rsplit("/", 1)[-1]
    route53.create_hosted_zone(Name="mirror.example.internal", CallerReference="public")
    token = "aws:route53/zone:Zone"
    declared = {"name": "mirror.example.internal", "vpcs": [{"vpcId": mirror}]}

    found = find(lookup, token, "mirror-zone", declared)

    assert found.id == zones[mirror] and found.import_id == zones[mirror]
    elsewhere = {"name": "mirror.example.internal", "vpcs": [{"vpcId": "vpc-0000"}]}
    missing = r"no live hosted zone mirror\.example\.internal for vpc-0000"
    with pytest.raises(Missing, match=missing):
        find(lookup, token, "mirror-zone", elsewhere)
