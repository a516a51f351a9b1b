"""Route53 records kubeshift switches during a migration: CNAMEs (or, for the API as
kops makes it, alias A records) to load balancers, or A records to fixed member
addresses.

A record that changes type (the API record goes CNAME -> A -> CNAME during the
control-plane move) is updated in place: the provider sends Route53 one change batch
that deletes the old set and creates the new one, so the name never resolves to
nothing. Only a change of name or zone replaces a record, and then the new record
(another name, or another zone) cannot clash with the old one, so Pulumi's default
order holds: the new record exists before the old one is deleted. Deleting first
would leave the old name unanswered for the length of the replacement.
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
            if (spec.type == "CNAME" or spec.alias_zone_id is not None) and len(
                spec.records
            ) != 1:
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
