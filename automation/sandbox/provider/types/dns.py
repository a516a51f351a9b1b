"""Route53: hosted zones and record sets, as the Terraform AWS provider manages them.

Record names are case-insensitive and compared without their trailing dot; Route53
answers a leading ``*`` label as ``\\052``. A record's ``type`` and ``setIdentifier``
change in place: the old set is deleted and the new one created in ONE
ChangeResourceRecordSets batch, so the name never stops resolving.
"""

from __future__ import annotations

import os
import time
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

ZONE_GO = "internal/service/route53/zone.go"
RECORD_GO = "internal/service/route53/record.go"
TYPE_CHANGE_VARIABLE = "KUBESHIFT_SANDBOX_RECORD_TYPE_CHANGE"
"""How the stand-in answers a change of a record's ``type``: ``in-place`` (the default:
one change batch, as after hashicorp/terraform-provider-aws#47105) or ``replace`` (a
create-first replacement, as before it). Which one pinned pulumi-aws carries cannot be
proven offline, so kubeshift is tested under both."""
TYPE_CHANGES = ("in-place", "replace")
COMMENT = "Managed by Pulumi"
RR_TYPES = frozenset(
    {"A", "AAAA", "CAA", "CNAME", "DS", "HTTPS", "MX", "NAPTR", "NS", "PTR", "SOA", "SPF"}
    | {"SRV", "SSHFP", "SVCB", "TLSA", "TXT"}
)
SYNC_TIMEOUT = 30 * 60.0  # Terraform's default create/update/delete timeout


# -- helpers ---------------------------------------------------------------------------


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def _partition(region: str) -> str:
    if region.startswith("cn-"):
        return "aws-cn"
    return "aws-us-gov" if region.startswith("us-gov-") else "aws"


def clean_zone_id(value: str) -> str:
    """``/hostedzone/Z123`` -> ``Z123``."""
    return value.rsplit("/", 1)[-1]


def dns_name(name: str) -> str:
    """Lower case, no trailing dot, ``\\052`` back to ``*`` (Route53's escape for it)."""
    name = name.strip().rstrip(".").lower()
    return "*" + name[4:] if name.startswith("\\052") else name


def expand_name(name: str, zone: str) -> str:
    """Terraform's expandRecordName: a relative name gets the zone appended."""
    name, zone = dns_name(name), dns_name(zone)
    if not name:
        return zone
    return name if name == zone or name.endswith("." + zone) else f"{name}.{zone}"


def _tag_delta(
    old: Mapping[str, str] | None, new: Mapping[str, str] | None
) -> tuple[dict[str, str], list[str]]:
    """Tags to set and tag keys to remove to go from ``old`` to ``new``."""
    old, new = old or {}, new or {}
    return {k: v for k, v in new.items() if old.get(k) != v}, [k for k in old if k not in new]


def _wait_insync(r53: Any, info: Mapping[str, Any]) -> None:
    """Wait for a Route53 change to reach every name server, as Terraform does."""
    deadline = time.monotonic() + SYNC_TIMEOUT
    while info.get("Status") != "INSYNC":
        if time.monotonic() > deadline:
            raise TimeoutError(f"Route53 change {info.get('Id')} still {info.get('Status')}")
        time.sleep(2)
        info = r53.get_change(Id=info["Id"])["ChangeInfo"]


def _change(r53: Any, zone_id: str, changes: list[dict[str, Any]], comment: str) -> None:
    answer = r53.change_resource_record_sets(
        HostedZoneId=zone_id, ChangeBatch={"Comment": comment, "Changes": changes}
    )
    _wait_insync(r53, answer["ChangeInfo"])


def _zone_name(r53: Any, zone_id: str) -> str:
    """The zone's name; NotFound when the zone is gone."""
    try:
        return str(r53.get_hosted_zone(Id=zone_id)["HostedZone"]["Name"])
    except ClientError as exc:
        if _code(exc) == "NoSuchHostedZone":
            raise NotFound(zone_id) from exc
        raise


def _first(props: Props, key: str) -> Mapping[str, Any] | None:
    value = props.get(key)
    return value[0] if value else None


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


