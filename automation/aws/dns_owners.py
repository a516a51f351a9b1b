"""Who owns a Route53 record: external-dns' TXT ownership records, read from the zone.

external-dns writes, beside each record it manages, a TXT record whose value reads
``"heritage=external-dns,external-dns/owner=<owner id>,..."``. Its name is the
record's own, or (since v0.12) the record's with its type as a prefix label
(``a-www.example.com``, ``cname-www.example.com``), or with a user's ``--txt-prefix``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from automation.core.errors import from_client_error

if TYPE_CHECKING:
    from mypy_boto3_route53 import Route53Client

HERITAGE = "heritage=external-dns"
_TYPE_PREFIXES = ("a-", "aaaa-", "cname-", "ns-", "mx-", "txt-", "srv-", "ptr-")


def txt_owners(route53: Route53Client, zone_id: str) -> dict[str, str]:
    """Record name (no trailing dot, lower case) -> the external-dns owner id of it."""
    owners: dict[str, str] = {}
    try:
        pages = route53.get_paginator("list_resource_record_sets").paginate(HostedZoneId=zone_id)
        for page in pages:
            for rr in page.get("ResourceRecordSets", []):
                if rr.get("Type") != "TXT":
                    continue
                for value in (r.get("Value", "") for r in rr.get("ResourceRecords", [])):
                    owner = _owner(value)
                    if owner is not None:
                        for name in owned_names(rr["Name"]):
                            owners[name] = owner
    except ClientError as exc:
        raise from_client_error(exc, f"list the records of hosted zone {zone_id}") from exc
    return owners


def _owner(value: str) -> str | None:
    text = value.strip().strip('"')
    if HERITAGE not in text:
        return None
    for part in text.split(","):
        if part.startswith("external-dns/owner="):
            return part.split("=", 1)[1]
    return "default"


def owned_names(txt_name: str) -> set[str]:
    """The record names a TXT ownership record at ``txt_name`` may stand for."""
    name = txt_name.rstrip(".").lower().replace("\\052", "*")
    names = {name}
    first, _, rest = name.partition(".")
    for prefix in _TYPE_PREFIXES:
        if first.startswith(prefix) and rest:
            names.add(f"{first[len(prefix) :]}.{rest}")
    return names
