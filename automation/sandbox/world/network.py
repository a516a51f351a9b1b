"""The cluster's VPC as kops builds it for a private topology: per zone a private
subnet (``<zone>.<cluster domain>``) and a public ``utility-<zone>`` subnet, an internet
gateway, NAT gateways in the utility subnets, one public route table and a private one
per zone."""

from __future__ import annotations

from dataclasses import dataclass, field

from automation.sandbox.provider.model import Aws
from automation.sandbox.world.model import Built, KopsCluster, tag_spec


@dataclass
class Network:
    vpc_id: str = ""
    private: dict[str, str] = field(default_factory=dict)
    """Private subnet id per zone."""
    public: dict[str, str] = field(default_factory=dict)
    built: list[Built] = field(default_factory=list)


def build_network(aws: Aws, cluster: KopsCluster) -> Network:
    ec2, dns, spec = aws.ec2, cluster.domain, cluster.spec.network
    made = Network()

    def note(kind: str, name: str, id_: str) -> str:
        made.built.append(Built(kind, name, id_))
        return id_

    vpc = ec2.create_vpc(CidrBlock=str(spec.cidr), TagSpecifications=tag_spec("vpc", cluster.tags(dns)))
    made.vpc_id = note("ec2:vpc", dns, vpc["Vpc"]["VpcId"])
    for attribute in ("EnableDnsSupport", "EnableDnsHostnames"):
        ec2.modify_vpc_attribute(VpcId=made.vpc_id, **{attribute: {"Value": True}})
    for zone, public, private in zip(cluster.zones, spec.public_subnets, spec.private_subnets):
        for kind, cidr, name, extra in (
            ("Public", public, f"utility-{zone}.{dns}", {"kubernetes.io/role/elb": "1"}),
            ("Private", private, f"{zone}.{dns}", {"kubernetes.io/role/internal-elb": "1"}),
        ):
            tags = cluster.tags(name, SubnetType=kind, **extra)
            tags[f"kubernetes.io/cluster/{cluster.name}"] = "shared"
            subnet = ec2.create_subnet(
                VpcId=made.vpc_id, CidrBlock=str(cidr), AvailabilityZone=zone,
                TagSpecifications=tag_spec("subnet", tags),
            )["Subnet"]  # fmt: skip
            side = made.public if kind == "Public" else made.private
            side[zone] = note("ec2:subnet", name, subnet["SubnetId"])

    gateway = None
    if spec.enable_internet_gateway:
        igw = ec2.create_internet_gateway(TagSpecifications=tag_spec("internet-gateway", cluster.tags(dns)))
        gateway = note("ec2:internet-gateway", dns, igw["InternetGateway"]["InternetGatewayId"])
        ec2.attach_internet_gateway(InternetGatewayId=gateway, VpcId=made.vpc_id)
    public_table = _table(aws, cluster, made, dns, note)
    if gateway:
        ec2.create_route(RouteTableId=public_table, DestinationCidrBlock="0.0.0.0/0", GatewayId=gateway)
    for zone in cluster.zones:
        ec2.associate_route_table(RouteTableId=public_table, SubnetId=made.public[zone])

    nats = {}
    for zone in cluster.nat_zones:
        name = f"{zone}.{dns}"
        address = ec2.allocate_address(Domain="vpc", TagSpecifications=tag_spec("elastic-ip", cluster.tags(name)))
        note("ec2:elastic-ip", name, address["AllocationId"])
        nat = ec2.create_nat_gateway(
            SubnetId=made.public[zone], AllocationId=address["AllocationId"],
            ConnectivityType="public", TagSpecifications=tag_spec("natgateway", cluster.tags(name)),
        )["NatGateway"]  # fmt: skip
        nats[zone] = note("ec2:nat-gateway", name, nat["NatGatewayId"])
        ec2.get_waiter("nat_gateway_available").wait(NatGatewayIds=[nats[zone]])
    for zone in cluster.zones:
        table = _table(aws, cluster, made, f"private-{zone}.{dns}", note)
        nat_id = nats.get(zone) or next(iter(nats.values()), None)
        if nat_id:
            ec2.create_route(RouteTableId=table, DestinationCidrBlock="0.0.0.0/0", NatGatewayId=nat_id)
        ec2.associate_route_table(RouteTableId=table, SubnetId=made.private[zone])
    return made


def _table(aws: Aws, cluster: KopsCluster, made: Network, name: str, note) -> str:  # type: ignore[no-untyped-def]
    table = aws.ec2.create_route_table(
        VpcId=made.vpc_id, TagSpecifications=tag_spec("route-table", cluster.tags(name))
    )
    return note("ec2:route-table", name, table["RouteTable"]["RouteTableId"])
