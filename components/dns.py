"""Route53 records kubeshift switches during a migration: CNAMEs (or, for the API as
kops makes it, alias A records) from one load balancer to another.

No record kubeshift manages changes its type. pulumi-aws's handling of a ``type``
change is not certain: terraform-provider-aws forced a replacement on it until
hashicorp/terraform-provider-aws#47105 made it one in-place change batch, and a
replacement creates the new set first, which Route53 refuses while the old one still
holds the name (a CNAME shares its name with nothing, RFC 1034 section 3.6.2). A
record only changes its target, in place. Only a change of name or zone replaces a
record, and then the new record cannot clash with the old one, so Pulumi's default
order holds: the new record exists before the old one is deleted.
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
    """Values: one LB DNS name (a CNAME's target, or the load balancer an alias names)."""
    alias_zone_id: pulumi.Input[str] | None = None
    """Set: an A record aliased to the load balancer ``records[0]`` names, whose
    canonical hosted zone this is (Route53 answers its addresses; no TTL)."""


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
        for key, spec in args.records.items():
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
                opts=pulumi.ResourceOptions(parent=self),
            )
            self.fqdns[key] = record.fqdn
        self.register_outputs({"fqdns": self.fqdns})
