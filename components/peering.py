"""VPC peering between the source and target networks of a migration.

Nodes in both VPCs must reach each other (pods, kubelets, etcd) for the whole move,
so the peering adds a route to the peer CIDR in EVERY route table on both sides, and
enables DNS resolution across the peering so private names resolve to private IPs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from components.contract.tags import merge_tags


@dataclass(frozen=True)
class PeeringArgs:
    """Inputs of :class:`Peering`: the requester (source) and accepter (target) sides."""

    requester_vpc_id: pulumi.Input[str]
    requester_cidr: str
    requester_route_table_ids: Mapping[str, pulumi.Input[str]]
    """Every route table of the requester VPC, by a stable key."""
    accepter_vpc_id: pulumi.Input[str]
    accepter_cidr: str
    accepter_route_table_ids: Mapping[str, pulumi.Input[str]]
    """Every route table of the accepter VPC, by a stable key."""
    name_tag: str
    """``Name`` tag of the connection (and its accepter)."""
    peer_region: str | None = None
    """Region of the accepter VPC when it differs from the provider's."""
    allow_remote_dns_resolution: bool = True
    """Private names of each VPC resolve to private addresses from the other."""
    tags: dict[str, str] = field(default_factory=dict)


class Peering(pulumi.ComponentResource):
    """Peering connection, its acceptance, DNS options and routes in every table."""

    connection_id: pulumi.Output[str]
    route_count: int

    def __init__(
        self, name: str, args: PeeringArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("kubeshift:network:Peering", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        # One account, one region: the connection and its accepter are the same AWS
        # object, so they carry the same tags. Different tags on the two would fight,
        # the last writer winning, and every refresh would report drift.
        tags = merge_tags(args.tags, {"Name": args.name_tag})
        connection = aws.ec2.VpcPeeringConnection(
            f"{name}-connection",
            vpc_id=args.requester_vpc_id,
            peer_vpc_id=args.accepter_vpc_id,
            peer_region=args.peer_region,
            auto_accept=False,
            tags=tags,
            opts=child,
        )
        accepter = aws.ec2.VpcPeeringConnectionAccepter(
            f"{name}-accepter",
            vpc_peering_connection_id=connection.id,
            auto_accept=True,
            tags=tags,
            opts=child,
        )
        self.connection_id = accepter.vpc_peering_connection_id
        if args.allow_remote_dns_resolution:
            aws.ec2.PeeringConnectionOptions(
                f"{name}-options",
                vpc_peering_connection_id=accepter.vpc_peering_connection_id,
                requester={"allow_remote_vpc_dns_resolution": True},
                accepter={"allow_remote_vpc_dns_resolution": True},
                opts=child,
            )
        routes = 0
        sides = (
            ("requester", args.requester_route_table_ids, args.accepter_cidr),
            ("accepter", args.accepter_route_table_ids, args.requester_cidr),
        )
        for side, table_ids, peer_cidr in sides:
            for key, table_id in table_ids.items():
                aws.ec2.Route(
                    f"{name}-{side}-route-{key}",
                    route_table_id=table_id,
                    destination_cidr_block=peer_cidr,
                    vpc_peering_connection_id=accepter.vpc_peering_connection_id,
                    opts=child,
                )
                routes += 1
        self.route_count = routes
        self.register_outputs({"connection_id": self.connection_id})
