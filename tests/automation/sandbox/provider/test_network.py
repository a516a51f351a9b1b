"""The stand-in provider's ``aws:ec2`` networking types against a real moto server.

Each type is created, checked against what boto3 sees, updated in place where AWS can,
read back (also from the declared inputs alone, as an import does), deleted twice and
then read as gone. Replacement is judged from ``replace_props()`` the way the servicer
judges it: a change to any listed property replaces, any other change updates.
"""

from __future__ import annotations

import zlib
from typing import Any

import pytest

from automation.sandbox.moto_gaps.ec2 import reservation_descriptions_kept
from automation.sandbox.provider.model import (
    REGISTRY,
    Aws,
    NotFound,
    Props,
    Request,
    ResourceType,
)
from automation.sandbox.provider.types.gateways import Eip, InternetGateway, NatGateway
from automation.sandbox.provider.types.peering import (
    PeeringConnectionOptions,
    VpcPeeringConnection,
    VpcPeeringConnectionAccepter,
)
from automation.sandbox.provider.types.routes import Route, RouteTable, RouteTableAssociation
from automation.sandbox.provider.types.vpc import Subnet, SubnetCidrReservation, Vpc
from tests.support.moto_fixtures import MotoServer

pytestmark = pytest.mark.moto

ACCOUNT = "123456789012"  # moto's


def requires_replace(kind: type[ResourceType], olds: Props, news: Props) -> bool:
    """Whether going from ``olds`` to ``news`` replaces a resource of ``kind``."""
    return any(olds.get(prop) != news.get(prop) for prop in kind.replace_props())


def request(kind: type[ResourceType]) -> Request:
    return Request(name="test", token=kind.token)


def create(aws: Aws, kind: type[ResourceType], declared: Props) -> tuple[str, Props]:
    """Create through the registered type; reading it back, from its outputs or from the
    declared inputs alone (an import), gives the same outputs."""
    resource = REGISTRY[kind.token]
    assert isinstance(resource, kind)
    inputs = resource.check(request(kind), declared)
    id_, outputs = resource.create(aws, request(kind), inputs)
    assert resource.read(aws, request(kind), id_, outputs) == outputs
    assert resource.read(aws, request(kind), id_, inputs) == outputs
    return id_, outputs


def update(aws: Aws, kind: type[ResourceType], id_: str, olds: Props, changes: Props) -> Props:
    """Update in place (only legal when nothing replace-worthy changed)."""
    news = {**olds, **changes}
    assert not requires_replace(kind, olds, news)
    outputs = REGISTRY[kind.token].update(aws, request(kind), id_, olds, news)
    assert REGISTRY[kind.token].read(aws, request(kind), id_, outputs) == outputs
    return outputs


def delete(aws: Aws, kind: type[ResourceType], id_: str, state: Props) -> None:
    """Delete twice (the second finds it gone and succeeds), then read it as gone."""
    resource = REGISTRY[kind.token]
    resource.delete(aws, request(kind), id_, state)
    resource.delete(aws, request(kind), id_, state)
    with pytest.raises(NotFound):
        resource.read(aws, request(kind), id_, state)


def tags(ec2: Any, id_: str) -> dict[str, str]:
    found = ec2.describe_tags(Filters=[{"Name": "resource-id", "Values": [id_]}])["Tags"]
    return {t["Key"]: t["Value"] for t in found}


@pytest.fixture
def aws(moto: MotoServer) -> Aws:
    return Aws(region="eu-west-1", endpoint_url=moto.endpoint_url)


@pytest.fixture
def ec2(moto: MotoServer) -> Any:
    return moto.client("ec2")


def make_vpc(ec2: Any, cidr: str = "10.0.0.0/16") -> str:
    return str(ec2.create_vpc(CidrBlock=cidr)["Vpc"]["VpcId"])


def make_subnet(ec2: Any, vpc_id: str, cidr: str = "10.0.1.0/24") -> str:
    subnet = ec2.create_subnet(VpcId=vpc_id, CidrBlock=cidr, AvailabilityZone="eu-west-1a")
    return str(subnet["Subnet"]["SubnetId"])


