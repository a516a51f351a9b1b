"""The VPC and its parts: subnets and their reservations, gateways, addresses, route
tables, routes."""

from __future__ import annotations

from automation.aws.lookup.model import Found, Lookup, Props, by, declared_tags, finds, only

_LIVE_NAT = ("pending", "available")


def _name_tag(inputs: Props) -> str | None:
    return declared_tags(inputs).get("Name")


@finds("aws:ec2/vpc:Vpc")
def vpc(lookup: Lookup, name: str, inputs: Props) -> Found:
    """The VPC with the declared CIDR and ``Name`` tag, else the one with that CIDR
    tagged for the cluster."""
    cidr = inputs["cidrBlock"]
    ec2 = lookup.clients.ec2
    tag = _name_tag(inputs)
    ids: list[str] = []
    if tag:
        named = ec2.describe_vpcs(Filters=[by("cidr", cidr), by("tag:Name", tag)])["Vpcs"]
        ids = [v["VpcId"] for v in named]
    if not ids:
        tagged = ec2.describe_vpcs(Filters=[by("cidr", cidr), by("tag-key", lookup.cluster_tag)])
        ids = [v["VpcId"] for v in tagged["Vpcs"]]
    found = only(name, f"VPC {cidr} tagged {lookup.cluster_tag}", ids)
    return Found(found, found)


@finds("aws:ec2/subnet:Subnet")
def subnet(lookup: Lookup, name: str, inputs: Props) -> Found:
    """The subnet with the declared CIDR in the VPC (AWS keeps CIDRs unique in a VPC)."""
    vpc_id, cidr = inputs["vpcId"], inputs["cidrBlock"]
    subnets = lookup.clients.ec2.describe_subnets(
        Filters=[by("vpc-id", vpc_id), by("cidr-block", cidr)]
    )["Subnets"]
    found = only(name, f"subnet {cidr} in {vpc_id}", [s["SubnetId"] for s in subnets])
    return Found(found, found)


@finds("aws:ec2/internetGateway:InternetGateway")
def internet_gateway(lookup: Lookup, name: str, inputs: Props) -> Found:
    """The gateway attached to the VPC (a VPC has at most one)."""
    vpc_id = inputs["vpcId"]
    gateways = lookup.clients.ec2.describe_internet_gateways(
        Filters=[by("attachment.vpc-id", vpc_id)]
    )["InternetGateways"]
    found = only(
        name, f"internet gateway attached to {vpc_id}", [g["InternetGatewayId"] for g in gateways]
    )
    return Found(found, found)


@finds("aws:ec2/eip:Eip")
def elastic_ip(lookup: Lookup, name: str, inputs: Props) -> Found:
    """The VPC address with the declared ``Name`` tag."""
    tag = _name_tag(inputs)
    addresses = lookup.clients.ec2.describe_addresses(
        Filters=[by("domain", "vpc"), by("tag:Name", tag or name)]
    )["Addresses"]
    found = only(
        name, f"Elastic IP named {tag or name}", [a["AllocationId"] for a in addresses]
    )
    public_ip = next(a.get("PublicIp") for a in addresses if a["AllocationId"] == found)
    return Found(found, found, {"allocationId": found, "publicIp": public_ip})


@finds("aws:ec2/natGateway:NatGateway")
def nat_gateway(lookup: Lookup, name: str, inputs: Props) -> Found:
    """The live NAT gateway in the declared subnet holding the declared address."""
    subnet_id, allocation = inputs["subnetId"], inputs.get("allocationId")
    gateways = lookup.clients.ec2.describe_nat_gateways(
        Filters=[by("subnet-id", subnet_id), by("state", *_LIVE_NAT)]
    )["NatGateways"]
    if allocation:
        gateways = [
            g
            for g in gateways
            if any(a.get("AllocationId") == allocation for a in g.get("NatGatewayAddresses", []))
        ]
    found = only(
        name,
        f"NAT gateway in {subnet_id}" + (f" with {allocation}" if allocation else ""),
        [g["NatGatewayId"] for g in gateways],
    )
    return Found(found, found)


@finds("aws:ec2/routeTable:RouteTable")
def route_table(lookup: Lookup, name: str, inputs: Props) -> Found:
    """The route table of the VPC with the declared ``Name`` tag."""
    vpc_id, tag = inputs["vpcId"], _name_tag(inputs) or name
    tables = lookup.clients.ec2.describe_route_tables(
        Filters=[by("vpc-id", vpc_id), by("tag:Name", tag)]
    )["RouteTables"]
    found = only(name, f"route table named {tag} in {vpc_id}", [t["RouteTableId"] for t in tables])
    return Found(found, found)


