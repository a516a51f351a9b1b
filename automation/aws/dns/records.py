"""Route53 record sets: read, named, compared, described, and the batch between two states.

A record set is compared by name, type and set identifier (:func:`record_key`) and by
what it routes to (:func:`comparable`); :func:`transition` is the change batch turning
one state of a name into another, CREATE for what is new so that a record set someone
else made in between is refused, not overwritten. :func:`read_records` reads every
record set of a name, kept to the routing fields kubeshift moves and restores.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from botocore.exceptions import ClientError

from automation.core.errors import PreconditionFailed, from_client_error

if TYPE_CHECKING:
    from mypy_boto3_route53 import Route53Client
    from mypy_boto3_route53.type_defs import (
        ChangeTypeDef,
        ResourceRecordSetOutputTypeDef,
        ResourceRecordSetTypeDef,
        ResourceRecordSetUnionTypeDef,
    )

RecordSet: TypeAlias = "ResourceRecordSetTypeDef"


def canonical_name(name: str) -> str:
    return name.rstrip(".").lower() + "."


def request_name(name: str) -> str:
    # Route53 accepts both; moto only matches DELETEs against names sent without the dot.
    return name.rstrip(".")


def comparable(rr: RecordSet) -> tuple[Any, ...]:
    alias = rr.get("AliasTarget")
    values = tuple(
        sorted(
            v["Value"].rstrip(".").lower() if rr["Type"] == "CNAME" else v["Value"]
            for v in rr.get("ResourceRecords", [])
        )
    )
    alias_key = (
        (
            alias["DNSName"].rstrip(".").lower(),
            alias["HostedZoneId"],
            alias.get("EvaluateTargetHealth", False),
        )
        if alias
        else None
    )
    ttl = None if alias else rr.get("TTL")
    return (record_key(rr), rr.get("Weight"), ttl, values, alias_key)


def record_key(rr: RecordSet) -> tuple[str, str, str | None]:
    return (canonical_name(rr["Name"]), rr["Type"], rr.get("SetIdentifier"))


def describe_record(rr: ResourceRecordSetUnionTypeDef) -> str:
    """``api.example.com. CNAME old.lb [kubeshift-old w=90]`` — for reports and logs."""
    if alias := rr.get("AliasTarget"):
        value = f"alias {alias['DNSName'].rstrip('.')}"
    else:
        value = ",".join(v["Value"] for v in rr.get("ResourceRecords", []))
    extra = ""
    if rr.get("SetIdentifier") is not None:
        extra = f" [{rr['SetIdentifier']} w={rr.get('Weight')}]"
    return f"{canonical_name(rr['Name'])} {rr['Type']} {value}{extra}"


_ROUTING_FIELDS = (
    "SetIdentifier",
    "Weight",
    "TTL",
    "ResourceRecords",
    "AliasTarget",
    "HealthCheckId",
    "Region",
    "Failover",
    "GeoLocation",
    "MultiValueAnswer",
)


def _clean(rr: ResourceRecordSetOutputTypeDef) -> RecordSet:
    """A record set as read, made fit to send back (name without the trailing dot).

    Keeps the routing fields kubeshift moves and restores; drops the rest
    (traffic-policy ids, CIDR and geoproximity routing).
    """
    kept = {key: rr[key] for key in _ROUTING_FIELDS if key in rr}  # type: ignore[literal-required]
    # One cast instead of a copy per field: every key kept is a field of both shapes.
    return cast("RecordSet", {**kept, "Name": request_name(rr["Name"]), "Type": rr["Type"]})


def read_records(route53: Route53Client, zone_id: str, name: str) -> tuple[RecordSet, ...]:
    """Every record set named ``name`` in the zone (all types, all set identifiers).

    Uses the paginator, which follows ``NextRecordName``/``Type``/``Identifier`` — the
    last one matters inside large weighted or latency sets.
    """
    wanted = canonical_name(name)
    found: list[RecordSet] = []
    try:
        # The stubs leave the paginator's input tokens (StartRecordName/Type/Identifier)
        # out of paginate(); botocore sends them with the first request.
        pages = route53.get_paginator("list_resource_record_sets").paginate(
            HostedZoneId=zone_id,
            StartRecordName=request_name(name),  # type: ignore[call-arg]
        )
        for page in pages:
            records = page.get("ResourceRecordSets", [])
            found.extend(_clean(rr) for rr in records if canonical_name(rr["Name"]) == wanted)
            if any(canonical_name(rr["Name"]) != wanted for rr in records):
                break  # records come sorted by name: we are past ours
    except ClientError as exc:
        raise from_client_error(exc, f"read record {wanted}") from exc
    return tuple(found)


def transition(before: Sequence[RecordSet], after: Sequence[RecordSet]) -> list[ChangeTypeDef]:
    """The change batch turning record sets ``before`` into ``after`` (empty if equal).

    A record set ``before`` lacks is CREATEd: Route53 refuses the whole batch when one
    with its name, type and set identifier exists (``InvalidChangeBatch``, "Tried to
    create resource record set [...] but it already exists"; batches are all or
    nothing), so a record someone else made after ``before`` was read is refused, not
    overwritten. UPSERT, which overwrites whatever is there, is kept for the record sets
    ``before`` holds: those kubeshift read and means to replace. See
    https://docs.aws.amazon.com/Route53/latest/APIReference/API_Change.html and
    https://docs.aws.amazon.com/Route53/latest/APIReference/API_ChangeResourceRecordSets.html
    """
    old = {record_key(rr): rr for rr in before}
    new = {record_key(rr): rr for rr in after}
    changes: list[ChangeTypeDef] = [
        {"Action": "DELETE", "ResourceRecordSet": rr} for k, rr in old.items() if k not in new
    ]
    changes.extend(
        {"Action": "CREATE", "ResourceRecordSet": rr} for k, rr in new.items() if k not in old
    )
    changes.extend(
        {"Action": "UPSERT", "ResourceRecordSet": rr}
        for k, rr in new.items()
        if k in old and comparable(old[k]) != comparable(rr)
    )
    return changes


def conflicting(current: Sequence[RecordSet], record_type: str) -> tuple[RecordSet, ...]:
    """The current record sets a record of ``record_type`` replaces."""
    if record_type == "CNAME":
        clash = [rr for rr in current if rr["Type"] in {"CNAME", "A", "AAAA"}]
    else:
        clash = [rr for rr in current if rr["Type"] in {record_type, "CNAME"}]
    others = sorted({rr["Type"] for rr in current} - {rr["Type"] for rr in clash})
    if record_type == "CNAME" and others:
        raise PreconditionFailed(
            f"Record {canonical_name(current[0]['Name'])} also has {', '.join(others)} "
            "records, which a CNAME cannot coexist with; move or delete them first."
        )
    return tuple(clash)