def make_peering(ec2: Any, accept: bool) -> str:
    pcx = ec2.create_vpc_peering_connection(
        VpcId=make_vpc(ec2), PeerVpcId=make_vpc(ec2, "10.1.0.0/16")
    )["VpcPeeringConnection"]["VpcPeeringConnectionId"]
    if accept:
        ec2.accept_vpc_peering_connection(VpcPeeringConnectionId=pcx)
    return str(pcx)


def test_vpc(aws: Aws, ec2: Any) -> None:
    declared = {
        "cidrBlock": "10.0.0.0/16",
        "enableDnsHostnames": True,
        "enableDnsSupport": True,
        "tags": {"Name": "net"},
    }
    id_, outputs = create(aws, Vpc, declared)

    assert ec2.describe_vpcs(VpcIds=[id_])["Vpcs"][0]["CidrBlock"] == "10.0.0.0/16"
    hostnames = ec2.describe_vpc_attribute(VpcId=id_, Attribute="enableDnsHostnames")
    assert hostnames["EnableDnsHostnames"]["Value"] is True
    assert tags(ec2, id_) == {"Name": "net"}
    main = ec2.describe_route_tables(
        Filters=[
            {"Name": "vpc-id", "Values": [id_]},
            {"Name": "association.main", "Values": ["true"]},
        ]
    )["RouteTables"][0]["RouteTableId"]
    default_sg = ec2.describe_security_groups(
        Filters=[
            {"Name": "vpc-id", "Values": [id_]},
            {"Name": "group-name", "Values": ["default"]},
        ]
    )["SecurityGroups"][0]["GroupId"]
    assert outputs == {
        **declared,
        "arn": f"arn:aws:ec2:eu-west-1:{ACCOUNT}:vpc/{id_}",
        "defaultNetworkAclId": outputs["defaultNetworkAclId"],
        "defaultRouteTableId": main,
        "defaultSecurityGroupId": default_sg,
        "dhcpOptionsId": outputs["dhcpOptionsId"],
        "mainRouteTableId": main,
        "ownerId": ACCOUNT,
        "tagsAll": {"Name": "net"},
    }
    assert outputs["defaultNetworkAclId"].startswith("acl-")

    assert requires_replace(Vpc, outputs, {**declared, "cidrBlock": "10.9.0.0/16"})
    changes = {"enableDnsHostnames": False, "tags": {"Name": "net2", "Env": "test"}}
    assert not requires_replace(Vpc, outputs, {**declared, **changes})

    outputs = update(aws, Vpc, id_, outputs, changes)
    hostnames = ec2.describe_vpc_attribute(VpcId=id_, Attribute="enableDnsHostnames")
    assert hostnames["EnableDnsHostnames"]["Value"] is False
    assert tags(ec2, id_) == {"Name": "net2", "Env": "test"}
    assert outputs["enableDnsHostnames"] is False
    assert outputs["tagsAll"] == {"Name": "net2", "Env": "test"}

    delete(aws, Vpc, id_, outputs)
    assert not ec2.describe_vpcs(Filters=[{"Name": "vpc-id", "Values": [id_]}])["Vpcs"]


def test_vpc_defaults_dns_support_on(aws: Aws, ec2: Any) -> None:
    id_, outputs = create(aws, Vpc, {"cidrBlock": "10.0.0.0/16"})
    assert outputs["enableDnsSupport"] is True
    assert outputs["enableDnsHostnames"] is False
    assert outputs["tags"] == {}
    delete(aws, Vpc, id_, outputs)


