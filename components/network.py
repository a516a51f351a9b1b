"""One VPC with a public and a private subnet per AZ, their route tables and gateways.

Both sides of a vpc-move are this component: the source network (baseline) and the
target network (from the ``target-network`` phase). It exposes every route table id so
the peering component can add a route to the peer CIDR in each of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from components.contract.tags import merge_tags, without_cluster_tags


@dataclass(frozen=True)
class NetworkArgs:
    """Inputs of :class:`Network`. Subnet lists are in the order of ``azs``."""

    cidr: str
    """VPC CIDR block, e.g. ``10.0.0.0/16``."""
    azs: list[str]
    """Availability zones; one public and one private subnet in each."""
    public_subnet_cidrs: list[str]
    private_subnet_cidrs: list[str]
    cluster_name: str
    """Used for the ``kubernetes.io/cluster/<name>`` subnet tags (LB discovery)."""
    name_tag: str
    """``Name`` tag prefix of the VPC and its parts."""
    enable_internet_gateway: bool = True
    enable_nat_gateway: bool = True
    """NAT gateways for the private subnets (needs the internet gateway)."""
    single_nat_gateway: bool = False
    """One NAT gateway, in the first AZ, for every private subnet."""
    shared_node_route_table: bool = False
    """One private route table for every private subnet, the only table tagged for the
    cluster: the AWS cloud-controller-manager writes native pod routes to exactly one
    table and refuses a cluster with several (overlay-switch, from ``routes``)."""
    tags: dict[str, str] = field(default_factory=dict)


class Network(pulumi.ComponentResource):
    """VPC, subnets per AZ, one public route table, one private route table per AZ."""

    vpc_id: pulumi.Output[str]
    cidr: str
    public_subnet_ids: dict[str, pulumi.Output[str]]
    private_subnet_ids: dict[str, pulumi.Output[str]]
    route_table_ids: dict[str, pulumi.Output[str]]
    """Every route table of the network by a stable key: ``public``, ``private-<az>``."""

    def __init__(
        self, name: str, args: NetworkArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("kubeshift:network:Network", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        tag = args.name_tag

        def tags(suffix: str, extra: dict[str, str] | None = None) -> dict[str, str]:
            return merge_tags(args.tags, {"Name": f"{tag}-{suffix}"}, extra)

        vpc = aws.ec2.Vpc(
            f"{name}-vpc",
            cidr_block=args.cidr,
            enable_dns_support=True,
            enable_dns_hostnames=True,
            tags=merge_tags(args.tags, {"Name": tag}),
            opts=child,
        )
        self.vpc_id = vpc.id
        self.cidr = args.cidr

        cluster_tag = {f"kubernetes.io/cluster/{args.cluster_name}": "shared"}
        self.public_subnet_ids = {}
        self.private_subnet_ids = {}
        public_subnets: list[aws.ec2.Subnet] = []
        for az, public_cidr, private_cidr in zip(
            args.azs, args.public_subnet_cidrs, args.private_subnet_cidrs, strict=True
        ):
            public = aws.ec2.Subnet(
                f"{name}-public-{az}",
                vpc_id=vpc.id,
                cidr_block=public_cidr,
                availability_zone=az,
                map_public_ip_on_launch=False,
                tags=tags(f"public-{az}", {**cluster_tag, "kubernetes.io/role/elb": "1"}),
                opts=child,
            )
            private = aws.ec2.Subnet(
                f"{name}-private-{az}",
                vpc_id=vpc.id,
                cidr_block=private_cidr,
                availability_zone=az,
                tags=tags(f"private-{az}", {**cluster_tag, "kubernetes.io/role/internal-elb": "1"}),
                opts=child,
            )
            public_subnets.append(public)
            self.public_subnet_ids[az] = public.id
            self.private_subnet_ids[az] = private.id

        # Route tables carry the cluster tag: a cloud provider managing native pod routes
        # (overlay-switch) only writes to tables tagged for its cluster. With a shared node
        # table only that one does (the per-AZ tables stay declared, unassociated, so the
        # switch deletes nothing). The AWS cloud provider counts the legacy
        # ``KubernetesCluster`` tag too, and refuses a cluster with several such tables.
        owned = {f"kubernetes.io/cluster/{args.cluster_name}": "owned"}

        def table_tags(suffix: str) -> dict[str, str]:
            if not args.shared_node_route_table:
                return tags(suffix, owned)
            return without_cluster_tags(tags(suffix), args.cluster_name)

        # The shared table is tagged before any other loses the tag: between, the
        # controller sees several tagged tables and writes nowhere. The other way round,
        # the last table still tagged (the public one, a per-AZ one) would for a moment
        # be the only one, and get every node's pod route.
        shared: aws.ec2.RouteTable | None = None
        untagged_after = child
        if args.shared_node_route_table:
            shared = aws.ec2.RouteTable(
                f"{name}-private-rt", vpc_id=vpc.id, tags=tags("private", owned), opts=child
            )
            untagged_after = pulumi.ResourceOptions.merge(
                child, pulumi.ResourceOptions(depends_on=[shared])
            )
        public_rt = aws.ec2.RouteTable(
            f"{name}-public-rt", vpc_id=vpc.id, tags=table_tags("public"), opts=untagged_after
        )
        self.route_table_ids = {"public": public_rt.id}
        for az, subnet in zip(args.azs, public_subnets, strict=True):
            aws.ec2.RouteTableAssociation(
                f"{name}-public-rta-{az}",
                subnet_id=subnet.id,
                route_table_id=public_rt.id,
                opts=child,
            )
        if args.enable_internet_gateway:
            igw = aws.ec2.InternetGateway(
                f"{name}-igw", vpc_id=vpc.id, tags=tags("igw"), opts=child
            )
            aws.ec2.Route(
                f"{name}-public-default",
                route_table_id=public_rt.id,
                destination_cidr_block="0.0.0.0/0",
                gateway_id=igw.id,
                opts=child,
            )

        nat_ids: dict[str, pulumi.Output[str]] = {}
        if args.enable_nat_gateway and args.enable_internet_gateway:
            nat_azs = args.azs[:1] if args.single_nat_gateway else args.azs
            for az, subnet in zip(nat_azs, public_subnets, strict=False):
                eip = aws.ec2.Eip(
                    f"{name}-nat-eip-{az}", domain="vpc", tags=tags(f"nat-{az}"), opts=child
                )
                nat = aws.ec2.NatGateway(
                    f"{name}-nat-{az}",
                    allocation_id=eip.allocation_id,
                    subnet_id=subnet.id,
                    connectivity_type="public",
                    tags=tags(f"nat-{az}"),
                    opts=child,
                )
                nat_ids[az] = nat.id

        if shared is not None:
            self.route_table_ids["private"] = shared.id
            self._default_route(f"{name}-private-default", shared, nat_ids, args.azs[0], child)
        for az in args.azs:
            rt = aws.ec2.RouteTable(
                f"{name}-private-rt-{az}",
                vpc_id=vpc.id,
                tags=table_tags(f"private-{az}"),
                opts=untagged_after,
            )
            self.route_table_ids[f"private-{az}"] = rt.id
            aws.ec2.RouteTableAssociation(
                f"{name}-private-rta-{az}",
                subnet_id=self.private_subnet_ids[az],
                route_table_id=(shared or rt).id,
                opts=child,
            )
            self._default_route(f"{name}-private-default-{az}", rt, nat_ids, az, child)

        self.register_outputs(
            {
                "vpc_id": self.vpc_id,
                "public_subnet_ids": self.public_subnet_ids,
                "private_subnet_ids": self.private_subnet_ids,
                "route_table_ids": self.route_table_ids,
            }
        )

    @staticmethod
    def _default_route(
        name: str,
        table: aws.ec2.RouteTable,
        nat_ids: dict[str, pulumi.Output[str]],
        az: str,
        opts: pulumi.ResourceOptions,
    ) -> None:
        """0.0.0.0/0 through the AZ's NAT gateway, else the first one (if any)."""
        nat_id = nat_ids.get(az) or next(iter(nat_ids.values()), None)
        if nat_id is not None:
            aws.ec2.Route(
                name,
                route_table_id=table.id,
                destination_cidr_block="0.0.0.0/0",
                nat_gateway_id=nat_id,
                opts=opts,
            )
