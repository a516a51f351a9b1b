"""The stand-in provider's ``aws:route53`` types against a real moto server.

Each type is created, checked against what boto3 sees, updated in place where AWS can,
read back (also from the declared inputs alone, as an import does), deleted twice and
then read as gone. Replacement is judged from ``replace_props()`` the way the servicer
judges it: a change to any listed property replaces, any other change updates.
"""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from automation.sandbox.provider.model import (
    REGISTRY,
    Aws,
    NotFound,
    Props,
    Request,
    ResourceType,
)
from automation.sandbox.provider.types.route53_calls import dns_name
from automation.sandbox.provider.types.route53_records import Record, parse_record_id
from automation.sandbox.provider.types.route53_zones import Zone
from tests.support.moto_fixtures import MotoServer

pytestmark = pytest.mark.moto

ELB_ZONE = "Z32O12XQLNTSW2"  # eu-west-1's ALB hosted zone


def requires_replace(kind: type[ResourceType], olds: Props, news: Props) -> bool:
    """Whether going from ``olds`` to ``news`` replaces a resource of ``kind``."""
    return any(olds.get(prop) != news.get(prop) for prop in kind.replace_props())


def request(kind: type[ResourceType]) -> Request:
    return Request(name="test", token=kind.token)


def create(aws: Aws, kind: type[ResourceType], declared: Props) -> tuple[str, Props]:
    """Create through the registered type; reading it back, from its outputs or from the
    declared inputs alone (an import), gives the same outputs."""
    resource = REGISTRY[kind.token]
    assert isinstance(resource, kind)
    inputs = resource.check(request(kind), declared)
    id_, outputs = resource.create(aws, request(kind), inputs)
    assert resource.read(aws, request(kind), id_, outputs) == outputs
    assert resource.read(aws, request(kind), id_, inputs) == outputs
    return id_, outputs


def update(aws: Aws, kind: type[ResourceType], id_: str, olds: Props, changes: Props) -> Props:
    """Update in place (only legal when nothing replace-worthy changed)."""
    resource = REGISTRY[kind.token]
    news = resource.check(request(kind), {**olds, **changes})
    assert not requires_replace(kind, olds, news)
    outputs = resource.update(aws, request(kind), id_, olds, news)
    assert resource.read(aws, request(kind), id_, outputs) == outputs
    return outputs


def delete(aws: Aws, kind: type[ResourceType], id_: str, state: Props) -> None:
    """Delete twice (the second finds it gone and succeeds), then read it as gone."""
    resource = REGISTRY[kind.token]
    resource.delete(aws, request(kind), id_, state)
    resource.delete(aws, request(kind), id_, state)
    with pytest.raises(NotFound):
        resource.read(aws, request(kind), id_, state)


@pytest.fixture
def aws(moto: MotoServer) -> Aws:
    return Aws(region=moto.region, endpoint_url=moto.endpoint_url)


@pytest.fixture
def r53(moto: MotoServer) -> Any:
    return moto.client("route53")


@pytest.fixture
def zone_id(r53: Any) -> str:
    answer = r53.create_hosted_zone(Name="example.com", CallerReference="test")
    return str(answer["HostedZone"]["Id"].rsplit("/", 1)[-1])


def record_sets(r53: Any, zone_id: str) -> dict[tuple[str, str], dict[str, Any]]:
    """The zone's record sets but its apex NS/SOA, by (name, type)."""
    sets = r53.list_resource_record_sets(HostedZoneId=zone_id)["ResourceRecordSets"]
    return {(s["Name"], s["Type"]): s for s in sets if s["Type"] not in ("NS", "SOA")}


def values(rrset: dict[str, Any]) -> list[str]:
    return sorted(r["Value"] for r in rrset["ResourceRecords"])


def spy_changes(aws: Aws, monkeypatch: pytest.MonkeyPatch) -> list[list[dict[str, Any]]]:
    """Every ChangeResourceRecordSets batch the provider sends, in order."""
    client = aws.client("route53")
    batches: list[list[dict[str, Any]]] = []
    original = client.change_resource_record_sets

    def spy(**kwargs: Any) -> Any:
        batches.append(kwargs["ChangeBatch"]["Changes"])
        return original(**kwargs)

    monkeypatch.setattr(client, "change_resource_record_sets", spy)
    return batches


# -- zones -----------------------------------------------------------------------------


