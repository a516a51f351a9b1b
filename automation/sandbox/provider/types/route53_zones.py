"""``aws:route53`` hosted zones (``aws:route53/zone:Zone``), as the Terraform AWS
provider manages them; id = the zone id.

A zone is private when ``vpcs`` are given; its VPC associations and tags change in
place, and ``forceDestroy`` deletes its record sets (but the apex NS and SOA) before it.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from botocore.exceptions import ClientError

from automation.sandbox.provider.model import (
    MOTO_LACKS,
    Aws,
    ForceNew,
    NotFound,
    Props,
    Request,
    ResourceType,
    register,
)
from automation.sandbox.provider.types.route53_calls import (
    COMMENT,
    apply_changes,
    dns_name,
    error_code,
    hosted_zone_name,
    wait_insync,
)

ZONE_GO = "internal/service/route53/zone.go"


def _partition(region: str) -> str:
    if region.startswith("cn-"):
        return "aws-cn"
    return "aws-us-gov" if region.startswith("us-gov-") else "aws"


def clean_zone_id(value: str) -> str:
    """``/hostedzone/Z123`` -> ``Z123``."""
    return value.rsplit("/", 1)[-1]


def _tag_delta(
    old: Mapping[str, str] | None, new: Mapping[str, str] | None
) -> tuple[dict[str, str], list[str]]:
    """Tags to set and tag keys to remove to go from ``old`` to ``new``."""
    old, new = old or {}, new or {}
    return {k: v for k, v in new.items() if old.get(k) != v}, [k for k in old if k not in new]


def _tags(r53: Any, zone_id: str) -> dict[str, str]:
    tag_set = r53.list_tags_for_resource(ResourceType="hostedzone", ResourceId=zone_id)
    return {t["Key"]: t["Value"] for t in tag_set["ResourceTagSet"].get("Tags", [])}


def _change_tags(r53: Any, zone_id: str, old: Any, new: Any) -> None:
    put, remove = _tag_delta(old, new)
    if put or remove:
        args: dict[str, Any] = {"ResourceType": "hostedzone", "ResourceId": zone_id}
        if put:
            args["AddTags"] = [{"Key": k, "Value": v} for k, v in put.items()]
        if remove:
            args["RemoveTagKeys"] = remove
        r53.change_tags_for_resource(**args)


def _vpc_key(vpc: Any) -> str:
    return str(vpc.get("vpcId") if isinstance(vpc, dict) else vpc)


@register
class Zone(ResourceType):
    """A hosted zone, private when ``vpcs`` are given; id = the zone id."""

    token = "aws:route53/zone:Zone"
    not_read = {"enableAcceleratedRecovery": MOTO_LACKS}
    auto_named = "name"  # pulumi-aws autonames it: set here, replacements delete first
    force_new = (
        ForceNew("delegationSetId", f"{ZONE_GO}: delegation_set_id ForceNew"),
        ForceNew("name", f"{ZONE_GO}: name ForceNew"),
    )
    computed = ("arn", "zoneId", "nameServers", "primaryNameServer", "tagsAll")
    write_only = ("forceDestroy",)

    def check(self, req: Request, news: Props) -> Props:
        props = {"comment": COMMENT, "forceDestroy": False, **news}
        if not props.get("name"):
            raise ValueError("name is required")
        props["name"] = props["name"].rstrip(".")  # Terraform's TrimTrailingPeriod
        if isinstance(props.get("vpcs"), list):
            props["vpcs"] = sorted(props["vpcs"], key=_vpc_key)
        return props

    @staticmethod
    def _vpcs(aws: Aws, props: Props) -> set[tuple[str, str]]:
        return {(v["vpcId"], v.get("vpcRegion") or aws.region) for v in props.get("vpcs") or []}

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        r53 = aws.client("route53")
        vpcs = sorted(self._vpcs(aws, inputs))
        config: dict[str, Any] = {"Comment": inputs.get("comment") or ""}
        args: dict[str, Any] = {
            "Name": inputs["name"],
            "CallerReference": str(uuid.uuid4()),
            "HostedZoneConfig": config,
        }
        if inputs.get("delegationSetId"):
            args["DelegationSetId"] = inputs["delegationSetId"]
        if vpcs:
            # AWS makes a zone created with a VPC private; moto also needs the flag.
            args["VPC"] = {"VPCId": vpcs[0][0], "VPCRegion": vpcs[0][1]}
            config["PrivateZone"] = True
        answer = r53.create_hosted_zone(**args)
        zone_id = clean_zone_id(answer["HostedZone"]["Id"])
        wait_insync(r53, answer["ChangeInfo"])
        _change_tags(r53, zone_id, {}, inputs.get("tags"))
        for vpc_id, region in vpcs[1:]:
            associated = r53.associate_vpc_with_hosted_zone(
                HostedZoneId=zone_id, VPC={"VPCId": vpc_id, "VPCRegion": region}
            )
            wait_insync(r53, associated["ChangeInfo"])
        return zone_id, self.read(aws, req, zone_id, inputs)

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        r53 = aws.client("route53")
        try:
            answer = r53.get_hosted_zone(Id=id_)
        except ClientError as exc:
            if error_code(exc) == "NoSuchHostedZone":
                raise NotFound(id_) from exc
            raise
        zone = answer["HostedZone"]
        name = zone["Name"].rstrip(".")
        if zone.get("Config", {}).get("PrivateZone"):
            # Private zones have no delegation set; Terraform reads the apex NS record.
            apex = r53.list_resource_record_sets(
                HostedZoneId=id_, StartRecordName=f"{name}.", StartRecordType="NS", MaxItems="1"
            )["ResourceRecordSets"]
            servers = [
                r["Value"]
                for s in apex
                if s["Type"] == "NS" and dns_name(s["Name"]) == dns_name(name)
                for r in s.get("ResourceRecords", [])
            ]
        else:
            servers = list(answer.get("DelegationSet", {}).get("NameServers", []))
        tags = _tags(r53, id_)
        outputs: Props = {
            "arn": f"arn:{_partition(aws.region)}:route53:::hostedzone/{id_}",
            "comment": zone.get("Config", {}).get("Comment") or "",
            "forceDestroy": bool(state.get("forceDestroy", False)),
            "name": name,
            "nameServers": sorted(servers),
            "primaryNameServer": servers[0] if servers else "",
            "tags": tags,
            "tagsAll": tags,
            "vpcs": self._vpcs_out(aws, answer.get("VPCs", []), state),
            "zoneId": id_,
        }
        delegation = answer.get("DelegationSet", {}).get("Id")
        if delegation:
            outputs["delegationSetId"] = clean_zone_id(delegation)
        return outputs

    @staticmethod
    def _vpcs_out(aws: Aws, live: list[dict[str, str]], state: Props) -> list[dict[str, str]]:
        """Live associations, with ``vpcRegion`` only where declared or not the default,
        so a refresh leaves the declared shape (Terraform computes the default)."""
        declared = {v.get("vpcId"): v for v in state.get("vpcs") or []}
        out = []
        for vpc in sorted(live, key=lambda v: v["VPCId"]):
            entry = {"vpcId": vpc["VPCId"]}
            if "vpcRegion" in declared.get(vpc["VPCId"], {}) or vpc["VPCRegion"] != aws.region:
                entry["vpcRegion"] = vpc["VPCRegion"]
            out.append(entry)
        return out

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        r53 = aws.client("route53")
        if (olds.get("comment") or "") != (news.get("comment") or ""):
            r53.update_hosted_zone_comment(Id=id_, Comment=news.get("comment") or "")
        _change_tags(r53, id_, olds.get("tags"), news.get("tags"))
        old_vpcs, new_vpcs = self._vpcs(aws, olds), self._vpcs(aws, news)
        # A private zone always keeps one VPC: associate the new ones first.
        for vpc_id, region in sorted(new_vpcs - old_vpcs):
            answer = r53.associate_vpc_with_hosted_zone(
                HostedZoneId=id_, VPC={"VPCId": vpc_id, "VPCRegion": region}
            )
            wait_insync(r53, answer["ChangeInfo"])
        for vpc_id, region in sorted(old_vpcs - new_vpcs):
            answer = r53.disassociate_vpc_from_hosted_zone(
                HostedZoneId=id_, VPC={"VPCId": vpc_id, "VPCRegion": region}
            )
            wait_insync(r53, answer["ChangeInfo"])
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        r53 = aws.client("route53")
        try:
            if state.get("forceDestroy"):
                self._delete_records(r53, id_)
            r53.delete_hosted_zone(Id=id_)
        except NotFound:
            return
        except ClientError as exc:
            if error_code(exc) != "NoSuchHostedZone":
                raise

    @staticmethod
    def _delete_records(r53: Any, zone_id: str) -> None:
        """``forceDestroy``: delete every record set but the apex NS and SOA."""
        apex = dns_name(hosted_zone_name(r53, zone_id))
        doomed = [
            rrset
            for page in r53.get_paginator("list_resource_record_sets").paginate(
                HostedZoneId=zone_id
            )
            for rrset in page["ResourceRecordSets"]
            if not (dns_name(rrset["Name"]) == apex and rrset["Type"] in ("NS", "SOA"))
        ]
        for start in range(0, len(doomed), 100):
            batch = doomed[start : start + 100]
            apply_changes(
                r53, zone_id, [{"Action": "DELETE", "ResourceRecordSet": r} for r in batch], COMMENT
            )