# -- aws:route53/zone:Zone -------------------------------------------------------------


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
        _wait_insync(r53, answer["ChangeInfo"])
        _change_tags(r53, zone_id, {}, inputs.get("tags"))
        for vpc_id, region in vpcs[1:]:
            associated = r53.associate_vpc_with_hosted_zone(
                HostedZoneId=zone_id, VPC={"VPCId": vpc_id, "VPCRegion": region}
            )
            _wait_insync(r53, associated["ChangeInfo"])
        return zone_id, self.read(aws, req, zone_id, inputs)

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        r53 = aws.client("route53")
        try:
            answer = r53.get_hosted_zone(Id=id_)
        except ClientError as exc:
            if _code(exc) == "NoSuchHostedZone":
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
            _wait_insync(r53, answer["ChangeInfo"])
        for vpc_id, region in sorted(old_vpcs - new_vpcs):
            answer = r53.disassociate_vpc_from_hosted_zone(
                HostedZoneId=id_, VPC={"VPCId": vpc_id, "VPCRegion": region}
            )
            _wait_insync(r53, answer["ChangeInfo"])
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
            if _code(exc) != "NoSuchHostedZone":
                raise

    @staticmethod
    def _delete_records(r53: Any, zone_id: str) -> None:
        """``forceDestroy``: delete every record set but the apex NS and SOA."""
        apex = dns_name(_zone_name(r53, zone_id))
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
            _change(
                r53, zone_id, [{"Action": "DELETE", "ResourceRecordSet": r} for r in batch], COMMENT
            )


# -- aws:route53/record:Record ---------------------------------------------------------


def record_id(props: Props) -> str:
    """pulumi-aws's id: ``<zoneId>_<name>_<type>[_<setIdentifier>]``."""
    parts = [props["zoneId"], props["name"].lower(), props["type"]]
    if props.get("setIdentifier"):
        parts.append(props["setIdentifier"])
    return "_".join(parts)


def parse_record_id(id_: str) -> Props:
    """Terraform's recordParseResourceID: the name may itself contain ``_``."""
    parts = id_.split("_")
    index = next((i for i, p in enumerate(parts[1:], 1) if p in RR_TYPES), -1)
    if len(parts) < 3 or index < 2:
        raise ValueError(f"record id {id_!r} is not ZONEID_NAME_TYPE[_SET-IDENTIFIER]")
    key: Props = {
        "zoneId": parts[0],
        "name": "_".join(parts[1:index]).rstrip("."),
        "type": parts[index],
    }
    if parts[index + 1 :]:
        key["setIdentifier"] = "_".join(parts[index + 1 :])
    return key


def _txt(value: str, rtype: str, *, quote: bool) -> str:
    """TXT/SPF values go to Route53 quoted and come back unquoted (expand/flattenTxtEntry)."""
    if rtype not in ("TXT", "SPF"):
        return value
    if quote:
        return f'"{value}"'
    return value[1:-1] if len(value) > 1 and value[0] == value[-1] == '"' else value


def record_set(props: Props, zone_name: str) -> dict[str, Any]:
    """The ResourceRecordSet the inputs describe (Terraform's expandResourceRecordSet)."""
    rtype = props["type"]
    rrset: dict[str, Any] = {"Name": expand_name(props["name"], zone_name), "Type": rtype}
    if props.get("records"):
        rrset["ResourceRecords"] = [{"Value": _txt(v, rtype, quote=True)} for v in props["records"]]
        if props.get("ttl") is not None:
            rrset["TTL"] = int(props["ttl"])
    if alias := _first(props, "aliases"):
        rrset["AliasTarget"] = {
            "DNSName": alias["name"],
            "HostedZoneId": alias["zoneId"],
            "EvaluateTargetHealth": bool(alias.get("evaluateTargetHealth")),
        }
    if props.get("setIdentifier"):
        rrset["SetIdentifier"] = props["setIdentifier"]
    if weighted := _first(props, "weightedRoutingPolicies"):
        rrset["Weight"] = int(weighted["weight"])
    if failover := _first(props, "failoverRoutingPolicies"):
        rrset["Failover"] = failover["type"]
    if latency := _first(props, "latencyRoutingPolicies"):
        rrset["Region"] = latency["region"]
    if geo := _first(props, "geolocationRoutingPolicies"):
        rrset["GeoLocation"] = {
            api: geo[key]
            for key, api in (
                ("continent", "ContinentCode"),
                ("country", "CountryCode"),
                ("subdivision", "SubdivisionCode"),
            )
            if geo.get(key)
        }
    if props.get("multivalueAnswerRoutingPolicy"):
        rrset["MultiValueAnswer"] = True
    if props.get("healthCheckId"):
        rrset["HealthCheckId"] = props["healthCheckId"]
    return rrset


