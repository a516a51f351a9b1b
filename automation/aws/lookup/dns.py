"""Route53 records in the cluster's existing hosted zone."""

from __future__ import annotations

from automation.aws.lookup.model import (
    Ambiguous,
    Found,
    Lookup,
    LookupProblem,
    Missing,
    Props,
    finds,
)


def _canonical(name: str) -> str:
    """Route53 answers names with a trailing dot and ``*`` as ``\\052``."""
    return name.rstrip(".").replace("\\052", "*").lower()


@finds("aws:route53/record:Record")
def record(lookup: Lookup, name: str, inputs: Props) -> Found:
    """The zone's record set of the declared name and type; pulumi-aws's id
    ``<zone>_<name>_<type>``. Weighted or other routing-policy copies of one name and
    type are more than one record set: ambiguous."""
    zone_id = str(inputs["zoneId"]).rsplit("/", 1)[-1]
    record_name, record_type = _canonical(inputs["name"]), inputs["type"]
    reply = lookup.clients.route53.list_resource_record_sets(
        HostedZoneId=zone_id,
        StartRecordName=record_name,
        StartRecordType=record_type,
        MaxItems="10",
    )
    sets = [
        s
        for s in reply["ResourceRecordSets"]
        if _canonical(s["Name"]) == record_name and s["Type"] == record_type
    ]
    if not sets:
        held = sorted({s["Type"] for s in reply["ResourceRecordSets"]
                       if _canonical(s["Name"]) == record_name})  # fmt: skip
        if held:  # Route53 refuses a CNAME beside any other record of its name
            raise LookupProblem(
                f"{name}: {record_name} in zone {zone_id} is a {' and '.join(held)} record, "
                f"not the {record_type} record declared."
            )
        raise Missing(f"{name}: no live {record_type} record {record_name} in zone {zone_id}.")
    if len(sets) > 1:
        identifiers = ", ".join(str(s.get("SetIdentifier", "?")) for s in sets)
        raise Ambiguous(
            f"{name}: the {record_type} record {record_name} exists {len(sets)} times in zone "
            f"{zone_id} (set identifiers {identifiers})."
        )
    found = f"{zone_id}_{record_name}_{record_type}"
    return Found(found, found, {"fqdn": record_name})


@finds("aws:route53/zone:Zone")
def zone(lookup: Lookup, name: str, inputs: Props) -> Found:
    """The hosted zone of the declared name, private to the declared VPC when it names
    one (Route53 lets zones of one name exist side by side, one per VPC or public)."""
    zone_name = _canonical(inputs["name"])
    vpcs = {str(v.get("vpcId")) for v in inputs.get("vpcs") or [] if v.get("vpcId")}
    route53 = lookup.clients.route53
    listed = route53.list_hosted_zones_by_name(DNSName=zone_name, MaxItems="100")["HostedZones"]
    found = []
    for candidate in listed:
        if _canonical(candidate["Name"]) != zone_name:
            continue
        zone_id = candidate["Id"].rsplit("/", 1)[-1]
        private = candidate.get("Config", {}).get("PrivateZone", False)
        if vpcs and private:
            held = route53.get_hosted_zone(Id=zone_id).get("VPCs") or []
            if not vpcs & {v.get("VPCId") for v in held}:
                continue
        elif bool(vpcs) != bool(private):
            continue
        found.append(zone_id)
    where = f" for {', '.join(sorted(vpcs))}" if vpcs else ""
    if not found:
        raise Missing(f"{name}: no live hosted zone {zone_name}{where}.")
    if len(found) > 1:
        raise Ambiguous(f"{name}: {len(found)} live hosted zones {zone_name}{where}: {found}.")
    return Found(found[0], found[0], {"zoneId": found[0]})
