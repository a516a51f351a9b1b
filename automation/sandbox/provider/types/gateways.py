"""``aws:ec2`` gateways out of a VPC and the addresses they use: internet gateways,
Elastic IPs and NAT gateways.

``force_new`` is, per type, the properties the Terraform AWS provider's schema marks
``ForceNew`` (hashicorp/terraform-provider-aws ``internal/service/ec2/``), which is what
pulumi-aws replaces on; every other declared property changes in place in ``update``.
Creates and deletes wait the way the Terraform provider does (states, eventual
consistency, ``DependencyViolation`` while dependents drain), so the calls are right
for AWS too; against moto every wait ends at its first poll.
"""

from __future__ import annotations

import uuid

from botocore.exceptions import ClientError

from automation.sandbox.provider.model import (
    COMPUTED_ONLY,
    MOTO_LACKS,
    OPTIONAL_COMPUTED,
    REGION,
    Aws,
    ForceNew,
    NotFound,
    Props,
    Request,
    ResourceType,
    register,
)
from automation.sandbox.provider.types.ec2_calls import (
    DRAIN,
    PROPAGATION,
    SRC,
    Raw,
    caller_account,
    declared_differs,
    ec2_arn,
    error_code,
    find_one,
    ignore_not_found,
    is_not_found,
    retag,
    retry,
    some,
    tag_outputs,
    tag_spec,
    until,
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
        igw = aws.ec2.create_internet_gateway(**tag_spec("internet-gateway", inputs.get("tags")))
        id_ = igw["InternetGateway"]["InternetGatewayId"]
        if inputs.get("vpcId"):
            self._attach(aws, id_, inputs["vpcId"])
        return id_, until(lambda: self.read(aws, req, id_, inputs))

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        igw = self._igw(aws, id_)
        attached = [a["VpcId"] for a in igw.get("Attachments", []) if a.get("VpcId")]
        return some(
            {
                "arn": ec2_arn(aws, igw["OwnerId"], f"internet-gateway/{id_}"),
                "ownerId": igw["OwnerId"],
                "vpcId": attached[0] if attached else None,
                **tag_outputs(igw.get("Tags")),
            }
        )

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        if declared_differs(olds, news, "vpcId"):  # Optional+Computed: left out keeps the VPC
            if olds.get("vpcId"):
                self._detach(aws, id_, olds["vpcId"])
            if news.get("vpcId"):
                self._attach(aws, id_, news["vpcId"])
        retag(aws, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        try:
            igw = self._igw(aws, id_)
        except NotFound:
            return
        for attachment in igw.get("Attachments", []):
            self._detach(aws, id_, attachment["VpcId"])
        ignore_not_found(
            lambda: retry(
                lambda: aws.ec2.delete_internet_gateway(InternetGatewayId=id_),
                ("DependencyViolation",),
                DRAIN,
            )
        )

    @staticmethod
    def _igw(aws: Aws, id_: str) -> Raw:
        return find_one(
            lambda: aws.ec2.describe_internet_gateways(InternetGatewayIds=[id_])["InternetGateways"]
        )

    @staticmethod
    def _attach(aws: Aws, id_: str, vpc_id: str) -> None:
        retry(
            lambda: aws.ec2.attach_internet_gateway(InternetGatewayId=id_, VpcId=vpc_id),
            ("InvalidInternetGatewayID.NotFound",),
            PROPAGATION,
        )

    @staticmethod
    def _detach(aws: Aws, id_: str, vpc_id: str) -> None:
        # AWS refuses while the VPC still has mapped public addresses (a NAT gateway
        # being deleted): DependencyViolation, retried as the Terraform provider does.
        try:
            retry(
                lambda: aws.ec2.detach_internet_gateway(InternetGatewayId=id_, VpcId=vpc_id),
                ("DependencyViolation",),
                DRAIN,
            )
        except ClientError as err:
            if not (is_not_found(err) or error_code(err) == "Gateway.NotAttached"):
                raise


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
    force_new = (ForceNew("domain", SRC + "ec2_eip.go: domain ForceNew"),)
    computed = ("allocationId", "arn", "associationId", "publicIp", "privateIp", "tagsAll")
    optional_computed = ("networkInterface", "associateWithPrivateIp", "publicIpv4Pool")

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        address = aws.ec2.allocate_address(
            Domain=inputs.get("domain") or "vpc", **tag_spec("elastic-ip", inputs.get("tags"))
        )
        id_ = address["AllocationId"]
        return id_, until(lambda: self.read(aws, req, id_, inputs))

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        address = self._address(aws, id_)
        return some(
            {
                "allocationId": address["AllocationId"],
                "arn": ec2_arn(aws, caller_account(aws), f"elastic-ip/{id_}"),
                "associationId": address.get("AssociationId"),
                "domain": address.get("Domain"),
                "instance": address.get("InstanceId"),
                "networkBorderGroup": address.get("NetworkBorderGroup"),
                "networkInterface": address.get("NetworkInterfaceId"),
                "privateIp": address.get("PrivateIpAddress"),
                "publicIp": address.get("PublicIp"),
                "publicIpv4Pool": address.get("PublicIpv4Pool"),
                **tag_outputs(address.get("Tags")),
            }
        )

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        retag(aws, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        try:
            address = self._address(aws, id_)
        except NotFound:
            return
        if address.get("AssociationId"):
            ignore_not_found(
                lambda: aws.ec2.disassociate_address(AssociationId=address["AssociationId"])
            )
        border = some({"NetworkBorderGroup": address.get("NetworkBorderGroup")})
        ignore_not_found(lambda: aws.ec2.release_address(AllocationId=id_, **border))

    @staticmethod
    def _address(aws: Aws, id_: str) -> Raw:
        return find_one(lambda: aws.ec2.describe_addresses(AllocationIds=[id_])["Addresses"])


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
        ForceNew("allocationId", SRC + "vpc_nat_gateway.go: allocation_id ForceNew"),
        ForceNew("connectivityType", SRC + "vpc_nat_gateway.go: connectivity_type ForceNew"),
        ForceNew("subnetId", SRC + "vpc_nat_gateway.go: subnet_id ForceNew"),
    )
    computed = ("associationId", "networkInterfaceId", "privateIp", "publicIp", "tagsAll", "vpcId")

    def check(self, req: Request, news: Props) -> Props:
        return {"connectivityType": "public", **news}

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        args = some(
            {
                "AllocationId": inputs.get("allocationId"),
                "ConnectivityType": inputs.get("connectivityType") or "public",
                "SubnetId": inputs["subnetId"],
            }
        )
        nat = aws.ec2.create_nat_gateway(
            ClientToken=str(uuid.uuid4()), **args, **tag_spec("natgateway", inputs.get("tags"))
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
        return some(
            {
                "allocationId": primary.get("AllocationId"),
                "associationId": primary.get("AssociationId"),
                "connectivityType": nat.get("ConnectivityType"),
                "networkInterfaceId": primary.get("NetworkInterfaceId"),
                "privateIp": primary.get("PrivateIp"),
                "publicIp": primary.get("PublicIp"),
                "subnetId": nat.get("SubnetId"),
                "vpcId": nat.get("VpcId"),
                **tag_outputs(nat.get("Tags")),
            }
        )

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        retag(aws, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        try:
            self._nat(aws, id_)
        except NotFound:  # (moto answers 500, not NatGatewayNotFound, for unknown ids)
            return
        ignore_not_found(lambda: aws.ec2.delete_nat_gateway(NatGatewayId=id_))
        aws.ec2.get_waiter("nat_gateway_deleted").wait(
            NatGatewayIds=[id_], WaiterConfig={"Delay": 10, "MaxAttempts": 180}
        )

    @staticmethod
    def _nat(aws: Aws, id_: str) -> Raw:
        nat = find_one(lambda: aws.ec2.describe_nat_gateways(NatGatewayIds=[id_])["NatGateways"])
        if nat.get("State") == "deleted":  # listed for a while after deletion
            raise NotFound(f"{id_} is deleted")
        return nat
