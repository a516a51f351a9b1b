"""Finding a VPC's live parts from what the program declares, on moto."""

from __future__ import annotations

from typing import Any

import pytest

from automation.aws.lookup import Ambiguous, Lookup, Missing, find
from tests.automation.aws.lookup.conftest import CLUSTER
from tests.support.moto_fixtures import MotoServer

TAG = f"kubernetes.io/cluster/{CLUSTER}"


def _vpc(ec2: Any, cidr: str, **tags: str) -> str:
    spec = [{"ResourceType": "vpc", "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}]
    return str(ec2.create_vpc(CidrBlock=cidr, TagSpecifications=spec)["Vpc"]["VpcId"])


def test_a_vpc_is_found_by_its_cidr_and_name_tag_among_others(
    moto: MotoServer, lookup: Lookup
) -> None:
    ec2 = moto.client("ec2")
    _vpc(ec2, "10.0.0.0/16", Name="someone-else")
    wanted = _vpc(ec2, "10.0.0.0/16", Name="shop-network", **{TAG: "owned"})

    found = find(lookup, "aws:ec2/vpc:Vpc", "net-vpc", {"cidrBlock": "10.0.0.0/16",
                                                         "tags": {"Name": "shop-network"}})

    assert found.id == wanted and found.import_id == wanted


def test_two_vpcs_tagged_for_the_cluster_are_ambiguous_and_named(
    moto: MotoServer, lookup: Lookup
) -> None:
    ec2 = moto.client("ec2")
    first = _vpc(ec2, "10.0.0.0/16", **{TAG: "owned"})
    second = _vpc(ec2, "10.0.0.0/16", **{TAG: "shared"})

    with pytest.raises(Ambiguous) as raised:
        find(lookup, "aws:ec2/vpc:Vpc", "net-vpc", {"cidrBlock": "10.0.0.0/16",
                                                     "tags": {"Name": "renamed"}})

    assert first in str(raised.value) and second in str(raised.value)
    assert str(raised.value).startswith("net-vpc: 2 live VPC 10.0.0.0/16")


def test_a_vpc_nobody_tagged_for_the_cluster_is_missing(moto: MotoServer, lookup: Lookup) -> None:
    _vpc(moto.client("ec2"), "10.0.0.0/16", Name="other")

    with pytest.raises(Missing, match=r"net-vpc: no live VPC 10.0.0.0/16"):
        find(lookup, "aws:ec2/vpc:Vpc", "net-vpc", {"cidrBlock": "10.0.0.0/16", "tags": {}})


def test_subnet_route_table_route_and_association_carry_the_importers_ids(
    moto: MotoServer, lookup: Lookup
) -> None:
    ec2 = moto.client("ec2")
    vpc = _vpc(ec2, "10.0.0.0/16", **{TAG: "owned"})
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.64.0/19")["Subnet"]["SubnetId"]
    table = ec2.create_route_table(
        VpcId=vpc,
        TagSpecifications=[{"ResourceType": "route-table",
                            "Tags": [{"Key": "Name", "Value": "shop-private"}]}],
    )["RouteTable"]["RouteTableId"]  # fmt: skip
    gateway = ec2.create_internet_gateway()["InternetGateway"]["InternetGatewayId"]
    ec2.attach_internet_gateway(InternetGatewayId=gateway, VpcId=vpc)
    ec2.create_route(RouteTableId=table, DestinationCidrBlock="0.0.0.0/0", GatewayId=gateway)
    association = ec2.associate_route_table(RouteTableId=table, SubnetId=subnet)["AssociationId"]

    assert find(lookup, "aws:ec2/subnet:Subnet", "s", {"vpcId": vpc, "cidrBlock": "10.0.64.0/19"}
                ).id == subnet  # fmt: skip
    assert find(lookup, "aws:ec2/internetGateway:InternetGateway", "igw", {"vpcId": vpc}
                ).id == gateway  # fmt: skip
    found_table = find(lookup, "aws:ec2/routeTable:RouteTable", "rt",
                       {"vpcId": vpc, "tags": {"Name": "shop-private"}})  # fmt: skip
    assert found_table.id == table
    route = find(lookup, "aws:ec2/route:Route", "default",
                 {"routeTableId": table, "destinationCidrBlock": "0.0.0.0/0"})  # fmt: skip
    assert route.import_id == f"{table}_0.0.0.0/0"
    rta = find(lookup, "aws:ec2/routeTableAssociation:RouteTableAssociation", "rta",
               {"subnetId": subnet, "routeTableId": table})  # fmt: skip
    assert (rta.id, rta.import_id) == (association, f"{subnet}/{table}")


def test_a_route_the_table_lacks_is_missing(moto: MotoServer, lookup: Lookup) -> None:
    ec2 = moto.client("ec2")
    vpc = _vpc(ec2, "10.0.0.0/16")
    table = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]

    with pytest.raises(Missing, match=f"no live route to 0.0.0.0/0 in {table}"):
        find(lookup, "aws:ec2/route:Route", "default",
             {"routeTableId": table, "destinationCidrBlock": "0.0.0.0/0"})  # fmt: skip


def test_an_address_and_the_nat_gateway_holding_it(moto: MotoServer, lookup: Lookup) -> None:
    ec2 = moto.client("ec2")
    vpc = _vpc(ec2, "10.0.0.0/16")
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.0.0/20")["Subnet"]["SubnetId"]
    allocation = ec2.allocate_address(
        Domain="vpc",
        TagSpecifications=[{"ResourceType": "elastic-ip",
                            "Tags": [{"Key": "Name", "Value": "shop-nat-a"}]}],
    )["AllocationId"]  # fmt: skip
    nat = ec2.create_nat_gateway(SubnetId=subnet, AllocationId=allocation)["NatGateway"]

    address = find(lookup, "aws:ec2/eip:Eip", "eip", {"tags": {"Name": "shop-nat-a"}})
    assert address.outputs["allocationId"] == allocation
    gateway = find(lookup, "aws:ec2/natGateway:NatGateway", "nat",
                   {"subnetId": subnet, "allocationId": allocation})  # fmt: skip
    assert gateway.id == nat["NatGatewayId"]


def test_a_peering_is_found_between_its_vpcs_and_a_deleted_one_is_not(
    moto: MotoServer, lookup: Lookup
) -> None:
    ec2 = moto.client("ec2")
    source, target = _vpc(ec2, "10.0.0.0/16"), _vpc(ec2, "10.20.0.0/16")
    token = "aws:ec2/vpcPeeringConnection:VpcPeeringConnection"
    declared = {"vpcId": source, "peerVpcId": target}
    with pytest.raises(Missing, match=f"no live VPC peering from {source} to {target}"):
        find(lookup, token, "peering", declared)
    gone = ec2.create_vpc_peering_connection(VpcId=source, PeerVpcId=target)
    ec2.delete_vpc_peering_connection(
        VpcPeeringConnectionId=gone["VpcPeeringConnection"]["VpcPeeringConnectionId"]
    )
    made = ec2.create_vpc_peering_connection(VpcId=source, PeerVpcId=target)
    wanted = made["VpcPeeringConnection"]["VpcPeeringConnectionId"]

    found = find(lookup, token, "peering", declared)

    assert found.id == wanted and found.import_id == wanted


def test_a_reservation_is_found_by_its_subnet_and_cidr_and_imported_as_pulumi_aws_does(
    moto: MotoServer, lookup: Lookup
) -> None:
    ec2 = moto.client("ec2")
    vpc = _vpc(ec2, "10.0.0.0/16")
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.1.0/24")["Subnet"]["SubnetId"]
    for cidr in ("10.0.1.11/32", "10.0.1.10/32"):
        ec2.create_subnet_cidr_reservation(SubnetId=subnet, Cidr=cidr, ReservationType="explicit")
    [wanted] = [
        r["SubnetCidrReservationId"]
        for r in ec2.get_subnet_cidr_reservations(SubnetId=subnet)["SubnetIpv4CidrReservations"]
        if r["Cidr"] == "10.0.1.10/32"
    ]
    kind = "aws:ec2/subnetCidrReservation:SubnetCidrReservation"
    declared = {"subnetId": subnet, "cidrBlock": "10.0.1.10/32", "reservationType": "explicit"}

    found = find(lookup, kind, "member-address-1", declared)

    assert found.id == wanted and found.import_id == f"{subnet}:{wanted}"
    with pytest.raises(Missing):
        find(lookup, kind, "member-address-3", {**declared, "cidrBlock": "10.0.1.12/32"})
