"""Where moto's Route53 differs from AWS's and kubeshift's DNS moves would notice,
closed by patching its in-process model (as ``moto_gaps`` does for EC2 and ELB).

- **CREATE refuses a record set that exists.** AWS refuses the whole batch
  (``InvalidChangeBatch``: "Tried to create resource record set [name=..., type=...]
  but it already exists") when a CREATE names the name, type and set identifier of a
  record set the zone holds at that point of the batch (a DELETE earlier in it frees
  the name). moto 5.2.5 checks only a CREATE identical to one it journaled before, and
  then against any record at or after the name in the zone's order: a record someone
  else created is silently doubled, while re-creating a record deleted earlier fails
  whenever a later record exists.
- **A CNAME stands alone at its name.** AWS refuses a change that would leave a CNAME
  beside any other record set of the same name (``InvalidChangeBatch``: "RRSet of type
  CNAME with DNS name ... is not permitted as it conflicts with other records with the
  same DNS name"; RFC 1034 §3.6.2, RFC 1912 §2.4), checked change by change as a batch
  is applied, so an A record can become a CNAME in one batch only by deleting the A
  first. moto keeps both.
- **A hosted zone's id is 'Z' then upper-case letters and digits.** AWS's ids look like
  ``Z1D633PJN98FT9`` or ``Z0123456789ABCDEFGHIJ``, and kubeshift's stack check takes no
  other; moto draws 22 upper-case letters and digits, most not starting with Z.
"""

from __future__ import annotations

import functools
from typing import Any


def _key(record_set: dict[str, Any]) -> tuple[str, str, str | None]:
    return (
        str(record_set["Name"]).rstrip(".").lower(),
        str(record_set["Type"]),
        record_set.get("SetIdentifier"),
    )


def creates_refuse_existing_record_sets() -> None:
    """CREATE fails on a record set the zone holds, as on AWS, and only then. Idempotent."""
    from moto.route53.exceptions import ResourceRecordAlreadyExists
    from moto.route53.models import Route53Backend

    current = Route53Backend.change_resource_record_sets
    if getattr(current, "_kubeshift_creates", False):
        return

    @functools.wraps(current)
    def change_resource_record_sets(self: Any, zoneid: str, change_list: list[dict]) -> None:
        zone = self.get_hosted_zone(zoneid)
        held = {
            _key({"Name": r.name, "Type": r.type, "SetIdentifier": r.set_identifier})
            for r in zone.rrsets
        }
        for change in change_list:
            record_set = change["ResourceRecordSet"]
            key = _key(record_set)
            if change["Action"] == "DELETE":
                held.discard(key)
            elif change["Action"] == "CREATE" and key in held:
                raise ResourceRecordAlreadyExists(name=key[0] + ".", _type=key[1])
            else:
                _refuse_beside_a_cname(held, key, zone.name)
                held.add(key)
        # Past the check above a CREATE names a free record set, where moto's UPSERT
        # adds it as CREATE would, without moto's own (misfiring) check; the journal
        # keeps each change's own action.
        sent = [{**c, "Action": "UPSERT" if c["Action"] == "CREATE" else c["Action"]}
                for c in change_list]  # fmt: skip
        journaled = len(zone.rr_changes)
        current(self, zoneid, sent)
        for entry, change in zip(zone.rr_changes[journaled:], change_list, strict=True):
            entry["Action"] = change["Action"]

    change_resource_record_sets._kubeshift_creates = True  # type: ignore[attr-defined]
    Route53Backend.change_resource_record_sets = change_resource_record_sets  # type: ignore[method-assign]


def _refuse_beside_a_cname(
    held: set[tuple[str, str, str | None]], key: tuple[str, str, str | None], zone: str
) -> None:
    """Route53's refusal of a record set that would share its name with a CNAME."""
    from moto.route53.exceptions import Route53ClientError

    name, kind, _ = key
    others = sorted({t for n, t, _ in held if n == name and (t == "CNAME") != (kind == "CNAME")})
    if kind == "CNAME" and others:
        raise Route53ClientError(
            "InvalidChangeBatch",
            f"RRSet of type CNAME with DNS name {name}. is not permitted as it conflicts "
            f"with other records with the same DNS name in zone {zone.rstrip('.')}.",
        )
    if kind != "CNAME" and "CNAME" in others:
        raise Route53ClientError(
            "InvalidChangeBatch",
            f"RRSet of type {kind} with DNS name {name}. is not permitted because a "
            f"conflicting RRSet of type CNAME with the same DNS name already exists in zone "
            f"{zone.rstrip('.')}.",
        )


def aws_shaped_zone_ids() -> None:
    """New hosted zones get ids as AWS's look: 'Z' and 20 upper-case letters or digits.
    An id moto already gives starting with Z (a custom one too) is kept. Idempotent."""
    from moto.route53.models import HostedZoneIdentifier

    current = HostedZoneIdentifier.generate
    if getattr(current, "_kubeshift_zone_ids", False):
        return

    @functools.wraps(current)
    def generate(self: Any, existing_ids: Any = None, tags: Any = None) -> str:
        made = current(self, existing_ids=existing_ids, tags=tags)
        taken = set(existing_ids or ())
        while not made.startswith("Z") and "Z" + made[:20] in taken:
            made = current(self, existing_ids=existing_ids, tags=tags)
        return made if made.startswith("Z") else "Z" + made[:20]

    generate._kubeshift_zone_ids = True  # type: ignore[attr-defined]
    HostedZoneIdentifier.generate = generate  # type: ignore[method-assign]


def close_route53_gaps() -> None:
    """Apply every patch above. Idempotent."""
    creates_refuse_existing_record_sets()
    aws_shaped_zone_ids()