def find_record_set(
    r53: Any, zone_id: str, zone_name: str, name: str, rtype: str, set_id: str | None
) -> dict[str, Any] | None:
    """The live record set for (name, type, set identifier), or None."""
    fqdn = expand_name(name, zone_name)
    args: dict[str, Any] = {
        "HostedZoneId": zone_id,
        "StartRecordName": f"{fqdn}.",
        "StartRecordType": rtype,
        "MaxItems": "100" if set_id else "1",
    }
    while True:
        try:
            page = r53.list_resource_record_sets(**args)
        except ClientError as exc:
            if _code(exc) == "NoSuchHostedZone":
                raise NotFound(zone_id) from exc
            raise
        for rrset in page["ResourceRecordSets"]:
            if (
                dns_name(rrset["Name"]) == fqdn
                and rrset["Type"] == rtype
                and rrset.get("SetIdentifier", "") == (set_id or "")
            ):
                return dict(rrset)
        more = page.get("IsTruncated") and page.get("NextRecordType") == rtype
        if not more or dns_name(page.get("NextRecordName", "")) != fqdn:
            return None
        args.update(StartRecordName=page["NextRecordName"], StartRecordType=rtype)
        if page.get("NextRecordIdentifier"):
            args["StartRecordIdentifier"] = page["NextRecordIdentifier"]