def test_zone(aws: Aws, r53: Any) -> None:
    id_, outputs = create(aws, Zone, {"name": "mirror.example.com.", "tags": {"a": "1"}})
    live = r53.get_hosted_zone(Id=id_)
    assert live["HostedZone"]["Name"] == "mirror.example.com."
    assert live["HostedZone"]["Config"]["Comment"] == "Managed by Pulumi"
    assert outputs["name"] == "mirror.example.com"
    assert outputs["zoneId"] == id_ and "/" not in id_
    assert outputs["arn"] == f"arn:aws:route53:::hostedzone/{id_}"
    assert outputs["nameServers"] == sorted(live["DelegationSet"]["NameServers"])
    assert outputs["primaryNameServer"] == live["DelegationSet"]["NameServers"][0]
    assert outputs["tags"] == outputs["tagsAll"] == {"a": "1"}
    assert outputs["forceDestroy"] is False

    assert requires_replace(Zone, outputs, {**outputs, "name": "other.example.com"})
    assert requires_replace(Zone, outputs, {**outputs, "delegationSetId": "N1"})
    assert not requires_replace(Zone, outputs, {**outputs, "forceDestroy": True})

    outputs = update(aws, Zone, id_, outputs, {"comment": "mirror", "tags": {"b": "2"}})
    assert r53.get_hosted_zone(Id=id_)["HostedZone"]["Config"]["Comment"] == "mirror"
    tag_set = r53.list_tags_for_resource(ResourceType="hostedzone", ResourceId=id_)
    assert tag_set["ResourceTagSet"]["Tags"] == [{"Key": "b", "Value": "2"}]

    delete(aws, Zone, id_, outputs)
    assert r53.list_hosted_zones()["HostedZones"] == []


def test_private_zone(aws: Aws, r53: Any, moto: MotoServer) -> None:
    ec2 = moto.client("ec2")
    first, second = (
        ec2.create_vpc(CidrBlock=c)["Vpc"]["VpcId"] for c in ("10.0.0.0/16", "10.1.0.0/16")
    )
    id_, outputs = create(aws, Zone, {"name": "mirror.internal", "vpcs": [{"vpcId": first}]})
    live = r53.get_hosted_zone(Id=id_)
    assert live["HostedZone"]["Config"]["PrivateZone"] is True
    assert live["VPCs"] == [{"VPCRegion": "eu-west-1", "VPCId": first}]
    assert outputs["vpcs"] == [{"vpcId": first}]  # the declared shape, region defaulted
    assert len(outputs["nameServers"]) == 4  # from the apex NS record

    outputs = update(aws, Zone, id_, outputs, {"vpcs": [{"vpcId": second}]})
    assert r53.get_hosted_zone(Id=id_)["VPCs"] == [{"VPCRegion": "eu-west-1", "VPCId": second}]
    assert outputs["vpcs"] == [{"vpcId": second}]
    delete(aws, Zone, id_, outputs)


def test_zone_force_destroy(aws: Aws, r53: Any) -> None:
    kept, _ = create(aws, Zone, {"name": "kept.example.com"})
    doomed, outputs = create(aws, Zone, {"name": "doomed.example.com", "forceDestroy": True})
    for zone in (kept, doomed):
        r53.change_resource_record_sets(
            HostedZoneId=zone,
            ChangeBatch={
                "Changes": [
                    {
                        "Action": "CREATE",
                        "ResourceRecordSet": {
                            "Name": f"*.{r53.get_hosted_zone(Id=zone)['HostedZone']['Name']}",
                            "Type": "A",
                            "TTL": 60,
                            "ResourceRecords": [{"Value": "10.0.0.1"}],
                        },
                    }
                ]
            },
        )
    with pytest.raises(ClientError, match="HostedZoneNotEmpty"):
        REGISTRY[Zone.token].delete(aws, request(Zone), kept, {"name": "kept.example.com"})
    delete(aws, Zone, doomed, outputs)


# -- records ---------------------------------------------------------------------------


