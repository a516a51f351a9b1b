"""Route53 records in the cluster's existing hosted zone."""

from __future__ import annotations

from automation.aws.lookup.model import Ambiguous, Found, Lookup, Missing, Props, finds


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
        raise Missing(f"{name}: no live {record_type} record {record_name} in zone {zone_id}.")
    if len(sets) > 1:
        identifiers = ", ".join(str(s.get("SetIdentifier", "?")) for s in sets)
        raise Ambiguous(
            f"{name}: the {record_type} record {record_name} exists {len(sets)} times in zone "
            f"{zone_id} (set identifiers {identifiers})."
        )
    found = f"{zone_id}_{record_name}_{record_type}"
    return Found(found, found, {"fqdn": record_name})
