"""``aws:route53`` record sets (``aws:route53/record:Record``), as the Terraform AWS
provider manages them; id = ``<zoneId>_<name>_<type>[_<setIdentifier>]``.

A record's ``type`` and ``setIdentifier`` change in place: the old set is deleted and
the new one created in ONE ChangeResourceRecordSets batch, so the name never stops
resolving (:data:`TYPE_CHANGE_VARIABLE` switches a type change to a replacement).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from botocore.exceptions import ClientError

from automation.sandbox.provider.model import (
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
)

RECORD_GO = "internal/service/route53/record.go"
TYPE_CHANGE_VARIABLE = "KUBESHIFT_SANDBOX_RECORD_TYPE_CHANGE"
"""How the stand-in answers a change of a record's ``type``: ``in-place`` (the default:
one change batch, as after hashicorp/terraform-provider-aws#47105) or ``replace`` (a
create-first replacement, as before it). Which one pinned pulumi-aws carries cannot be
proven offline, so kubeshift is tested under both."""
TYPE_CHANGES = ("in-place", "replace")
RR_TYPES = frozenset(
    {"A", "AAAA", "CAA", "CNAME", "DS", "HTTPS", "MX", "NAPTR", "NS", "PTR", "SOA", "SPF"}
    | {"SRV", "SSHFP", "SVCB", "TLSA", "TXT"}
)


def expand_name(name: str, zone: str) -> str:
    """Terraform's expandRecordName: a relative name gets the zone appended."""
    name, zone = dns_name(name), dns_name(zone)
    if not name:
        return zone
    return name if name == zone or name.endswith("." + zone) else f"{name}.{zone}"


def _first(props: Props, key: str) -> Mapping[str, Any] | None:
    value = props.get(key)
    return value[0] if value else None


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
            if error_code(exc) == "NoSuchHostedZone":
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
        apply_changes(r53, zone_id, [change], COMMENT)
        id_ = record_id(inputs)
        return id_, self.read(aws, req, id_, inputs)

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        key = self._key(id_, state)
        r53 = aws.client("route53")
        zone_id, rtype, set_id = key["zoneId"], key["type"], key.get("setIdentifier")
        zone_name = hosted_zone_name(r53, zone_id)
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
        zone_name = hosted_zone_name(r53, zone_id)
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
        apply_changes(r53, zone_id, changes, COMMENT)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        key = self._key(id_, state)
        r53 = aws.client("route53")
        zone_id = key["zoneId"]
        try:
            zone_name = hosted_zone_name(r53, zone_id)
            live = find_record_set(
                r53, zone_id, zone_name, key["name"], key["type"], key.get("setIdentifier")
            )
        except NotFound:
            return
        if live is None:
            return
        try:
            apply_changes(r53, zone_id, [{"Action": "DELETE", "ResourceRecordSet": live}], COMMENT)
        except ClientError as exc:
            if error_code(exc) not in ("InvalidChangeBatch", "NoSuchHostedZone"):
                raise