_TARGETS = (
    ("gatewayId", "GatewayId"),
    ("natGatewayId", "NatGatewayId"),
    ("vpcPeeringConnectionId", "VpcPeeringConnectionId"),
    ("networkInterfaceId", "NetworkInterfaceId"),
    ("transitGatewayId", "TransitGatewayId"),
)


@finds("aws:ec2/route:Route")
def route(lookup: Lookup, name: str, inputs: Props) -> Found:
    """The table's route to the declared destination; pulumi-aws imports it as
    ``<table>_<destination>``."""
    table_id, destination = inputs["routeTableId"], inputs["destinationCidrBlock"]
    tables = lookup.clients.ec2.describe_route_tables(RouteTableIds=[table_id])["RouteTables"]
    routes = [
        r
        for t in tables
        for r in t.get("Routes", [])
        if r.get("DestinationCidrBlock") == destination
    ]
    only(name, f"route to {destination} in {table_id}", [destination for _ in routes])
    import_id = f"{table_id}_{destination}"
    return Found(import_id, import_id)


@finds("aws:ec2/routeTableAssociation:RouteTableAssociation")
def route_table_association(lookup: Lookup, name: str, inputs: Props) -> Found:
    """The subnet's association with a route table; pulumi-aws imports it as
    ``<subnet>/<table>``. A subnet associated with another table than declared is
    found too: the difference is the engine's to report."""
    subnet_id = inputs["subnetId"]
    tables = lookup.clients.ec2.describe_route_tables(
        Filters=[by("association.subnet-id", subnet_id)]
    )["RouteTables"]
    associations = [
        (a["RouteTableAssociationId"], t["RouteTableId"])
        for t in tables
        for a in t.get("Associations", [])
        if a.get("SubnetId") == subnet_id
        and a.get("AssociationState", {}).get("State", "associated") == "associated"
    ]
    found = only(
        name, f"route table association of {subnet_id}", [a for a, _ in associations]
    )
    table_id = next(t for a, t in associations if a == found)
    return Found(found, f"{subnet_id}/{table_id}")


@finds("aws:ec2/subnetCidrReservation:SubnetCidrReservation")
def subnet_cidr_reservation(lookup: Lookup, name: str, inputs: Props) -> Found:
    """The subnet's reservation of the declared CIDR (reservations in one VPC never
    overlap); pulumi-aws imports it as ``<subnet>:<reservation>``."""
    subnet_id, cidr = inputs["subnetId"], inputs["cidrBlock"]
    answer = lookup.clients.ec2.get_subnet_cidr_reservations(SubnetId=subnet_id)
    ids = [
        r["SubnetCidrReservationId"]
        for r in answer.get("SubnetIpv4CidrReservations", [])
        + answer.get("SubnetIpv6CidrReservations", [])
        if r["Cidr"] == cidr
    ]
    found = only(name, f"reservation of {cidr} in {subnet_id}", ids)
    return Found(found, f"{subnet_id}:{found}")


_LIVE_PEERING = ("initiating-request", "pending-acceptance", "provisioning", "active")


@finds("aws:ec2/vpcPeeringConnection:VpcPeeringConnection")
def peering_connection(lookup: Lookup, name: str, inputs: Props) -> Found:
    """The live peering the declared VPC requested of the declared peer VPC; AWS keeps at
    most one between two VPCs that is not deleted, rejected, failed or expired."""
    requester, accepter = inputs["vpcId"], inputs["peerVpcId"]
    connections = lookup.clients.ec2.describe_vpc_peering_connections(
        Filters=[
            by("requester-vpc-info.vpc-id", requester),
            by("accepter-vpc-info.vpc-id", accepter),
            by("status-code", *_LIVE_PEERING),
        ]
    )["VpcPeeringConnections"]
    live = [  # checked here too: moto answers every connection, whatever the filters
        c["VpcPeeringConnectionId"]
        for c in connections
        if c.get("RequesterVpcInfo", {}).get("VpcId") == requester
        and c.get("AccepterVpcInfo", {}).get("VpcId") == accepter
        and c.get("Status", {}).get("Code") in _LIVE_PEERING
    ]
    found = only(name, f"VPC peering from {requester} to {accepter}", live)
    return Found(found, found)
