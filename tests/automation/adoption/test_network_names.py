"""The Name another tool gave each part of the cluster's VPC, told apart by what it is."""

from __future__ import annotations

import copy
from typing import Any

from automation.adoption.network_names import network_names
from automation.aws.clients import AwsAccess, AwsClients
from components.contract.loading import load_stack_file
from tests.support.kops_world import LOCAL
from tests.support.moto_fixtures import MotoServer

ZONES = ("us-west-2a", "us-west-2b")
REGION = "us-west-2"


def _ec2(moto: MotoServer) -> Any:
    import boto3

    return boto3.client("ec2", region_name=REGION, endpoint_url=moto.endpoint_url)


def _named(name: str, kind: str) -> list[dict[str, Any]]:
    return [{"ResourceType": kind, "Tags": [{"Key": "Name", "Value": name}]}]


def _terraform_vpc(ec2: Any) -> dict[str, Any]:
    """The local stack's network as a Terraform module names it, a NAT gateway per zone."""
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16", TagSpecifications=_named("main", "vpc"))["Vpc"]
    igw = ec2.create_internet_gateway(TagSpecifications=_named("main-igw", "internet-gateway"))
    ec2.attach_internet_gateway(
        InternetGatewayId=igw["InternetGateway"]["InternetGatewayId"], VpcId=vpc["VpcId"]
    )
    public_table = ec2.create_route_table(
        VpcId=vpc["VpcId"], TagSpecifications=_named("main-public", "route-table")
    )["RouteTable"]["RouteTableId"]
    for zone, public, private in zip(
        ZONES, ("10.0.0.0/20", "10.0.16.0/20"), ("10.0.64.0/19", "10.0.96.0/19"), strict=True
    ):
        letter = zone[-1]
        subnets = {}
        for side, cidr in (("public", public), ("private", private)):
            subnets[side] = ec2.create_subnet(
                VpcId=vpc["VpcId"], CidrBlock=cidr, AvailabilityZone=zone,
                TagSpecifications=_named(f"main-{side}-{letter}", "subnet"),
            )["Subnet"]["SubnetId"]  # fmt: skip
        ec2.associate_route_table(RouteTableId=public_table, SubnetId=subnets["public"])
        address = ec2.allocate_address(
            Domain="vpc", TagSpecifications=_named(f"main-nat-{letter}", "elastic-ip")
        )
        ec2.create_nat_gateway(
            SubnetId=subnets["public"], AllocationId=address["AllocationId"],
            TagSpecifications=_named(f"main-{letter}", "natgateway"),
        )  # fmt: skip
        table = ec2.create_route_table(
            VpcId=vpc["VpcId"], TagSpecifications=_named(f"main-private-{letter}", "route-table")
        )["RouteTable"]["RouteTableId"]
        ec2.associate_route_table(RouteTableId=table, SubnetId=subnets["private"])
    return dict(vpc)


def test_each_part_is_found_by_what_it_is_and_keeps_its_name(moto: MotoServer) -> None:
    moto.reset()
    values = copy.deepcopy(load_stack_file(LOCAL))
    values["kubeshift:cluster"]["network"]["single_nat_gateway"] = False
    vpc = _terraform_vpc(_ec2(moto))
    clients = AwsClients(AwsAccess(region=REGION))
    names = network_names(values, clients, vpc)
    network = "local-demo-source-network"
    assert {name: kept["Name"] for name, kept in names.items()} == {
        f"{network}-vpc": "main",
        f"{network}-igw": "main-igw",
        f"{network}-public-rt": "main-public",
        **{
            f"{network}-{part}-{zone}": f"main-{kind}-{zone[-1]}"
            for zone in ZONES
            for part, kind in (("public", "public"), ("private", "private"), ("nat-eip", "nat"))
        },
        **{f"{network}-nat-{zone}": f"main-{zone[-1]}" for zone in ZONES},
        **{f"{network}-private-rt-{zone}": f"main-private-{zone[-1]}" for zone in ZONES},
    }


def test_a_part_whose_name_is_kubeshifts_already_is_left_out(moto: MotoServer) -> None:
    moto.reset()
    values = copy.deepcopy(load_stack_file(LOCAL))
    vpc = _ec2(moto).create_vpc(
        CidrBlock="10.0.0.0/16", TagSpecifications=_named("local-demo-source", "vpc")
    )["Vpc"]
    clients = AwsClients(AwsAccess(region=REGION))
    assert network_names(values, clients, dict(vpc)) == {}