def test_record(aws: Aws, r53: Any, zone_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    declared = {
        "zoneId": zone_id,
        "name": "API.example.com.",
        "type": "CNAME",
        "ttl": 60,
        "records": ["lb-1.elb.amazonaws.com"],
    }
    id_, outputs = create(aws, Record, declared)
    assert id_ == f"{zone_id}_api.example.com_CNAME"
    assert outputs["fqdn"] == outputs["name"] == "api.example.com"
    live = record_sets(r53, zone_id)[("api.example.com.", "CNAME")]
    assert live["TTL"] == 60 and values(live) == ["lb-1.elb.amazonaws.com"]

    assert requires_replace(Record, outputs, {**outputs, "name": "www.example.com"})
    assert requires_replace(Record, outputs, {**outputs, "zoneId": "Z999"})
    for change in ({"type": "A"}, {"ttl": 300}, {"records": ["x"]}, {"setIdentifier": "a"}):
        assert not requires_replace(Record, outputs, {**outputs, **change})

    batches = spy_changes(aws, monkeypatch)
    outputs = update(aws, Record, id_, outputs, {"ttl": 300, "records": ["lb-2.elb.amazonaws.com"]})
    assert [c["Action"] for c in batches[-1]] == ["UPSERT"]
    live = record_sets(r53, zone_id)[("api.example.com.", "CNAME")]
    assert live["TTL"] == 300 and values(live) == ["lb-2.elb.amazonaws.com"]

    # CNAME -> A in place: one batch deletes the CNAME and creates the A record.
    outputs = update(aws, Record, id_, outputs, {"type": "A", "records": ["10.0.0.2", "10.0.0.1"]})
    assert [(c["Action"], c["ResourceRecordSet"]["Type"]) for c in batches[-1]] == [
        ("DELETE", "CNAME"),
        ("CREATE", "A"),
    ]
    assert list(record_sets(r53, zone_id)) == [("api.example.com.", "A")]
    assert values(record_sets(r53, zone_id)[("api.example.com.", "A")]) == ["10.0.0.1", "10.0.0.2"]
    assert outputs["type"] == "A" and outputs["records"] == ["10.0.0.1", "10.0.0.2"]

    # The engine keeps the first id; the state's type finds the A record.
    delete(aws, Record, id_, outputs)
    assert record_sets(r53, zone_id) == {}


def test_record_import_by_id(aws: Aws, zone_id: str) -> None:
    declared = {"zoneId": zone_id, "name": "api", "type": "A", "ttl": 60, "records": ["10.0.0.1"]}
    id_, outputs = create(aws, Record, declared)
    assert outputs["fqdn"] == "api.example.com"  # a relative name gets the zone
    imported = REGISTRY[Record.token].read(aws, request(Record), id_, {})
    assert imported == outputs


def test_wildcard_record(aws: Aws, r53: Any, zone_id: str) -> None:
    declared = {
        "zoneId": zone_id,
        "name": "*.Apps.example.com",
        "type": "A",
        "ttl": 60,
        "records": ["10.0.0.1"],
    }
    id_, outputs = create(aws, Record, declared)
    assert id_ == f"{zone_id}_*.apps.example.com_A"
    assert outputs["fqdn"] == "*.apps.example.com"
    assert ("*.apps.example.com.", "A") in record_sets(r53, zone_id)
    delete(aws, Record, id_, outputs)


def test_alias_and_weighted_record(aws: Aws, r53: Any, zone_id: str) -> None:
    declared = {
        "zoneId": zone_id,
        "name": "app.example.com",
        "type": "A",
        "setIdentifier": "blue",
        "weightedRoutingPolicies": [{"weight": 10}],
        "aliases": [
            {
                "name": "LB-1.eu-west-1.elb.amazonaws.com.",
                "zoneId": ELB_ZONE,
                "evaluateTargetHealth": False,
            }
        ],
    }
    id_, outputs = create(aws, Record, declared)
    assert id_ == f"{zone_id}_app.example.com_A_blue"
    live = record_sets(r53, zone_id)[("app.example.com.", "A")]
    assert live["SetIdentifier"] == "blue" and live["Weight"] == 10
    assert live["AliasTarget"]["HostedZoneId"] == ELB_ZONE
    assert outputs["aliases"][0]["name"] == "lb-1.eu-west-1.elb.amazonaws.com"

    outputs = update(aws, Record, id_, outputs, {"weightedRoutingPolicies": [{"weight": 20}]})
    assert record_sets(r53, zone_id)[("app.example.com.", "A")]["Weight"] == 20
    outputs = update(aws, Record, id_, outputs, {"setIdentifier": "green"})
    live = record_sets(r53, zone_id)[("app.example.com.", "A")]
    assert live["SetIdentifier"] == "green" and live["Weight"] == 20
    delete(aws, Record, id_, outputs)


def test_txt_record_values_are_quoted_on_the_wire(aws: Aws, r53: Any, zone_id: str) -> None:
    declared = {
        "zoneId": zone_id,
        "name": "example.com",
        "type": "TXT",
        "ttl": 60,
        "records": ["v=spf1 -all"],
    }
    id_, outputs = create(aws, Record, declared)
    assert values(record_sets(r53, zone_id)[("example.com.", "TXT")]) == ['"v=spf1 -all"']
    assert outputs["records"] == ["v=spf1 -all"]
    delete(aws, Record, id_, outputs)


def test_record_needs_records_or_aliases(zone_id: str) -> None:
    with pytest.raises(ValueError, match="exactly one"):
        REGISTRY[Record.token].check(request(Record), {"zoneId": zone_id, "name": "a", "type": "A"})


def test_names() -> None:
    assert dns_name("\\052.Apps.Example.com.") == "*.apps.example.com"
    assert parse_record_id("Z1_dev.example.com_NS_dev") == {
        "zoneId": "Z1",
        "name": "dev.example.com",
        "type": "NS",
        "setIdentifier": "dev",
    }
    assert parse_record_id("Z1_my_host.example.com_A") == {
        "zoneId": "Z1",
        "name": "my_host.example.com",
        "type": "A",
    }