@register
class Record(ResourceType):
    """A record set; id = ``<zoneId>_<name>_<type>[_<setIdentifier>]``.

    ``type`` is not ForceNew by default: pulumi-aws 7.51.1 wraps a Terraform provider
    (>= 6.67, which has the record read cache its docs describe) that we read as
    including hashicorp/terraform-provider-aws#47105, undoing v6.0's ForceNew on
    ``type``; :data:`TYPE_CHANGE_VARIABLE` switches to the older replacement.
    ``set_identifier`` has been updatable in place since v4.21 (#25620).
    The engine keeps a resource's id across updates, so Read works from the state's
    zone/name/type/set identifier and parses the id only for imports.
    """

    token = "aws:route53/record:Record"
    not_read = {
        **dict.fromkeys(
            ("cidrRoutingPolicy", "geoproximityRoutingPolicy"),
            "a routing policy the program never declares (its records are simple): not read "
            "by the stand-in, so a live one would show on a real import only",
        ),
    }
    force_new = (
        ForceNew("name", f"{RECORD_GO}: name ForceNew"),
        ForceNew("zoneId", f"{RECORD_GO}: zone_id ForceNew"),
    )
    computed = ("fqdn",)
    write_only = ("allowOverwrite",)

    def check(self, req: Request, news: Props) -> Props:
        props = dict(news)
        for key in ("zoneId", "name", "type"):
            if not props.get(key):
                raise ValueError(f"{key} is required")
        if bool(props.get("records")) == bool(props.get("aliases")):
            raise ValueError("exactly one of records and aliases must be set")
        if props.get("aliases") and props.get("ttl") is not None:
            raise ValueError("ttl conflicts with aliases")
        props["name"] = props["name"].rstrip(".").lower()  # the schema's StateFunc
        if isinstance(props.get("records"), list):
            props["records"] = sorted(set(props["records"]))  # a TypeSet
        if isinstance(props.get("aliases"), list):
            props["aliases"] = [  # normalizeAliasDomainName
                {**a, "name": dns_name(a["name"])} if isinstance(a, dict) else a
                for a in props["aliases"]
            ]
        return props

    def forced_new(self, olds: Props, old_inputs: Props, news: Props) -> tuple[str, ...]:
        how = os.environ.get(TYPE_CHANGE_VARIABLE) or "in-place"
        if how not in TYPE_CHANGES:
            raise ValueError(f"{TYPE_CHANGE_VARIABLE} is {how!r}, not one of {TYPE_CHANGES}")
        return ("type",) if how == "replace" else ()

    @staticmethod
    def _key(id_: str, state: Props) -> Props:
        if all(state.get(k) for k in ("zoneId", "name", "type")):
            return state
        return {**state, **parse_record_id(id_)}

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        r53 = aws.client("route53")
        zone_id = inputs["zoneId"]
        zone_name = r53.get_hosted_zone(Id=zone_id)["HostedZone"]["Name"]
        action = "UPSERT" if inputs.get("allowOverwrite") else "CREATE"
        change = {"Action": action, "ResourceRecordSet": record_set(inputs, zone_name)}
        _change(r53, zone_id, [change], COMMENT)
        id_ = record_id(inputs)
        return id_, self.read(aws, req, id_, inputs)

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        key = self._key(id_, state)
        r53 = aws.client("route53")
        zone_id, rtype, set_id = key["zoneId"], key["type"], key.get("setIdentifier")
        zone_name = _zone_name(r53, zone_id)
        live = find_record_set(r53, zone_id, zone_name, key["name"], rtype, set_id)
        if live is None:
            raise NotFound(id_)
        outputs: Props = {
            "fqdn": expand_name(key["name"], zone_name),
            "name": key["name"].rstrip(".").lower(),
            "type": live["Type"],
            "zoneId": zone_id,
        }
        if "allowOverwrite" in state:
            outputs["allowOverwrite"] = state["allowOverwrite"]
        if live.get("ResourceRecords"):
            outputs["records"] = sorted(
                _txt(r["Value"], rtype, quote=False) for r in live["ResourceRecords"]
            )
        if live.get("TTL") is not None:
            outputs["ttl"] = int(live["TTL"])
        if alias := live.get("AliasTarget"):
            outputs["aliases"] = [
                {
                    "evaluateTargetHealth": bool(alias.get("EvaluateTargetHealth")),
                    "name": dns_name(alias["DNSName"]),
                    "zoneId": alias["HostedZoneId"],
                }
            ]
        outputs.update(self._routing(live))
        return outputs

    @staticmethod
    def _routing(live: Mapping[str, Any]) -> Props:
        out: Props = {}
        if live.get("SetIdentifier"):
            out["setIdentifier"] = live["SetIdentifier"]
        if live.get("Weight") is not None:
            out["weightedRoutingPolicies"] = [{"weight": int(live["Weight"])}]
        if live.get("Failover"):
            out["failoverRoutingPolicies"] = [{"type": live["Failover"]}]
        if live.get("Region"):
            out["latencyRoutingPolicies"] = [{"region": live["Region"]}]
        if geo := live.get("GeoLocation"):
            out["geolocationRoutingPolicies"] = [
                {
                    key: geo[api]
                    for key, api in (
                        ("continent", "ContinentCode"),
                        ("country", "CountryCode"),
                        ("subdivision", "SubdivisionCode"),
                    )
                    if geo.get(api)
                }
            ]
        if live.get("MultiValueAnswer"):
            out["multivalueAnswerRoutingPolicy"] = True
        if live.get("HealthCheckId"):
            out["healthCheckId"] = live["HealthCheckId"]
        return out

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        """UPSERT when the record keeps its type and set identifier; otherwise DELETE the
        old set and CREATE the new one in one atomic batch (resourceRecordUpdate)."""
        r53 = aws.client("route53")
        zone_id = news["zoneId"]
        zone_name = _zone_name(r53, zone_id)
        new = record_set(news, zone_name)
        old_set, new_set = olds.get("setIdentifier") or "", news.get("setIdentifier") or ""
        if olds.get("type") == news["type"] and old_set == new_set:
            changes = [{"Action": "UPSERT", "ResourceRecordSet": new}]
        else:
            # Delete exactly what Route53 holds (it refuses a DELETE whose values differ).
            old = find_record_set(
                r53, zone_id, zone_name, olds["name"], olds["type"], old_set
            ) or record_set(olds, zone_name)
            action = "UPSERT" if news.get("allowOverwrite") else "CREATE"
            changes = [
                {"Action": "DELETE", "ResourceRecordSet": old},
                {"Action": action, "ResourceRecordSet": new},
            ]
        _change(r53, zone_id, changes, COMMENT)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        key = self._key(id_, state)
        r53 = aws.client("route53")
        zone_id = key["zoneId"]
        try:
            zone_name = _zone_name(r53, zone_id)
            live = find_record_set(
                r53, zone_id, zone_name, key["name"], key["type"], key.get("setIdentifier")
            )
        except NotFound:
            return
        if live is None:
            return
        try:
            _change(r53, zone_id, [{"Action": "DELETE", "ResourceRecordSet": live}], COMMENT)
        except ClientError as exc:
            if _code(exc) not in ("InvalidChangeBatch", "NoSuchHostedZone"):
                raise
