"""The cluster's VPC for a private topology, as kops and a Terraform VPC module build
it: per zone a private subnet and a public (kops: ``utility``) one, an internet gateway,
NAT gateways in the public subnets (their addresses named alike), one public route table
and a private one per zone, each named as the tool names it
(:meth:`~.model.WorldCluster.network_name`; kops: ``<zone>.<cluster domain>``,
``utility-<zone>.<…>``, ``<cluster domain>``, ``private-<zone>.<…>``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from automation.sandbox.provider.model import Aws
from automation.sandbox.world.model import Built, WorldCluster, tag_spec

ANYWHERE = "0.0.0.0/0"


@dataclass
class Network:
    """What :func:`build_network` made."""

    vpc_id: str = ""
    private: dict[str, str] = field(default_factory=dict)
    """Private subnet id per zone."""
    public: dict[str, str] = field(default_factory=dict)
    """Utility (public) subnet id per zone."""
    built: list[Built] = field(default_factory=list)

    def note(self, kind: str, name: str, id_: str) -> str:
        self.built.append(Built(kind, name, id_))
        return id_


def build_network(aws: Aws, cluster: WorldCluster) -> Network:
    ec2, spec, named = aws.ec2, cluster.spec.network, cluster.network_name
    made = Network()
    vpc_name = named("vpc")
    tagged = _tags("vpc", cluster, vpc_name)
    vpc = ec2.create_vpc(CidrBlock=str(spec.cidr), TagSpecifications=tagged)
    made.vpc_id = made.note("ec2:vpc", vpc_name, vpc["Vpc"]["VpcId"])
    for attribute in ("EnableDnsSupport", "EnableDnsHostnames"):
        ec2.modify_vpc_attribute(VpcId=made.vpc_id, **{attribute: {"Value": True}})
    subnets = zip(cluster.zones, spec.public_subnets, spec.private_subnets, strict=True)
    for zone, public, private in subnets:
        for kind, cidr, name, role in (
            ("Public", public, named("public", zone), "kubernetes.io/role/elb"),
            ("Private", private, named("private", zone), "kubernetes.io/role/internal-elb"),
        ):
            tags = cluster.tags(name, SubnetType=kind, **{role: "1"})
            tags[f"kubernetes.io/cluster/{cluster.owner}"] = "shared"  # others may use it
            subnet = ec2.create_subnet(
                VpcId=made.vpc_id, CidrBlock=str(cidr), AvailabilityZone=zone,
                TagSpecifications=tag_spec("subnet", tags),
            )["Subnet"]  # fmt: skip
            side = made.public if kind == "Public" else made.private
            side[zone] = made.note("ec2:subnet", name, subnet["SubnetId"])

    public_table = _table(aws, cluster, made, named("public-table"))
    if spec.enable_internet_gateway:
        made_igw = ec2.create_internet_gateway(
            TagSpecifications=_tags("internet-gateway", cluster, vpc_name)
        )["InternetGateway"]
        gateway = made.note("ec2:internet-gateway", vpc_name, made_igw["InternetGatewayId"])
        ec2.attach_internet_gateway(InternetGatewayId=gateway, VpcId=made.vpc_id)
        ec2.create_route(
            RouteTableId=public_table, DestinationCidrBlock=ANYWHERE, GatewayId=gateway
        )
    for zone in cluster.zones:
        ec2.associate_route_table(RouteTableId=public_table, SubnetId=made.public[zone])

    nats = {zone: _nat(aws, cluster, made, zone) for zone in cluster.nat_zones}
    for zone in cluster.zones:
        table = _table(aws, cluster, made, named("private-table", zone))
        nat = nats.get(zone) or next(iter(nats.values()), None)
        if nat:
            ec2.create_route(RouteTableId=table, DestinationCidrBlock=ANYWHERE, NatGatewayId=nat)
        ec2.associate_route_table(RouteTableId=table, SubnetId=made.private[zone])
    return made


def _tags(resource_type: str, cluster: WorldCluster, name: str) -> list[dict[str, object]]:
    return tag_spec(resource_type, cluster.tags(name))


def _nat(aws: Aws, cluster: WorldCluster, made: Network, zone: str) -> str:
    """The zone's NAT gateway, in its utility subnet, and its address."""
    name = cluster.network_name("nat", zone)
    address = aws.ec2.allocate_address(
        Domain="vpc", TagSpecifications=_tags("elastic-ip", cluster, name)
    )
    made.note("ec2:elastic-ip", name, address["AllocationId"])
    nat = aws.ec2.create_nat_gateway(
        SubnetId=made.public[zone], AllocationId=address["AllocationId"],
        ConnectivityType="public", TagSpecifications=_tags("natgateway", cluster, name),
    )["NatGateway"]  # fmt: skip
    aws.ec2.get_waiter("nat_gateway_available").wait(NatGatewayIds=[nat["NatGatewayId"]])
    return made.note("ec2:nat-gateway", name, nat["NatGatewayId"])


def _table(aws: Aws, cluster: WorldCluster, made: Network, name: str) -> str:
    table = aws.ec2.create_route_table(
        VpcId=made.vpc_id, TagSpecifications=_tags("route-table", cluster, name)
    )
    return made.note("ec2:route-table", name, table["RouteTable"]["RouteTableId"])
