"""Route53 records kubeshift switches during a migration: CNAMEs (or, for the API as
kops makes it, alias A records) to load balancers, or A records to fixed member
addresses.

No record kubeshift manages changes its type. pulumi-aws's handling of a ``type``
change is not certain: terraform-provider-aws forced a replacement on it until
hashicorp/terraform-provider-aws#47105 made it one in-place change batch, and a
replacement creates the new set first, which Route53 refuses while the old one still
holds the name (a CNAME shares its name with nothing, RFC 1034 section 3.6.2). So the
API record of a CNAME cluster stays a CNAME while it points at the first moved member:
it names a helper A record that holds the member's address (``after``), made before
it and kept until clean-up, long after the record has moved on (a resolver that cached
the CNAME still finds the helper). An alias A record becomes a plain A
record and back, in place. Only a change of name or zone replaces a record, and then
the new record cannot clash with the old one, so Pulumi's default order holds: the new
record exists before the old one is deleted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import pulumi
import pulumi_aws as aws


@dataclass(frozen=True)
class RecordSpec:
    """One record: its DNS name, type and values (LB DNS names or addresses)."""

    name: str
    type: Literal["CNAME", "A"]
    records: list[pulumi.Input[str]]
    """Values: one LB DNS name for a CNAME or an alias, member addresses for an A record."""
    alias_zone_id: pulumi.Input[str] | None = None
    """Set: an A record aliased to the load balancer ``records[0]`` names, whose
    canonical hosted zone this is (Route53 answers its addresses; no TTL)."""
    after: tuple[str, ...] = ()
    """Keys of records of the same :class:`Dns` this one resolves through: they exist
    before it changes (and go only after it has moved away)."""


@dataclass(frozen=True)
class DnsArgs:
    """Inputs of :class:`Dns`."""

    zone_id: pulumi.Input[str]
    """Hosted zone holding every record."""
    records: Mapping[str, RecordSpec]
    """Records by a stable key (``api``, ``ingress-0``...): the key names the resource."""
    ttl: int = 60
    """TTL of every record, seconds."""


class Dns(pulumi.ComponentResource):
    """The managed records of one hosted zone."""

    fqdns: dict[str, pulumi.Output[str]]

    def __init__(
        self, name: str, args: DnsArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("kubeshift:dns:Dns", name, None, opts)
        self.fqdns = {}
        made: dict[str, aws.route53.Record] = {}
        for key, spec in sorted(args.records.items(), key=lambda item: bool(item[1].after)):
            if (spec.type == "CNAME" or spec.alias_zone_id is not None) and len(spec.records) != 1:
                raise ValueError(f"{spec.type} {spec.name} needs exactly one target")
            aliases = (
                None
                if spec.alias_zone_id is None
                else [
                    aws.route53.RecordAliasArgs(
                        name=spec.records[0],
                        zone_id=spec.alias_zone_id,
                        evaluate_target_health=False,
                    )
                ]
            )
            record = aws.route53.Record(
                f"{name}-{key}",
                zone_id=args.zone_id,
                name=spec.name,
                type=spec.type,
                ttl=None if aliases else args.ttl,
                records=None if aliases else spec.records,
                aliases=aliases,
                opts=pulumi.ResourceOptions(
                    parent=self, depends_on=[made[after] for after in spec.after]
                ),
            )
            made[key] = record
            self.fqdns[key] = record.fqdn
        self.register_outputs({"fqdns": self.fqdns})
