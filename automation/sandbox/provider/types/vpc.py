"""``aws:ec2`` VPCs and their subnets: the VPC, its subnets and a subnet's CIDR
reservations.

``force_new`` is, per type, the properties the Terraform AWS provider's schema marks
``ForceNew`` (hashicorp/terraform-provider-aws ``internal/service/ec2/``), which is what
pulumi-aws replaces on; every other declared property changes in place in ``update``.
Creates and deletes wait the way the Terraform provider does (states, eventual
consistency, ``DependencyViolation`` while dependents drain), so the calls are right
for AWS too; against moto every wait ends at its first poll.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from automation.sandbox.provider.model import (
    MOTO_LACKS,
    REGION,
    UNTRIED,
    Aws,
    ForceNew,
    Props,
    Request,
    ResourceType,
    register,
)
from automation.sandbox.provider.types.ec2_calls import (
    DRAIN,
    SRC,
    Raw,
    declared_differs,
    ec2_arn,
    filters,
    find_one,
    ignore_not_found,
    retag,
    retry,
    some,
    tag_outputs,
    tag_spec,
    until,
)

_VPC_ATTRIBUTES = {
    "enableDnsSupport": "EnableDnsSupport",
    "enableDnsHostnames": "EnableDnsHostnames",
}
_VPC_DEFAULTS = {"enableDnsSupport": True, "enableDnsHostnames": False}  # AWS's, on CreateVpc


@register
class Vpc(ResourceType):
    """``aws:ec2/vpc:Vpc`` — ``vpc_.go``: ``cidr_block`` ForceNew; ``enable_dns_support``
    (default true) and ``enable_dns_hostnames`` change with ModifyVpcAttribute."""

    token = "aws:ec2/vpc:Vpc"
    not_read = {
        **dict.fromkeys(
            ("assignGeneratedIpv6CidrBlock", "enableNetworkAddressUsageMetrics",
             "instanceTenancy", "ipv6AssociationId", "ipv6CidrBlock",
             "ipv6CidrBlockNetworkBorderGroup"),
            UNTRIED,
        ),
        **dict.fromkeys(
            ("ipv4IpamPoolId", "ipv4NetmaskLength", "ipv6IpamPoolId", "ipv6NetmaskLength"),
            "IPAM allocation arguments: moto has no IPAM",
        ),
        "region": REGION,
    }  # fmt: skip
    force_new = (ForceNew("cidrBlock", SRC + "vpc_.go: cidr_block ForceNew"),)
    computed = (
        "arn",
        "defaultNetworkAclId",
        "defaultRouteTableId",
        "defaultSecurityGroupId",
        "dhcpOptionsId",
        "mainRouteTableId",
        "ownerId",
        "tagsAll",
    )

    def check(self, req: Request, news: Props) -> Props:
        return {"enableDnsSupport": True, **news}

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        vpc = aws.ec2.create_vpc(
            CidrBlock=inputs["cidrBlock"], **tag_spec("vpc", inputs.get("tags"))
        )
        id_ = vpc["Vpc"]["VpcId"]
        until(lambda: self._vpc(aws, id_), lambda v: v["State"] == "available")
        self._modify(aws, id_, _VPC_DEFAULTS, inputs)
        return id_, self.read(aws, req, id_, inputs)

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        ec2 = aws.ec2
        vpc = self._vpc(aws, id_)

        def attribute(name: str) -> bool:
            answer = ec2.describe_vpc_attribute(VpcId=id_, Attribute=name)
            return bool(answer[_VPC_ATTRIBUTES[name]]["Value"])

        main = ec2.describe_route_tables(Filters=filters(vpc_id=id_, association__main="true"))
        acl = ec2.describe_network_acls(Filters=filters(vpc_id=id_, default="true"))
        sg = ec2.describe_security_groups(Filters=filters(vpc_id=id_, group_name="default"))
        main_id = next((t["RouteTableId"] for t in main["RouteTables"]), None)
        return some(
            {
                "arn": ec2_arn(aws, vpc["OwnerId"], f"vpc/{id_}"),
                "cidrBlock": vpc["CidrBlock"],
                "defaultNetworkAclId": next((a["NetworkAclId"] for a in acl["NetworkAcls"]), None),
                "defaultRouteTableId": main_id,
                "defaultSecurityGroupId": next((g["GroupId"] for g in sg["SecurityGroups"]), None),
                "dhcpOptionsId": vpc.get("DhcpOptionsId"),
                "enableDnsHostnames": attribute("enableDnsHostnames"),
                "enableDnsSupport": attribute("enableDnsSupport"),
                "mainRouteTableId": main_id,
                "ownerId": vpc["OwnerId"],
                **tag_outputs(vpc.get("Tags")),
            }
        )

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        self._modify(aws, id_, olds, news)
        retag(aws, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        ignore_not_found(
            lambda: retry(lambda: aws.ec2.delete_vpc(VpcId=id_), ("DependencyViolation",), DRAIN)
        )

    @staticmethod
    def _vpc(aws: Aws, id_: str) -> Raw:
        return find_one(lambda: aws.ec2.describe_vpcs(VpcIds=[id_])["Vpcs"])

    @staticmethod
    def _modify(aws: Aws, id_: str, olds: Mapping[str, Any], news: Props) -> None:
        # One attribute per ModifyVpcAttribute call; DNS support before hostnames.
        for prop, attribute in _VPC_ATTRIBUTES.items():
            if prop in news and bool(news[prop]) != bool(olds.get(prop)):
                aws.ec2.modify_vpc_attribute(VpcId=id_, **{attribute: {"Value": bool(news[prop])}})


@register
class Subnet(ResourceType):
    """``aws:ec2/subnet:Subnet`` — ``vpc_subnet.go``: ``availability_zone``,
    ``cidr_block``, ``vpc_id`` ForceNew; ``map_public_ip_on_launch`` (default false)
    changes with ModifySubnetAttribute."""

    token = "aws:ec2/subnet:Subnet"
    not_read = {
        **dict.fromkeys(
            ("assignIpv6AddressOnCreation", "enableResourceNameDnsARecordOnLaunch",
             "enableResourceNameDnsAaaaRecordOnLaunch", "ipv6CidrBlock",
             "ipv6CidrBlockAssociationId", "ipv6Native", "privateDnsHostnameTypeOnLaunch"),
            UNTRIED,
        ),
        **dict.fromkeys(
            ("customerOwnedIpv4Pool", "enableDns64", "enableLniAtDeviceIndex",
             "mapCustomerOwnedIpOnLaunch", "outpostArn"),
            MOTO_LACKS,
        ),
        **dict.fromkeys(
            ("ipv4IpamPoolId", "ipv4NetmaskLength", "ipv6IpamPoolId", "ipv6NetmaskLength"),
            "IPAM allocation arguments: moto has no IPAM",
        ),
        "region": REGION,
    }  # fmt: skip
    force_new = (
        ForceNew("availabilityZone", SRC + "vpc_subnet.go: availability_zone ForceNew"),
        ForceNew("cidrBlock", SRC + "vpc_subnet.go: cidr_block ForceNew"),
        ForceNew("vpcId", SRC + "vpc_subnet.go: vpc_id ForceNew"),
    )
    computed = ("arn", "availabilityZoneId", "ownerId", "tagsAll")

    def check(self, req: Request, news: Props) -> Props:
        return {"mapPublicIpOnLaunch": False, **news}

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        args = some(
            {
                "VpcId": inputs["vpcId"],
                "CidrBlock": inputs.get("cidrBlock"),
                "AvailabilityZone": inputs.get("availabilityZone"),
            }
        )
        subnet = aws.ec2.create_subnet(**args, **tag_spec("subnet", inputs.get("tags")))["Subnet"]
        id_ = subnet["SubnetId"]
        until(lambda: self._subnet(aws, id_), lambda s: s["State"] == "available")
        if inputs.get("mapPublicIpOnLaunch"):
            self._map_public_ip(aws, id_, True)
        return id_, self.read(aws, req, id_, inputs)

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        subnet = self._subnet(aws, id_)
        return some(
            {
                "arn": subnet.get("SubnetArn"),
                "availabilityZone": subnet["AvailabilityZone"],
                "availabilityZoneId": subnet.get("AvailabilityZoneId"),
                "cidrBlock": subnet["CidrBlock"],
                "mapPublicIpOnLaunch": bool(subnet.get("MapPublicIpOnLaunch")),
                "ownerId": subnet.get("OwnerId"),
                "vpcId": subnet["VpcId"],
                **tag_outputs(subnet.get("Tags")),
            }
        )

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        if declared_differs(olds, news, "mapPublicIpOnLaunch"):
            self._map_public_ip(aws, id_, bool(news["mapPublicIpOnLaunch"]))
        retag(aws, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        ignore_not_found(
            lambda: retry(
                lambda: aws.ec2.delete_subnet(SubnetId=id_), ("DependencyViolation",), DRAIN
            )
        )

    @staticmethod
    def _subnet(aws: Aws, id_: str) -> Raw:
        return find_one(lambda: aws.ec2.describe_subnets(SubnetIds=[id_])["Subnets"])

    @staticmethod
    def _map_public_ip(aws: Aws, id_: str, value: bool) -> None:
        aws.ec2.modify_subnet_attribute(SubnetId=id_, MapPublicIpOnLaunch={"Value": value})


@register
class SubnetCidrReservation(ResourceType):
    """``aws:ec2/subnetCidrReservation:SubnetCidrReservation`` —
    ``vpc_subnet_cidr_reservation.go``: every argument ForceNew (the resource has no
    update); read finds the reservation among its subnet's; the importer takes
    ``<subnet id>:<reservation id>``."""

    token = "aws:ec2/subnetCidrReservation:SubnetCidrReservation"
    not_read = {"region": REGION}
    _go = SRC + "vpc_subnet_cidr_reservation.go: "
    force_new = (
        ForceNew("cidrBlock", _go + "cidr_block ForceNew"),
        ForceNew("description", _go + "description ForceNew"),
        ForceNew("reservationType", _go + "reservation_type ForceNew"),
        ForceNew("subnetId", _go + "subnet_id ForceNew"),
    )
    computed = ("ownerId",)

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        args = some(
            {
                "SubnetId": inputs["subnetId"],
                "Cidr": inputs["cidrBlock"],
                "ReservationType": inputs["reservationType"],
                "Description": inputs.get("description"),
            }
        )
        id_ = aws.ec2.create_subnet_cidr_reservation(**args)["SubnetCidrReservation"][
            "SubnetCidrReservationId"
        ]
        return id_, until(lambda: self.read(aws, req, id_, inputs))

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        reservation_id, subnet_id = self._key(id_, state)

        def find() -> list[Raw]:
            answer = aws.ec2.get_subnet_cidr_reservations(SubnetId=subnet_id)
            every = answer.get("SubnetIpv4CidrReservations", []) + answer.get(
                "SubnetIpv6CidrReservations", []
            )
            return [r for r in every if r["SubnetCidrReservationId"] == reservation_id]

        found = find_one(find)
        return some(
            {
                "cidrBlock": found["Cidr"],
                "description": found.get("Description"),
                "ownerId": found.get("OwnerId"),
                "reservationType": found["ReservationType"],
                "subnetId": found["SubnetId"],
            }
        )

    def imported_id(self, aws: Aws, req: Request, id_: str, outputs: Props) -> str:
        return self._key(id_, outputs)[0]

    @staticmethod
    def _key(id_: str, state: Props) -> tuple[str, str]:
        """(reservation id, subnet id) from the id and the state, or from the
        importer's ``<subnet id>:<reservation id>``."""
        subnet_id, sep, reservation_id = id_.partition(":")
        if sep:
            return reservation_id, subnet_id
        return id_, str(state.get("subnetId", ""))

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        ignore_not_found(
            lambda: aws.ec2.delete_subnet_cidr_reservation(
                SubnetCidrReservationId=self._key(id_, state)[0]
            )
        )