def test_subnet(aws: Aws, ec2: Any) -> None:
    vpc_id = make_vpc(ec2)
    declared = {
        "vpcId": vpc_id,
        "cidrBlock": "10.0.1.0/24",
        "availabilityZone": "eu-west-1a",
        "tags": {"Name": "private-a"},
    }
    id_, outputs = create(aws, Subnet, declared)

    live = ec2.describe_subnets(SubnetIds=[id_])["Subnets"][0]
    assert (live["VpcId"], live["CidrBlock"], live["AvailabilityZone"]) == (
        vpc_id,
        "10.0.1.0/24",
        "eu-west-1a",
    )
    assert live["MapPublicIpOnLaunch"] is False
    assert tags(ec2, id_) == {"Name": "private-a"}
    assert outputs["arn"] == live["SubnetArn"]
    assert outputs["mapPublicIpOnLaunch"] is False  # the provider's default
    assert outputs["availabilityZoneId"] == live["AvailabilityZoneId"]
    assert outputs["tagsAll"] == {"Name": "private-a"}

    for change in (
        {"availabilityZone": "eu-west-1b"},
        {"cidrBlock": "10.0.2.0/24"},
        {"vpcId": make_vpc(ec2, "10.5.0.0/16")},
    ):
        assert requires_replace(Subnet, outputs, {**outputs, **change}), change
    changes = {"mapPublicIpOnLaunch": True, "tags": {"Name": "public-a"}}
    assert not requires_replace(Subnet, outputs, {**outputs, **changes})

    outputs = update(aws, Subnet, id_, outputs, changes)
    assert ec2.describe_subnets(SubnetIds=[id_])["Subnets"][0]["MapPublicIpOnLaunch"] is True
    assert tags(ec2, id_) == {"Name": "public-a"}
    assert outputs["mapPublicIpOnLaunch"] is True

    delete(aws, Subnet, id_, outputs)


def test_subnet_created_public(aws: Aws, ec2: Any) -> None:
    declared = {"vpcId": make_vpc(ec2), "cidrBlock": "10.0.1.0/24", "mapPublicIpOnLaunch": True}
    id_, outputs = create(aws, Subnet, declared)
    assert ec2.describe_subnets(SubnetIds=[id_])["Subnets"][0]["MapPublicIpOnLaunch"] is True
    delete(aws, Subnet, id_, outputs)


