"""``aws:ec2`` networking: VPC, subnets and their reservations, gateways, route tables,
routes and VPC peering.

``force_new`` is, per type, the properties the Terraform AWS provider's schema marks
``ForceNew`` (hashicorp/terraform-provider-aws ``internal/service/ec2/``), which is what
pulumi-aws replaces on. Every other declared property changes in place in ``update``.
Creates and deletes wait the way the Terraform provider does (states, eventual
consistency, ``DependencyViolation`` while dependents drain), so the calls are right
for AWS too; against moto every wait ends at its first poll.
"""

from __future__ import annotations

import time
import uuid
import zlib
from collections.abc import Callable, Mapping
from functools import lru_cache, partial
from typing import Any, TypeVar

import boto3
from botocore.exceptions import ClientError

from automation.sandbox.provider.model import (
    COMPUTED_ONLY,
    MOTO_LACKS,
    OPTIONAL_COMPUTED,
    REGION,
    UNTRIED,
    Aws,
    ForceNew,
    NotFound,
    Props,
    Request,
    ResourceType,
    register,
    tags_dict,
    tags_list,
)

T = TypeVar("T")
Raw = dict[str, Any]

_SRC = "internal/service/ec2/"
_PROPAGATION = 120.0  # the Terraform provider's ec2PropagationTimeout
_DRAIN = 600.0  # how long a delete retries DependencyViolation while dependents go
_POLL = 2.0


# --- AWS plumbing ---------------------------------------------------------------------


def _code(err: ClientError) -> str:
    return str(err.response.get("Error", {}).get("Code", ""))


def _gone(err: ClientError) -> bool:
    """``InvalidVpcID.NotFound``, ``NatGatewayNotFound``, ``InvalidRoute.NotFound``, ..."""
    return _code(err).endswith("NotFound")


def _ignore_gone(call: Callable[[], object]) -> None:
    """Run a delete-like call; the target being gone already is success."""
    try:
        call()
    except ClientError as err:
        if not _gone(err):
            raise


def _retry(call: Callable[[], T], codes: tuple[str, ...], timeout: float) -> T:
    """``call()``, retried while AWS answers one of ``codes``."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return call()
        except ClientError as err:
            if _code(err) not in codes or time.monotonic() > deadline:
                raise
        time.sleep(_POLL)


def _until(
    fetch: Callable[[], T],
    done: Callable[[T], bool] = lambda _: True,
    timeout: float = _PROPAGATION,
) -> T:
    """``fetch()`` until it finds the resource and ``done`` holds (AWS is eventually
    consistent: a resource just created may not be visible yet)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = fetch()
            if done(value):
                return value
        except NotFound:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"not ready after {timeout:.0f}s")
        time.sleep(_POLL)


def _until_gone(fetch: Callable[[], object], timeout: float) -> None:
    """Poll ``fetch()`` until it raises :class:`NotFound`."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            fetch()
        except NotFound:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"still there after {timeout:.0f}s")
        time.sleep(_POLL)


def _one(describe: Callable[[], list[Raw]]) -> Raw:
    """The single resource a Describe call names, or :class:`NotFound`."""
    try:
        found = describe()
    except ClientError as err:
        if _gone(err):
            raise NotFound(str(err)) from err
        raise
    if not found:
        raise NotFound("not found")
    return found[0]


def _filters(**by: str) -> list[dict[str, Any]]:
    """``_filters(vpc_id="vpc-1")`` -> ``[{"Name": "vpc-id", "Values": ["vpc-1"]}]``
    (``__`` in a keyword becomes ``.``)."""
    return [{"Name": k.replace("__", ".").replace("_", "-"), "Values": [v]} for k, v in by.items()]


def _some(values: Mapping[str, Any]) -> Props:
    """``values`` without what AWS left empty (``None``, ``""``)."""
    return {k: v for k, v in values.items() if v is not None and v != ""}


@lru_cache
def _partition(region: str) -> str:
    return boto3.session.Session().get_partition_for_region(region)


def _arn(aws: Aws, account: str, resource: str) -> str:
    return f"arn:{_partition(aws.region)}:ec2:{aws.region}:{account}:{resource}"


def _account(aws: Aws) -> str:
    return str(aws.client("sts").get_caller_identity()["Account"])


# --- tags -------------------------------------------------------------------------------


def _tag_spec(resource_type: str, inputs: Props) -> dict[str, Any]:
    """``TagSpecifications`` for a Create call (tag on create), if any tags are declared."""
    if not inputs.get("tags"):
        return {}
    return {
        "TagSpecifications": [{"ResourceType": resource_type, "Tags": tags_list(inputs["tags"])}]
    }


def _retag(aws: Aws, id_: str, olds: Props, news: Props) -> None:
    """Make the resource's tags go from ``olds["tags"]`` to ``news["tags"]``."""
    old: Mapping[str, str] = olds.get("tags") or {}
    new: Mapping[str, str] = news.get("tags") or {}
    if removed := [k for k in old if k not in new]:
        aws.ec2.delete_tags(Resources=[id_], Tags=[{"Key": k} for k in removed])
    if changed := {k: v for k, v in new.items() if old.get(k) != v}:
        aws.ec2.create_tags(Resources=[id_], Tags=tags_list(changed))


def _tags(raw: list[dict[str, str]] | None) -> Props:
    tags = tags_dict(raw)
    return {"tags": tags, "tagsAll": dict(tags)}


def _changed(olds: Props, news: Props, prop: str) -> bool:
    return prop in news and news[prop] != olds.get(prop)


# --- VPC, subnet, internet gateway ----------------------------------------------------

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
    force_new = (ForceNew("cidrBlock", _SRC + "vpc_.go: cidr_block ForceNew"),)
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
        vpc = aws.ec2.create_vpc(CidrBlock=inputs["cidrBlock"], **_tag_spec("vpc", inputs))
        id_ = vpc["Vpc"]["VpcId"]
        _until(lambda: self._vpc(aws, id_), lambda v: v["State"] == "available")
        self._modify(aws, id_, _VPC_DEFAULTS, inputs)
        return id_, self.read(aws, req, id_, inputs)

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        ec2 = aws.ec2
        vpc = self._vpc(aws, id_)

        def attribute(name: str) -> bool:
            answer = ec2.describe_vpc_attribute(VpcId=id_, Attribute=name)
            return bool(answer[_VPC_ATTRIBUTES[name]]["Value"])

        main = ec2.describe_route_tables(Filters=_filters(vpc_id=id_, association__main="true"))
        acl = ec2.describe_network_acls(Filters=_filters(vpc_id=id_, default="true"))
        sg = ec2.describe_security_groups(Filters=_filters(vpc_id=id_, group_name="default"))
        main_id = next((t["RouteTableId"] for t in main["RouteTables"]), None)
        return _some(
            {
                "arn": _arn(aws, vpc["OwnerId"], f"vpc/{id_}"),
                "cidrBlock": vpc["CidrBlock"],
                "defaultNetworkAclId": next((a["NetworkAclId"] for a in acl["NetworkAcls"]), None),
                "defaultRouteTableId": main_id,
                "defaultSecurityGroupId": next((g["GroupId"] for g in sg["SecurityGroups"]), None),
                "dhcpOptionsId": vpc.get("DhcpOptionsId"),
                "enableDnsHostnames": attribute("enableDnsHostnames"),
                "enableDnsSupport": attribute("enableDnsSupport"),
                "mainRouteTableId": main_id,
                "ownerId": vpc["OwnerId"],
                **_tags(vpc.get("Tags")),
            }
        )

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        self._modify(aws, id_, olds, news)
        _retag(aws, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        _ignore_gone(
            lambda: _retry(lambda: aws.ec2.delete_vpc(VpcId=id_), ("DependencyViolation",), _DRAIN)
        )

    @staticmethod
    def _vpc(aws: Aws, id_: str) -> Raw:
        return _one(lambda: aws.ec2.describe_vpcs(VpcIds=[id_])["Vpcs"])

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
        ForceNew("availabilityZone", _SRC + "vpc_subnet.go: availability_zone ForceNew"),
        ForceNew("cidrBlock", _SRC + "vpc_subnet.go: cidr_block ForceNew"),
        ForceNew("vpcId", _SRC + "vpc_subnet.go: vpc_id ForceNew"),
    )
    computed = ("arn", "availabilityZoneId", "ownerId", "tagsAll")

    def check(self, req: Request, news: Props) -> Props:
        return {"mapPublicIpOnLaunch": False, **news}

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        args = _some(
            {
                "VpcId": inputs["vpcId"],
                "CidrBlock": inputs.get("cidrBlock"),
                "AvailabilityZone": inputs.get("availabilityZone"),
            }
        )
        subnet = aws.ec2.create_subnet(**args, **_tag_spec("subnet", inputs))["Subnet"]
        id_ = subnet["SubnetId"]
        _until(lambda: self._subnet(aws, id_), lambda s: s["State"] == "available")
        if inputs.get("mapPublicIpOnLaunch"):
            self._map_public_ip(aws, id_, True)
        return id_, self.read(aws, req, id_, inputs)

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        subnet = self._subnet(aws, id_)
        return _some(
            {
                "arn": subnet.get("SubnetArn"),
                "availabilityZone": subnet["AvailabilityZone"],
                "availabilityZoneId": subnet.get("AvailabilityZoneId"),
                "cidrBlock": subnet["CidrBlock"],
                "mapPublicIpOnLaunch": bool(subnet.get("MapPublicIpOnLaunch")),
                "ownerId": subnet.get("OwnerId"),
                "vpcId": subnet["VpcId"],
                **_tags(subnet.get("Tags")),
            }
        )

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        if _changed(olds, news, "mapPublicIpOnLaunch"):
            self._map_public_ip(aws, id_, bool(news["mapPublicIpOnLaunch"]))
        _retag(aws, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        _ignore_gone(
            lambda: _retry(
                lambda: aws.ec2.delete_subnet(SubnetId=id_), ("DependencyViolation",), _DRAIN
            )
        )

    @staticmethod
    def _subnet(aws: Aws, id_: str) -> Raw:
        return _one(lambda: aws.ec2.describe_subnets(SubnetIds=[id_])["Subnets"])

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
    _go = _SRC + "vpc_subnet_cidr_reservation.go: "
    force_new = (
        ForceNew("cidrBlock", _go + "cidr_block ForceNew"),
        ForceNew("description", _go + "description ForceNew"),
        ForceNew("reservationType", _go + "reservation_type ForceNew"),
        ForceNew("subnetId", _go + "subnet_id ForceNew"),
    )
    computed = ("ownerId",)

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        args = _some(
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
        return id_, _until(lambda: self.read(aws, req, id_, inputs))

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        reservation_id, subnet_id = self._key(id_, state)

        def find() -> list[Raw]:
            answer = aws.ec2.get_subnet_cidr_reservations(SubnetId=subnet_id)
            every = answer.get("SubnetIpv4CidrReservations", []) + answer.get(
                "SubnetIpv6CidrReservations", []
            )
            return [r for r in every if r["SubnetCidrReservationId"] == reservation_id]

        found = _one(find)
        return _some(
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
        _ignore_gone(
            lambda: aws.ec2.delete_subnet_cidr_reservation(
                SubnetCidrReservationId=self._key(id_, state)[0]
            )
        )


@register
class InternetGateway(ResourceType):
    """``aws:ec2/internetGateway:InternetGateway`` — ``vpc_internet_gateway.go``: no
    ForceNew property; a new ``vpc_id`` detaches from the old VPC and attaches to it."""

    token = "aws:ec2/internetGateway:InternetGateway"
    not_read = {"region": REGION}
    force_new = ()
    computed = ("arn", "ownerId", "tagsAll")

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        igw = aws.ec2.create_internet_gateway(**_tag_spec("internet-gateway", inputs))
        id_ = igw["InternetGateway"]["InternetGatewayId"]
        if inputs.get("vpcId"):
            self._attach(aws, id_, inputs["vpcId"])
        return id_, _until(lambda: self.read(aws, req, id_, inputs))

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        igw = self._igw(aws, id_)
        attached = [a["VpcId"] for a in igw.get("Attachments", []) if a.get("VpcId")]
        return _some(
            {
                "arn": _arn(aws, igw["OwnerId"], f"internet-gateway/{id_}"),
                "ownerId": igw["OwnerId"],
                "vpcId": attached[0] if attached else None,
                **_tags(igw.get("Tags")),
            }
        )

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        if _changed(olds, news, "vpcId"):  # Optional+Computed: left out keeps the VPC
            if olds.get("vpcId"):
                self._detach(aws, id_, olds["vpcId"])
            if news.get("vpcId"):
                self._attach(aws, id_, news["vpcId"])
        _retag(aws, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        try:
            igw = self._igw(aws, id_)
        except NotFound:
            return
        for attachment in igw.get("Attachments", []):
            self._detach(aws, id_, attachment["VpcId"])
        _ignore_gone(
            lambda: _retry(
                lambda: aws.ec2.delete_internet_gateway(InternetGatewayId=id_),
                ("DependencyViolation",),
                _DRAIN,
            )
        )

    @staticmethod
    def _igw(aws: Aws, id_: str) -> Raw:
        return _one(
            lambda: aws.ec2.describe_internet_gateways(InternetGatewayIds=[id_])["InternetGateways"]
        )

    @staticmethod
    def _attach(aws: Aws, id_: str, vpc_id: str) -> None:
        _retry(
            lambda: aws.ec2.attach_internet_gateway(InternetGatewayId=id_, VpcId=vpc_id),
            ("InvalidInternetGatewayID.NotFound",),
            _PROPAGATION,
        )

    @staticmethod
    def _detach(aws: Aws, id_: str, vpc_id: str) -> None:
        # AWS refuses while the VPC still has mapped public addresses (a NAT gateway
        # being deleted): DependencyViolation, retried as the Terraform provider does.
        try:
            _retry(
                lambda: aws.ec2.detach_internet_gateway(InternetGatewayId=id_, VpcId=vpc_id),
                ("DependencyViolation",),
                _DRAIN,
            )
        except ClientError as err:
            if not (_gone(err) or _code(err) == "Gateway.NotAttached"):
                raise


# --- Elastic IP, NAT gateway --------------------------------------------------------------


@register
class Eip(ResourceType):
    """``aws:ec2/eip:Eip`` — ``ec2_eip.go``: ``domain`` ForceNew; the id is the
    allocation id."""

    token = "aws:ec2/eip:Eip"
    not_read = {
        **dict.fromkeys(
            ("address", "carrierIp", "customerOwnedIp", "customerOwnedIpv4Pool", "ipamPoolId"),
            "moto has no BYOIP, carrier, customer-owned or IPAM pools: every sandbox address "
            "is Amazon's",
        ),
        "associateWithPrivateIp": "an association argument: the stand-in's addresses are "
        "associated by their NAT gateways, not by the Eip",
        "networkBorderGroup": f"moto does not report it; {OPTIONAL_COMPUTED}",
        "publicIpv4Pool": f"moto does not report it; {OPTIONAL_COMPUTED}",
        "privateDns": COMPUTED_ONLY,
        "publicDns": COMPUTED_ONLY,
        "ptrRecord": COMPUTED_ONLY,
        "region": REGION,
    }
    force_new = (ForceNew("domain", _SRC + "ec2_eip.go: domain ForceNew"),)
    computed = ("allocationId", "arn", "associationId", "publicIp", "privateIp", "tagsAll")
    optional_computed = ("networkInterface", "associateWithPrivateIp", "publicIpv4Pool")

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        address = aws.ec2.allocate_address(
            Domain=inputs.get("domain") or "vpc", **_tag_spec("elastic-ip", inputs)
        )
        id_ = address["AllocationId"]
        return id_, _until(lambda: self.read(aws, req, id_, inputs))

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        address = self._address(aws, id_)
        return _some(
            {
                "allocationId": address["AllocationId"],
                "arn": _arn(aws, _account(aws), f"elastic-ip/{id_}"),
                "associationId": address.get("AssociationId"),
                "domain": address.get("Domain"),
                "instance": address.get("InstanceId"),
                "networkBorderGroup": address.get("NetworkBorderGroup"),
                "networkInterface": address.get("NetworkInterfaceId"),
                "privateIp": address.get("PrivateIpAddress"),
                "publicIp": address.get("PublicIp"),
                "publicIpv4Pool": address.get("PublicIpv4Pool"),
                **_tags(address.get("Tags")),
            }
        )

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        _retag(aws, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        try:
            address = self._address(aws, id_)
        except NotFound:
            return
        if address.get("AssociationId"):
            _ignore_gone(
                lambda: aws.ec2.disassociate_address(AssociationId=address["AssociationId"])
            )
        border = _some({"NetworkBorderGroup": address.get("NetworkBorderGroup")})
        _ignore_gone(lambda: aws.ec2.release_address(AllocationId=id_, **border))

    @staticmethod
    def _address(aws: Aws, id_: str) -> Raw:
        return _one(lambda: aws.ec2.describe_addresses(AllocationIds=[id_])["Addresses"])


@register
class NatGateway(ResourceType):
    """``aws:ec2/natGateway:NatGateway`` — ``vpc_nat_gateway.go``: ``allocation_id``,
    ``connectivity_type`` (default ``public``), ``subnet_id`` ForceNew; tags update.
    Create waits for ``available``, delete for ``deleted`` (a NAT gateway keeps its
    EIP and subnet busy until then)."""

    token = "aws:ec2/natGateway:NatGateway"
    not_read = {
        **dict.fromkeys(
            ("autoProvisionZones", "autoScalingIps", "availabilityMode",
             "availabilityZoneAddresses", "regionalNatGatewayAddresses",
             "regionalNatGatewayAutoMode", "routeTableId"),
            "a regional NAT gateway's: moto models zonal ones only",
        ),
        **dict.fromkeys(
            ("secondaryAllocationIds", "secondaryPrivateIpAddressCount",
             "secondaryPrivateIpAddresses"),
            "secondary addresses: " + MOTO_LACKS,
        ),
        "region": REGION,
    }  # fmt: skip
    force_new = (
        ForceNew("allocationId", _SRC + "vpc_nat_gateway.go: allocation_id ForceNew"),
        ForceNew("connectivityType", _SRC + "vpc_nat_gateway.go: connectivity_type ForceNew"),
        ForceNew("subnetId", _SRC + "vpc_nat_gateway.go: subnet_id ForceNew"),
    )
    computed = ("associationId", "networkInterfaceId", "privateIp", "publicIp", "tagsAll", "vpcId")

    def check(self, req: Request, news: Props) -> Props:
        return {"connectivityType": "public", **news}

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        args = _some(
            {
                "AllocationId": inputs.get("allocationId"),
                "ConnectivityType": inputs.get("connectivityType") or "public",
                "SubnetId": inputs["subnetId"],
            }
        )
        nat = aws.ec2.create_nat_gateway(
            ClientToken=str(uuid.uuid4()), **args, **_tag_spec("natgateway", inputs)
        )
        id_ = nat["NatGateway"]["NatGatewayId"]
        aws.ec2.get_waiter("nat_gateway_available").wait(
            NatGatewayIds=[id_], WaiterConfig={"Delay": 10, "MaxAttempts": 60}
        )
        return id_, self.read(aws, req, id_, inputs)

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        nat = self._nat(aws, id_)
        addresses = nat.get("NatGatewayAddresses", [])
        primary: Raw = next((a for a in addresses if a.get("IsPrimary") or len(addresses) == 1), {})
        return _some(
            {
                "allocationId": primary.get("AllocationId"),
                "associationId": primary.get("AssociationId"),
                "connectivityType": nat.get("ConnectivityType"),
                "networkInterfaceId": primary.get("NetworkInterfaceId"),
                "privateIp": primary.get("PrivateIp"),
                "publicIp": primary.get("PublicIp"),
                "subnetId": nat.get("SubnetId"),
                "vpcId": nat.get("VpcId"),
                **_tags(nat.get("Tags")),
            }
        )

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        _retag(aws, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        try:
            self._nat(aws, id_)
        except NotFound:  # (moto answers 500, not NatGatewayNotFound, for unknown ids)
            return
        _ignore_gone(lambda: aws.ec2.delete_nat_gateway(NatGatewayId=id_))
        aws.ec2.get_waiter("nat_gateway_deleted").wait(
            NatGatewayIds=[id_], WaiterConfig={"Delay": 10, "MaxAttempts": 180}
        )

    @staticmethod
    def _nat(aws: Aws, id_: str) -> Raw:
        nat = _one(lambda: aws.ec2.describe_nat_gateways(NatGatewayIds=[id_])["NatGateways"])
        if nat.get("State") == "deleted":  # listed for a while after deletion
            raise NotFound(f"{id_} is deleted")
        return nat


# --- route tables, routes, associations -------------------------------------------------


@register
class RouteTable(ResourceType):
    """``aws:ec2/routeTable:RouteTable`` — ``vpc_route_table.go``: ``vpc_id`` ForceNew;
    tags update. Delete first disassociates the table (as the Terraform provider does)."""

    token = "aws:ec2/routeTable:RouteTable"
    not_read = {
        **dict.fromkeys(
            ("routes", "propagatingVgws"),
            "inline routes and propagations: the program declares routes as Route "
            f"resources; {OPTIONAL_COMPUTED}",
        ),
        "region": REGION,
    }
    force_new = (ForceNew("vpcId", _SRC + "vpc_route_table.go: vpc_id ForceNew"),)
    computed = ("arn", "ownerId", "tagsAll")

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        table = aws.ec2.create_route_table(
            VpcId=inputs["vpcId"], **_tag_spec("route-table", inputs)
        )
        id_ = table["RouteTable"]["RouteTableId"]
        return id_, _until(lambda: self.read(aws, req, id_, inputs))

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        table = _route_table(aws, id_)
        return _some(
            {
                "arn": _arn(aws, table["OwnerId"], f"route-table/{id_}"),
                "ownerId": table["OwnerId"],
                "vpcId": table["VpcId"],
                **_tags(table.get("Tags")),
            }
        )

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        _retag(aws, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        try:
            table = _route_table(aws, id_)
        except NotFound:
            return
        for association in table.get("Associations", []):
            if not association.get("Main"):
                _disassociate(aws, association["RouteTableAssociationId"])
        _ignore_gone(lambda: aws.ec2.delete_route_table(RouteTableId=id_))


def _route_table(aws: Aws, id_: str) -> Raw:
    return _one(lambda: aws.ec2.describe_route_tables(RouteTableIds=[id_])["RouteTables"])


def _disassociate(aws: Aws, association_id: str) -> None:
    _ignore_gone(lambda: aws.ec2.disassociate_route_table(AssociationId=association_id))


# Route destinations and targets: Pulumi property -> EC2 API field (CreateRoute,
# ReplaceRoute, DeleteRoute, and the Routes of DescribeRouteTables).
_DESTINATIONS = {
    "destinationCidrBlock": "DestinationCidrBlock",
    "destinationIpv6CidrBlock": "DestinationIpv6CidrBlock",
    "destinationPrefixListId": "DestinationPrefixListId",
}
_TARGETS = {
    "carrierGatewayId": "CarrierGatewayId",
    "coreNetworkArn": "CoreNetworkArn",
    "egressOnlyGatewayId": "EgressOnlyInternetGatewayId",
    "gatewayId": "GatewayId",
    "localGatewayId": "LocalGatewayId",
    "natGatewayId": "NatGatewayId",
    "networkInterfaceId": "NetworkInterfaceId",
    "transitGatewayId": "TransitGatewayId",
    "vpcEndpointId": "VpcEndpointId",
    "vpcPeeringConnectionId": "VpcPeeringConnectionId",
}


def _exactly_one(props: Props, names: Mapping[str, str], what: str) -> tuple[str, str]:
    """The single ``(api_field, value)`` among ``names`` that ``props`` sets."""
    found = [(names[k], str(props[k])) for k in names if props.get(k)]
    if len(found) != 1:
        raise ValueError(f"a route needs exactly one {what} of {sorted(names)}")
    return found[0]


@register
class Route(ResourceType):
    """``aws:ec2/route:Route`` — ``vpc_route.go``: ``route_table_id`` and the destination
    (``destination_cidr_block`` / ``_ipv6_cidr_block`` / ``_prefix_list_id``) ForceNew;
    a new target (``gateway_id``, ``nat_gateway_id``, ``vpc_peering_connection_id``, ...)
    is a ReplaceRoute. The id is the provider's ``RouteCreateID``:
    ``r-<route table id><crc32 of the destination>``."""

    token = "aws:ec2/route:Route"
    not_read = {
        **dict.fromkeys(
            ("carrierGatewayId", "coreNetworkArn", "egressOnlyGatewayId", "instanceId",
             "localGatewayId", "odbNetworkArn", "transitGatewayId", "vpcEndpointId",
             "destinationIpv6CidrBlock", "destinationPrefixListId"),
            "a target or destination the program never routes (IPv4 CIDRs to internet and "
            "NAT gateways, interfaces and peering connections): read as AWS answers it, "
            "untried on moto",
        ),
        "instanceOwnerId": COMPUTED_ONLY,
        "region": REGION,
    }  # fmt: skip
    force_new = (
        ForceNew("routeTableId", _SRC + "vpc_route.go: route_table_id ForceNew"),
        ForceNew("destinationCidrBlock", _SRC + "vpc_route.go: destination_cidr_block ForceNew"),
        ForceNew(
            "destinationIpv6CidrBlock",
            _SRC + "vpc_route.go: destination_ipv6_cidr_block ForceNew",
        ),
        ForceNew(
            "destinationPrefixListId", _SRC + "vpc_route.go: destination_prefix_list_id ForceNew"
        ),
    )
    computed = ("origin", "state")

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        table_id = inputs["routeTableId"]
        destination, value = _exactly_one(inputs, _DESTINATIONS, "destination")
        target, target_id = _exactly_one(inputs, _TARGETS, "target")
        _retry(
            lambda: aws.ec2.create_route(
                RouteTableId=table_id, **{destination: value, target: target_id}
            ),
            ("InvalidParameterException", "InvalidTransitGatewayID.NotFound"),
            _PROPAGATION,
        )
        id_ = f"r-{table_id}{zlib.crc32(value.encode())}"
        return id_, _until(lambda: self.read(aws, req, id_, inputs))

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        table_id, destination, value = self._where(id_, state)
        table = _route_table(aws, table_id)
        route = next((r for r in table.get("Routes", []) if r.get(destination) == value), None)
        if route is None:
            raise NotFound(f"no route to {value} in {table_id}")
        outputs: Props = {"routeTableId": table_id}
        outputs |= {k: route[api] for k, api in _DESTINATIONS.items() if route.get(api)}
        outputs |= {k: route[api] for k, api in _TARGETS.items() if route.get(api)}
        if str(outputs.get("gatewayId", "")).startswith("vpce-"):  # endpoints come as gateways
            outputs["vpcEndpointId"] = outputs.pop("gatewayId")
        return outputs | _some({"origin": route.get("Origin"), "state": route.get("State")})

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        table_id, destination, value = self._where(id_, news)
        target, target_id = _exactly_one(news, _TARGETS, "target")
        new_target: dict[str, Any] = {target: target_id}
        if target == "GatewayId" and target_id == "local":
            new_target = {"LocalTarget": True}
        aws.ec2.replace_route(RouteTableId=table_id, **{destination: value}, **new_target)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        table_id, destination, value = self._where(id_, state)
        try:
            aws.ec2.delete_route(RouteTableId=table_id, **{destination: value})
        except ClientError as err:
            local = "cannot remove local route" in str(err)  # imported local routes
            if not (_gone(err) or local):
                raise

    @staticmethod
    def _where(id_: str, props: Props) -> tuple[str, str, str]:
        """(route table id, destination API field, destination) from the properties, or
        from an import id in the provider's ``<route table id>_<destination>`` form."""
        if props.get("routeTableId") and any(props.get(k) for k in _DESTINATIONS):
            destination, value = _exactly_one(props, _DESTINATIONS, "destination")
            return props["routeTableId"], destination, value
        table_id, _, value = id_.partition("_")
        if not value:
            raise NotFound(f"route {id_}: no route table id and destination to look up")
        if ":" in value:
            return table_id, "DestinationIpv6CidrBlock", value
        if "." in value:
            return table_id, "DestinationCidrBlock", value
        return table_id, "DestinationPrefixListId", value


def _associates(association: Raw, field: str, target: str, table_id: str) -> bool:
    return association.get(field) == target and association.get("RouteTableId") == table_id


@register
class RouteTableAssociation(ResourceType):
    """``aws:ec2/routeTableAssociation:RouteTableAssociation`` —
    ``vpc_route_table_association.go``: ``subnet_id`` and ``gateway_id`` ForceNew; a new
    ``route_table_id`` is a ReplaceRouteTableAssociation.

    That call gives the association a new id, but an update cannot change a Pulumi
    resource's id; so read and delete find the association by id, else by its subnet
    (or gateway) and route table, which is the association the update made.
    """

    token = "aws:ec2/routeTableAssociation:RouteTableAssociation"
    not_read = {
        "gatewayId": "an edge association's: the program associates subnets only; read as "
        "AWS answers it, untried on moto",
        "region": REGION,
    }
    force_new = (
        ForceNew("gatewayId", _SRC + "vpc_route_table_association.go: gateway_id ForceNew"),
        ForceNew("subnetId", _SRC + "vpc_route_table_association.go: subnet_id ForceNew"),
    )
    computed = ()

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        args = _some(
            {
                "RouteTableId": inputs["routeTableId"],
                "SubnetId": inputs.get("subnetId"),
                "GatewayId": inputs.get("gatewayId"),
            }
        )
        answer = _retry(
            lambda: aws.ec2.associate_route_table(**args),
            ("InvalidRouteTableID.NotFound",),
            _PROPAGATION,
        )
        id_ = answer["AssociationId"]
        return id_, _until(lambda: self.read(aws, req, id_, inputs))

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        return self._outputs(self._find(aws, id_, state or self._import_key(id_)))

    def imported_id(self, aws: Aws, req: Request, id_: str, outputs: Props) -> str:
        """``vpc_route_table_association.go``'s importer sets the association's id."""
        return str(self._find(aws, id_, outputs)["RouteTableAssociationId"])

    @staticmethod
    def _import_key(id_: str) -> Props:
        """``<subnet or gateway id>/<route table id>``: the importer's id form."""
        target, sep, table_id = id_.partition("/")
        if not sep:
            return {}
        prop = "subnetId" if target.startswith("subnet-") else "gatewayId"
        return {prop: target, "routeTableId": table_id}

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        current = self._find(aws, id_, olds)["RouteTableAssociationId"]
        answer = aws.ec2.replace_route_table_association(
            AssociationId=current, RouteTableId=news["routeTableId"]
        )
        new_id = answer["NewAssociationId"]
        return self._outputs(_until(lambda: self._find(aws, new_id, news)))

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        try:
            current = self._find(aws, id_, state)
        except NotFound:
            return
        _disassociate(aws, current["RouteTableAssociationId"])

    @staticmethod
    def _outputs(association: Raw) -> Props:
        return _some(
            {
                "gatewayId": association.get("GatewayId"),
                "routeTableId": association["RouteTableId"],
                "subnetId": association.get("SubnetId"),
            }
        )

    @staticmethod
    def _find(aws: Aws, id_: str, props: Props) -> Raw:
        def live(filters: list[dict[str, Any]], match: Callable[[Raw], bool]) -> Raw | None:
            tables = aws.ec2.describe_route_tables(Filters=filters)["RouteTables"]
            return next(
                (
                    a
                    for t in tables
                    for a in t.get("Associations", [])
                    if match(a) and a.get("AssociationState", {}).get("State") != "disassociated"
                ),
                None,
            )

        found = live(
            _filters(association__route_table_association_id=id_),
            lambda a: a.get("RouteTableAssociationId") == id_,
        )
        table_id = props.get("routeTableId")
        for prop, name, field in (
            ("subnetId", "association__subnet_id", "SubnetId"),
            ("gatewayId", "association__gateway_id", "GatewayId"),
        ):
            target = props.get(prop)
            if found is None and target and table_id:
                found = live(
                    _filters(**{name: target}),
                    partial(_associates, field=field, target=target, table_id=table_id),
                )
        if found is None:
            raise NotFound(f"route table association {id_} not found")
        return found


# --- VPC peering --------------------------------------------------------------------------

# Statuses the provider reads as "gone" (findVPCPeeringConnectionByID).
_PEERING_GONE = frozenset({"deleted", "expired", "failed", "rejected"})


def _peering(aws: Aws, id_: str) -> Raw:
    pcx = _one(
        lambda: aws.ec2.describe_vpc_peering_connections(VpcPeeringConnectionIds=[id_])[
            "VpcPeeringConnections"
        ]
    )
    if pcx["Status"]["Code"] in _PEERING_GONE:
        raise NotFound(f"{id_} is {pcx['Status']['Code']}")
    return pcx


def _status(pcx: Raw) -> str:
    return str(pcx["Status"]["Code"])


def _accept_if_pending(aws: Aws, id_: str, props: Props) -> None:
    """``autoAccept``: accept a connection still pending acceptance, wait for active."""
    if props.get("autoAccept") and _status(_peering(aws, id_)) == "pending-acceptance":
        aws.ec2.accept_vpc_peering_connection(VpcPeeringConnectionId=id_)
        _until(lambda: _peering(aws, id_), lambda p: _status(p) == "active", 60.0)


def _peering_outputs(aws: Aws, pcx: Raw, state: Props) -> Props:
    """The connection seen from this account: the requester's side unless this account
    owns only the accepter's (the provider's resourceVPCPeeringConnectionRead)."""
    accepter, requester = pcx["AccepterVpcInfo"], pcx["RequesterVpcInfo"]
    if accepter.get("OwnerId") != requester.get("OwnerId") and accepter.get("OwnerId") == _account(
        aws
    ):
        mine, peer = accepter, requester
    else:
        mine, peer = requester, accepter
    return _some(
        {
            "acceptStatus": _status(pcx),
            "autoAccept": state.get("autoAccept"),  # write-only: AWS never says
            "peerOwnerId": peer.get("OwnerId"),
            "peerRegion": accepter.get("Region"),
            "peerVpcId": peer.get("VpcId"),
            "vpcId": mine.get("VpcId"),
            **_tags(pcx.get("Tags")),
        }
    )


@register
class VpcPeeringConnection(ResourceType):
    """``aws:ec2/vpcPeeringConnection:VpcPeeringConnection`` —
    ``vpc_peering_connection.go``: ``peer_owner_id``, ``peer_region``, ``peer_vpc_id``,
    ``vpc_id`` ForceNew; ``auto_accept`` (accept when pending) and tags update."""

    token = "aws:ec2/vpcPeeringConnection:VpcPeeringConnection"
    not_read = {
        **dict.fromkeys(
            ("accepter", "requester"),
            "peering options: the program declares them as PeeringConnectionOptions; "
            + OPTIONAL_COMPUTED,
        ),
        "region": REGION,
    }
    force_new = (
        ForceNew("peerOwnerId", _SRC + "vpc_peering_connection.go: peer_owner_id ForceNew"),
        ForceNew("peerRegion", _SRC + "vpc_peering_connection.go: peer_region ForceNew"),
        ForceNew("peerVpcId", _SRC + "vpc_peering_connection.go: peer_vpc_id ForceNew"),
        ForceNew("vpcId", _SRC + "vpc_peering_connection.go: vpc_id ForceNew"),
    )
    computed = ("acceptStatus", "peerOwnerId", "peerRegion", "tagsAll")
    write_only = ("autoAccept",)

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        if inputs.get("peerRegion") and inputs.get("autoAccept"):
            raise ValueError("peerRegion cannot be set whilst autoAccept is true")
        args = _some(
            {
                "VpcId": inputs["vpcId"],
                "PeerVpcId": inputs["peerVpcId"],
                "PeerOwnerId": inputs.get("peerOwnerId"),
                "PeerRegion": inputs.get("peerRegion"),
            }
        )
        pcx = aws.ec2.create_vpc_peering_connection(
            **args, **_tag_spec("vpc-peering-connection", inputs)
        )
        id_ = pcx["VpcPeeringConnection"]["VpcPeeringConnectionId"]
        _until(
            lambda: _peering(aws, id_),
            lambda p: _status(p) in ("pending-acceptance", "active"),
            60.0,
        )
        _accept_if_pending(aws, id_, inputs)
        return id_, self.read(aws, req, id_, inputs)

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        return _peering_outputs(aws, _peering(aws, id_), state)

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        _accept_if_pending(aws, id_, news)
        _retag(aws, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        try:
            aws.ec2.delete_vpc_peering_connection(VpcPeeringConnectionId=id_)
        except ClientError as err:
            # "InvalidStateTransition: ... attempted to transition from failed to deleting"
            if not (_gone(err) or _code(err) == "InvalidStateTransition"):
                raise
        _until_gone(lambda: _peering(aws, id_), 60.0)


@register
class VpcPeeringConnectionAccepter(ResourceType):
    """``aws:ec2/vpcPeeringConnectionAccepter:VpcPeeringConnectionAccepter`` —
    ``vpc_peering_connection_accepter.go``: ``vpc_peering_connection_id`` ForceNew.
    Creating adopts the existing connection (id = its id), accepts it if
    ``autoAccept`` and tags it; delete only forgets it, as the provider does."""

    token = "aws:ec2/vpcPeeringConnectionAccepter:VpcPeeringConnectionAccepter"
    not_read = {
        **dict.fromkeys(
            ("accepter", "requester"),
            "peering options: the program declares them as PeeringConnectionOptions; "
            + OPTIONAL_COMPUTED,
        ),
        "region": REGION,
    }
    force_new = (
        ForceNew(
            "vpcPeeringConnectionId",
            _SRC + "vpc_peering_connection_accepter.go: vpc_peering_connection_id ForceNew",
        ),
    )
    computed = ("acceptStatus", "peerOwnerId", "peerRegion", "peerVpcId", "tagsAll", "vpcId")
    write_only = ("autoAccept",)

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        id_ = inputs["vpcPeeringConnectionId"]
        try:
            _peering(aws, id_)
        except NotFound as err:
            raise ValueError(f"VPC peering connection {id_} not found: {err}") from err
        _accept_if_pending(aws, id_, inputs)
        if inputs.get("tags"):
            aws.ec2.create_tags(Resources=[id_], Tags=tags_list(inputs["tags"]))
        return id_, self.read(aws, req, id_, inputs)

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        outputs = _peering_outputs(aws, _peering(aws, id_), state)
        return {**outputs, "vpcPeeringConnectionId": id_}

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        _accept_if_pending(aws, id_, news)
        _retag(aws, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        """Nothing to do: the connection belongs to its requester."""


# Peering option sides: Pulumi property -> (ModifyVpcPeeringConnectionOptions argument,
# the side's DescribeVpcPeeringConnections field).
_SIDES = {
    "accepter": ("AccepterPeeringConnectionOptions", "AccepterVpcInfo"),
    "requester": ("RequesterPeeringConnectionOptions", "RequesterVpcInfo"),
}


_DNS = "AllowDnsResolutionFromRemoteVpc"


def _dns(side: Mapping[str, Any] | None) -> bool:
    return bool((side or {}).get("allowRemoteVpcDnsResolution"))


@register
class PeeringConnectionOptions(ResourceType):
    """``aws:ec2/peeringConnectionOptions:PeeringConnectionOptions`` —
    ``vpc_peering_connection_options.go``: ``vpc_peering_connection_id`` ForceNew;
    ``accepter`` / ``requester`` (``allowRemoteVpcDnsResolution``) change with
    ModifyVpcPeeringConnectionOptions. Delete leaves the options as they are, as the
    provider does."""

    token = "aws:ec2/peeringConnectionOptions:PeeringConnectionOptions"
    not_read = {"region": REGION}
    force_new = (
        ForceNew(
            "vpcPeeringConnectionId",
            _SRC + "vpc_peering_connection_options.go: vpc_peering_connection_id ForceNew",
        ),
    )
    computed = ()

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        id_ = inputs["vpcPeeringConnectionId"]
        self._modify(aws, id_, {}, inputs)
        return id_, self.read(aws, req, id_, inputs)

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        pcx = _peering(aws, id_)
        outputs: Props = {"vpcPeeringConnectionId": id_}
        for side, (_, info) in _SIDES.items():
            if (options := pcx[info].get("PeeringOptions")) is not None:
                outputs[side] = {"allowRemoteVpcDnsResolution": bool(options.get(_DNS))}
        return outputs

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        self._modify(aws, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        """Nothing to do: the options live on the connection."""

    @staticmethod
    def _modify(aws: Aws, id_: str, olds: Props, news: Props) -> None:
        sides = [
            side
            for side in _SIDES
            if news.get(side) is not None
            and (side not in olds or _dns(olds[side]) != _dns(news[side]))
        ]
        if not sides:
            return
        aws.ec2.modify_vpc_peering_connection_options(
            VpcPeeringConnectionId=id_,
            **{_SIDES[s][0]: {_DNS: _dns(news[s])} for s in sides},
        )

        def settled(pcx: Raw) -> bool:  # read back until AWS shows the new options
            return all(
                bool(pcx[_SIDES[s][1]].get("PeeringOptions", {}).get(_DNS)) == _dns(news[s])
                for s in sides
            )

        _until(lambda: _peering(aws, id_), settled)