def test_subnet_cidr_reservation(aws: Aws, ec2: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from moto.ec2.responses.subnets import Subnets

    monkeypatch.setattr(
        Subnets, "create_subnet_cidr_reservation", Subnets.create_subnet_cidr_reservation
    )
    reservation_descriptions_kept()  # as the sandbox's moto runs
    vpc_id = make_vpc(ec2)
    subnet = make_subnet(ec2, vpc_id)
    declared = {
        "subnetId": subnet,
        "cidrBlock": "10.0.1.10/32",
        "reservationType": "explicit",
        "description": "etcd member 1",
    }
    id_, outputs = create(aws, SubnetCidrReservation, declared)
    assert id_.startswith("scr-")
    assert outputs == {**declared, "ownerId": ACCOUNT}
    kind = REGISTRY[SubnetCidrReservation.token]
    imported = f"{subnet}:{id_}"  # the importer's form
    assert kind.imported_id(aws, request(SubnetCidrReservation), imported, {}) == id_
    assert kind.read(aws, request(SubnetCidrReservation), imported, {}) == outputs

    launched = ec2.run_instances(ImageId="ami-12c6146b", MinCount=12, MaxCount=12, SubnetId=subnet)
    assert "10.0.1.10" not in {i["PrivateIpAddress"] for i in launched["Instances"]}

    for change in (
        {"cidrBlock": "10.0.1.11/32"},
        {"description": "etcd member 2"},
        {"reservationType": "prefix"},
        {"subnetId": make_subnet(ec2, vpc_id, "10.0.2.0/24")},
    ):
        assert requires_replace(SubnetCidrReservation, outputs, {**outputs, **change}), change

    delete(aws, SubnetCidrReservation, id_, outputs)
    assert ec2.get_subnet_cidr_reservations(SubnetId=subnet)["SubnetIpv4CidrReservations"] == []


def test_internet_gateway(aws: Aws, ec2: Any) -> None:
    first, second = make_vpc(ec2), make_vpc(ec2, "10.1.0.0/16")
    id_, outputs = create(aws, InternetGateway, {"vpcId": first, "tags": {"Name": "igw"}})

    live = ec2.describe_internet_gateways(InternetGatewayIds=[id_])["InternetGateways"][0]
    assert [a["VpcId"] for a in live["Attachments"]] == [first]
    assert tags(ec2, id_) == {"Name": "igw"}
    assert outputs == {
        "arn": f"arn:aws:ec2:eu-west-1:{ACCOUNT}:internet-gateway/{id_}",
        "ownerId": ACCOUNT,
        "vpcId": first,
        "tags": {"Name": "igw"},
        "tagsAll": {"Name": "igw"},
    }

    # Nothing replaces an internet gateway: a new VPC is a detach and an attach.
    changes = {"vpcId": second, "tags": {"Name": "igw2"}}
    assert not requires_replace(InternetGateway, outputs, {**outputs, **changes})
    outputs = update(aws, InternetGateway, id_, outputs, changes)
    live = ec2.describe_internet_gateways(InternetGatewayIds=[id_])["InternetGateways"][0]
    assert [a["VpcId"] for a in live["Attachments"]] == [second]
    assert tags(ec2, id_) == {"Name": "igw2"}

    delete(aws, InternetGateway, id_, outputs)  # detaches first
    ec2.delete_vpc(VpcId=second)  # nothing attached any more


def test_eip(aws: Aws, ec2: Any) -> None:
    id_, outputs = create(aws, Eip, {"domain": "vpc", "tags": {"Name": "nat-a"}})

    live = ec2.describe_addresses(AllocationIds=[id_])["Addresses"][0]
    assert id_.startswith("eipalloc-")
    assert outputs["allocationId"] == id_
    assert outputs["publicIp"] == live["PublicIp"]
    assert outputs["domain"] == "vpc"
    assert outputs["arn"] == f"arn:aws:ec2:eu-west-1:{ACCOUNT}:elastic-ip/{id_}"
    assert tags(ec2, id_) == {"Name": "nat-a"}

    assert requires_replace(Eip, outputs, {**outputs, "domain": "standard"})
    assert not requires_replace(Eip, outputs, {**outputs, "tags": {"Name": "nat-b"}})
    outputs = update(aws, Eip, id_, outputs, {"tags": {"Name": "nat-b"}})
    assert tags(ec2, id_) == {"Name": "nat-b"}

    delete(aws, Eip, id_, outputs)
    assert not ec2.describe_addresses()["Addresses"]


def test_nat_gateway(aws: Aws, ec2: Any) -> None:
    subnet = make_subnet(ec2, make_vpc(ec2))
    eip = ec2.allocate_address(Domain="vpc")
    declared = {"allocationId": eip["AllocationId"], "subnetId": subnet, "tags": {"Name": "nat"}}
    id_, outputs = create(aws, NatGateway, declared)

    live = ec2.describe_nat_gateways(NatGatewayIds=[id_])["NatGateways"][0]
    address = live["NatGatewayAddresses"][0]
    assert (live["State"], live["SubnetId"]) == ("available", subnet)
    assert tags(ec2, id_) == {"Name": "nat"}
    assert outputs == {
        **declared,
        "connectivityType": "public",  # the provider's default
        "associationId": address["AssociationId"],
        "networkInterfaceId": address["NetworkInterfaceId"],
        "privateIp": address["PrivateIp"],
        "publicIp": eip["PublicIp"],
        "tagsAll": {"Name": "nat"},
        "vpcId": live["VpcId"],  # computed: Terraform reads it
    }

    for change in (
        {"allocationId": ec2.allocate_address(Domain="vpc")["AllocationId"]},
        {"subnetId": make_subnet(ec2, make_vpc(ec2, "10.1.0.0/16"), "10.1.1.0/24")},
        {"connectivityType": "private"},
    ):
        assert requires_replace(NatGateway, outputs, {**outputs, **change}), change
    outputs = update(aws, NatGateway, id_, outputs, {"tags": {"Name": "nat", "AZ": "a"}})
    assert tags(ec2, id_) == {"Name": "nat", "AZ": "a"}

    delete(aws, NatGateway, id_, outputs)
    assert ec2.describe_nat_gateways(NatGatewayIds=[id_])["NatGateways"][0]["State"] == "deleted"


def test_route_table(aws: Aws, ec2: Any) -> None:
    vpc_id = make_vpc(ec2)
    id_, outputs = create(aws, RouteTable, {"vpcId": vpc_id, "tags": {"Name": "private-a"}})

    live = ec2.describe_route_tables(RouteTableIds=[id_])["RouteTables"][0]
    assert live["VpcId"] == vpc_id
    assert tags(ec2, id_) == {"Name": "private-a"}
    assert outputs == {
        "arn": f"arn:aws:ec2:eu-west-1:{ACCOUNT}:route-table/{id_}",
        "ownerId": ACCOUNT,
        "vpcId": vpc_id,
        "tags": {"Name": "private-a"},
        "tagsAll": {"Name": "private-a"},
    }

    assert requires_replace(RouteTable, outputs, {**outputs, "vpcId": make_vpc(ec2, "10.1.0.0/16")})
    assert not requires_replace(RouteTable, outputs, {**outputs, "tags": {"Name": "b"}})
    outputs = update(aws, RouteTable, id_, outputs, {"tags": {"Name": "b"}})
    assert tags(ec2, id_) == {"Name": "b"}

    # A table still associated with a subnet is disassociated first.
    ec2.associate_route_table(RouteTableId=id_, SubnetId=make_subnet(ec2, vpc_id))
    delete(aws, RouteTable, id_, outputs)


def test_route(aws: Aws, ec2: Any) -> None:
    vpc_id = make_vpc(ec2)
    table = ec2.create_route_table(VpcId=vpc_id)["RouteTable"]["RouteTableId"]
    igw = ec2.create_internet_gateway()["InternetGateway"]["InternetGatewayId"]
    ec2.attach_internet_gateway(InternetGatewayId=igw, VpcId=vpc_id)
    eip = ec2.allocate_address(Domain="vpc")["AllocationId"]
    nat = ec2.create_nat_gateway(SubnetId=make_subnet(ec2, vpc_id), AllocationId=eip)
    nat_id = nat["NatGateway"]["NatGatewayId"]
    declared = {"routeTableId": table, "destinationCidrBlock": "0.0.0.0/0", "gatewayId": igw}
    id_, outputs = create(aws, Route, declared)

    def routes() -> dict[str, Any]:
        live = ec2.describe_route_tables(RouteTableIds=[table])["RouteTables"][0]["Routes"]
        return {r["DestinationCidrBlock"]: r for r in live}

    assert routes()["0.0.0.0/0"]["GatewayId"] == igw
    # The provider's RouteCreateID: "r-" + table id + crc32 of the destination.
    assert id_ == f"r-{table}{zlib.crc32(b'0.0.0.0/0')}"
    assert outputs == {**declared, "origin": "CreateRoute", "state": "active"}
    # Imported as "<table>_<destination>" with no state, the route reads the same.
    assert REGISTRY[Route.token].read(aws, request(Route), f"{table}_0.0.0.0/0", {}) == outputs

    assert requires_replace(Route, outputs, {**declared, "destinationCidrBlock": "10.9.0.0/16"})
    other_table = ec2.create_route_table(VpcId=vpc_id)["RouteTable"]["RouteTableId"]
    assert requires_replace(Route, outputs, {**declared, "routeTableId": other_table})
    retarget = {"routeTableId": table, "destinationCidrBlock": "0.0.0.0/0", "natGatewayId": nat_id}
    assert not requires_replace(Route, outputs, retarget)

    outputs = REGISTRY[Route.token].update(aws, request(Route), id_, outputs, retarget)
    assert routes()["0.0.0.0/0"]["NatGatewayId"] == nat_id
    assert "GatewayId" not in routes()["0.0.0.0/0"]
    assert outputs == {**retarget, "origin": "CreateRoute", "state": "active"}

    delete(aws, Route, id_, outputs)
    assert list(routes()) == ["10.0.0.0/16"]  # only the local route is left


def test_route_needs_exactly_one_target(aws: Aws, ec2: Any) -> None:
    table = ec2.create_route_table(VpcId=make_vpc(ec2))["RouteTable"]["RouteTableId"]
    with pytest.raises(ValueError, match="exactly one target"):
        REGISTRY[Route.token].create(
            aws, request(Route), {"routeTableId": table, "destinationCidrBlock": "0.0.0.0/0"}
        )


def test_route_table_association(aws: Aws, ec2: Any) -> None:
    vpc_id = make_vpc(ec2)
    subnet = make_subnet(ec2, vpc_id)
    first = ec2.create_route_table(VpcId=vpc_id)["RouteTable"]["RouteTableId"]
    second = ec2.create_route_table(VpcId=vpc_id)["RouteTable"]["RouteTableId"]

    def table_of_subnet() -> list[str]:
        found = ec2.describe_route_tables(
            Filters=[{"Name": "association.subnet-id", "Values": [subnet]}]
        )["RouteTables"]
        return [t["RouteTableId"] for t in found]

    declared = {"routeTableId": first, "subnetId": subnet}
    id_, outputs = create(aws, RouteTableAssociation, declared)
    assert id_.startswith("rtbassoc-")
    assert table_of_subnet() == [first]
    assert outputs == declared

    assert requires_replace(
        RouteTableAssociation,
        outputs,
        {**outputs, "subnetId": make_subnet(ec2, vpc_id, "10.0.2.0/24")},
    )
    assert not requires_replace(RouteTableAssociation, outputs, {**outputs, "routeTableId": second})

    # ReplaceRouteTableAssociation gives the association a new id; the resource keeps
    # its old one and is still found (by subnet and table) for reads and the delete.
    outputs = update(aws, RouteTableAssociation, id_, outputs, {"routeTableId": second})
    assert table_of_subnet() == [second]
    assert outputs == {"routeTableId": second, "subnetId": subnet}

    delete(aws, RouteTableAssociation, id_, outputs)
    assert table_of_subnet() == []


def test_vpc_peering_connection(aws: Aws, ec2: Any) -> None:
    requester, accepter = make_vpc(ec2), make_vpc(ec2, "10.1.0.0/16")
    declared = {
        "vpcId": requester,
        "peerVpcId": accepter,
        "autoAccept": False,
        "tags": {"Name": "peering", "Side": "requester"},
    }
    id_, outputs = create(aws, VpcPeeringConnection, declared)

    def live() -> dict[str, Any]:
        found = ec2.describe_vpc_peering_connections(VpcPeeringConnectionIds=[id_])
        return dict(found["VpcPeeringConnections"][0])

    assert live()["Status"]["Code"] == "pending-acceptance"
    assert live()["AccepterVpcInfo"]["VpcId"] == accepter
    assert tags(ec2, id_) == declared["tags"]
    assert outputs == {
        **declared,
        "acceptStatus": "pending-acceptance",
        "peerOwnerId": ACCOUNT,
        "peerRegion": "eu-west-1",
        "tagsAll": declared["tags"],
    }

    for change in (
        {"vpcId": make_vpc(ec2, "10.2.0.0/16")},
        {"peerVpcId": make_vpc(ec2, "10.3.0.0/16")},
        {"peerRegion": "eu-central-1"},
    ):
        assert requires_replace(VpcPeeringConnection, outputs, {**outputs, **change}), change

    # autoAccept becoming true accepts the pending connection in place.
    changes = {"autoAccept": True, "tags": {"Name": "peering"}}
    outputs = update(aws, VpcPeeringConnection, id_, outputs, changes)
    assert live()["Status"]["Code"] == "active"
    assert tags(ec2, id_) == {"Name": "peering"}
    assert outputs["acceptStatus"] == "active"
    assert outputs["autoAccept"] is True

    delete(aws, VpcPeeringConnection, id_, outputs)
    assert live()["Status"]["Code"] == "deleted"


def test_vpc_peering_connection_accepter(aws: Aws, ec2: Any) -> None:
    pcx = make_peering(ec2, accept=False)
    requester = ec2.describe_vpc_peering_connections(VpcPeeringConnectionIds=[pcx])[
        "VpcPeeringConnections"
    ][0]
    declared = {"vpcPeeringConnectionId": pcx, "autoAccept": True, "tags": {"Side": "accepter"}}
    id_, outputs = create(aws, VpcPeeringConnectionAccepter, declared)

    def status() -> str:
        found = ec2.describe_vpc_peering_connections(VpcPeeringConnectionIds=[pcx])
        return str(found["VpcPeeringConnections"][0]["Status"]["Code"])

    assert id_ == pcx
    assert status() == "active"
    assert tags(ec2, pcx) == {"Side": "accepter"}
    assert outputs == {
        **declared,
        "acceptStatus": "active",
        "peerOwnerId": ACCOUNT,
        "peerRegion": "eu-west-1",
        "peerVpcId": requester["AccepterVpcInfo"]["VpcId"],
        "vpcId": requester["RequesterVpcInfo"]["VpcId"],
        "tagsAll": {"Side": "accepter"},
    }

    assert requires_replace(
        VpcPeeringConnectionAccepter,
        outputs,
        {**outputs, "vpcPeeringConnectionId": make_peering(ec2, accept=False)},
    )
    outputs = update(aws, VpcPeeringConnectionAccepter, id_, outputs, {"tags": {"Side": "b"}})
    assert tags(ec2, pcx) == {"Side": "b"}

    # Deleting the accepter only forgets it: the connection stays until its owner goes.
    REGISTRY[VpcPeeringConnectionAccepter.token].delete(
        aws, request(VpcPeeringConnectionAccepter), id_, outputs
    )
    assert status() == "active"
    ec2.delete_vpc_peering_connection(VpcPeeringConnectionId=pcx)
    delete(aws, VpcPeeringConnectionAccepter, id_, outputs)


def test_accepter_of_missing_connection_fails(aws: Aws) -> None:
    with pytest.raises(ValueError, match="not found"):
        REGISTRY[VpcPeeringConnectionAccepter.token].create(
            aws,
            request(VpcPeeringConnectionAccepter),
            {"vpcPeeringConnectionId": "pcx-0123456789abcdef0", "autoAccept": True},
        )


def test_peering_connection_options(aws: Aws, ec2: Any) -> None:
    pcx = make_peering(ec2, accept=True)
    dns_on = {"allowRemoteVpcDnsResolution": True}
    declared = {"vpcPeeringConnectionId": pcx, "accepter": dns_on, "requester": dns_on}
    id_, outputs = create(aws, PeeringConnectionOptions, declared)

    def dns() -> tuple[bool, bool]:
        live = ec2.describe_vpc_peering_connections(VpcPeeringConnectionIds=[pcx])
        info = live["VpcPeeringConnections"][0]
        return (
            info["AccepterVpcInfo"]["PeeringOptions"]["AllowDnsResolutionFromRemoteVpc"],
            info["RequesterVpcInfo"]["PeeringOptions"]["AllowDnsResolutionFromRemoteVpc"],
        )

    assert id_ == pcx
    assert dns() == (True, True)
    assert outputs == declared

    assert requires_replace(
        PeeringConnectionOptions,
        outputs,
        {**outputs, "vpcPeeringConnectionId": make_peering(ec2, accept=True)},
    )
    dns_off = {"allowRemoteVpcDnsResolution": False}
    outputs = update(aws, PeeringConnectionOptions, id_, outputs, {"requester": dns_off})
    assert dns() == (True, False)
    assert outputs["requester"] == dns_off

    # Delete leaves the options on the connection; they go with it.
    REGISTRY[PeeringConnectionOptions.token].delete(
        aws, request(PeeringConnectionOptions), id_, outputs
    )
    assert dns() == (True, False)
    ec2.delete_vpc_peering_connection(VpcPeeringConnectionId=pcx)
    delete(aws, PeeringConnectionOptions, id_, outputs)


def test_network_and_peering_come_up_and_go_down_in_dependency_order(aws: Aws, ec2: Any) -> None:
    """The resources of components/network.py and components/peering.py, created in
    the engine's order from each other's outputs, then deleted in reverse."""
    made: list[tuple[type[ResourceType], str, Props]] = []

    def up(kind: type[ResourceType], inputs: Props) -> Props:
        id_, outputs = create(aws, kind, inputs)
        made.append((kind, id_, outputs))
        return {"id": id_, **outputs}

    vpc = up(Vpc, {"cidrBlock": "10.0.0.0/16", "enableDnsHostnames": True})
    peer = up(Vpc, {"cidrBlock": "10.1.0.0/16", "enableDnsHostnames": True})
    public = up(
        Subnet, {"vpcId": vpc["id"], "cidrBlock": "10.0.0.0/24", "availabilityZone": "eu-west-1a"}
    )
    private = up(
        Subnet, {"vpcId": vpc["id"], "cidrBlock": "10.0.1.0/24", "availabilityZone": "eu-west-1a"}
    )
    public_rt = up(RouteTable, {"vpcId": vpc["id"]})
    private_rt = up(RouteTable, {"vpcId": vpc["id"]})
    up(RouteTableAssociation, {"subnetId": public["id"], "routeTableId": public_rt["id"]})
    up(RouteTableAssociation, {"subnetId": private["id"], "routeTableId": private_rt["id"]})
    igw = up(InternetGateway, {"vpcId": vpc["id"]})
    up(
        Route,
        {
            "routeTableId": public_rt["id"],
            "destinationCidrBlock": "0.0.0.0/0",
            "gatewayId": igw["id"],
        },
    )
    eip = up(Eip, {"domain": "vpc"})
    nat = up(NatGateway, {"allocationId": eip["allocationId"], "subnetId": public["id"]})
    up(
        Route,
        {
            "routeTableId": private_rt["id"],
            "destinationCidrBlock": "0.0.0.0/0",
            "natGatewayId": nat["id"],
        },
    )
    connection = up(
        VpcPeeringConnection, {"vpcId": vpc["id"], "peerVpcId": peer["id"], "autoAccept": False}
    )
    accepter = up(
        VpcPeeringConnectionAccepter,
        {"vpcPeeringConnectionId": connection["id"], "autoAccept": True},
    )
    dns_on = {"allowRemoteVpcDnsResolution": True}
    up(
        PeeringConnectionOptions,
        {
            "vpcPeeringConnectionId": accepter["vpcPeeringConnectionId"],
            "accepter": dns_on,
            "requester": dns_on,
        },
    )
    up(
        Route,
        {
            "routeTableId": private_rt["id"],
            "destinationCidrBlock": "10.1.0.0/16",
            "vpcPeeringConnectionId": accepter["vpcPeeringConnectionId"],
        },
    )

    assert public["mapPublicIpOnLaunch"] is False
    assert nat["publicIp"] == eip["publicIp"]
    assert accepter["acceptStatus"] == "active"

    for kind, id_, outputs in reversed(made):
        REGISTRY[kind.token].delete(aws, request(kind), id_, outputs)
    left = {v["VpcId"] for v in ec2.describe_vpcs()["Vpcs"]}
    left |= {g["InternetGatewayId"] for g in ec2.describe_internet_gateways()["InternetGateways"]}
    left |= {a["AllocationId"] for a in ec2.describe_addresses()["Addresses"]}
    assert not left & {vpc["id"], peer["id"], igw["id"], eip["id"]}
