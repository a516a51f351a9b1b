"""``aws:ec2`` network interfaces (``aws:ec2/networkInterface:NetworkInterface``).

``force_new`` is what the Terraform AWS provider (``internal/service/ec2/
vpc_network_interface.go``) marks ``ForceNew``, with its CustomizeDiff's conditional
replacement on ``private_ips``; everything else changes in place with
ModifyNetworkInterfaceAttribute and Assign/UnassignPrivateIpAddresses. Waits follow the
Terraform provider's, so the calls are right for AWS too; against moto every wait ends
at its first poll.
"""

from __future__ import annotations

from pulumi.runtime import rpc

from automation.sandbox.provider.model import (
    COMPUTED_ONLY,
    MOTO_LACKS,
    REGION,
    TERRAFORM_ONLY,
    UNTRIED,
    Aws,
    ForceNew,
    NotFound,
    Props,
    Request,
    ResourceType,
    register,
)
from automation.sandbox.provider.types.ec2_calls import (
    SRC,
    Raw,
    changed,
    client_token,
    ec2_arn,
    ignore_gone,
    one,
    retag,
    some,
    tag_outputs,
    tag_spec,
    until,
)

_ENI = SRC + "vpc_network_interface.go"
_DETACH = 10 * 60.0  # the Terraform provider's NetworkInterfaceDetachedTimeout


def _find_interface(aws: Aws, id_: str) -> Raw:
    return one(
        lambda: aws.ec2.describe_network_interfaces(NetworkInterfaceIds=[id_])["NetworkInterfaces"]
    )


@register
class NetworkInterface(ResourceType):
    """``aws:ec2/networkInterface:NetworkInterface`` — ``vpc_network_interface.go``:
    ``subnet_id`` and ``interface_type`` ForceNew; ``private_ips`` forces a new interface
    only when the primary address (the first of the state's ``private_ip_list``) is not
    among the new ones (CustomizeDiff ``ForceNewIf("private_ips")``, unless
    ``private_ip_list_enabled``; AWS cannot change a primary address), so adding or
    dropping a secondary address is in place (Assign/UnassignPrivateIpAddresses);
    ``description``, ``security_groups``, ``source_dest_check`` and tags change in place.
    Delete detaches the interface first (force), as Terraform does."""

    token = "aws:ec2/networkInterface:NetworkInterface"
    not_read = {
        **dict.fromkeys(
            ("connectionTrackingSpecification", "enaSrdSpecification", "ipv4PrefixCount",
             "ipv4Prefixes", "ipv6PrefixCount", "ipv6Prefixes", "outpostArn"),
            MOTO_LACKS,
        ),
        **dict.fromkeys(
            ("enablePrimaryIpv6", "ipv6AddressListEnabled", "ipv6AddressLists"),
            "IPv6 settings the program never makes (its subnets have no IPv6): " + UNTRIED,
        ),
        "privateIpListEnabled": TERRAFORM_ONLY,
        "privateDnsName": f"moto does not report it; {COMPUTED_ONLY}",
        "region": REGION,
    }  # fmt: skip
    force_new = (
        ForceNew("interfaceType", _ENI + ": interface_type ForceNew"),
        ForceNew("subnetId", _ENI + ": subnet_id ForceNew"),
    )
    computed = (
        "arn",
        "attachments",
        "interfaceType",
        "macAddress",
        "ownerId",
        "privateDnsName",
        "privateIp",
        "privateIpLists",
        "privateIps",
        "privateIpsCount",
        "securityGroups",
        "tagsAll",
    )
    optional_computed = (
        "ipv6AddressCount", "privateIp", "privateIpLists", "privateIps", "privateIpsCount",
        "securityGroups",
    )  # fmt: skip

    def check(self, req: Request, news: Props) -> Props:
        return {"sourceDestCheck": True, **news}

    def forced_new(self, olds: Props, old_inputs: Props, news: Props) -> tuple[str, ...]:
        """An address still unknown in a preview is not the primary (upstream compares
        the primary with each member of the planned set)."""
        new = news.get("privateIps")
        if news.get("privateIpListEnabled") or new is None:
            return ()
        primary = next(iter(olds.get("privateIpLists") or []), "")
        known = new if isinstance(new, list) else []
        return () if primary in known and primary != rpc.UNKNOWN else ("privateIps",)

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        ips = list(inputs.get("privateIps") or [])
        args = some(
            {
                "SubnetId": inputs["subnetId"],
                "Description": inputs.get("description"),
                "InterfaceType": inputs.get("interfaceType"),
                "Groups": list(inputs.get("securityGroups") or []) or None,
                # The first address is the primary one (expandPrivateIPAddressSpecifications).
                "PrivateIpAddresses": [
                    {"PrivateIpAddress": ip, **({"Primary": True} if i == 0 else {})}
                    for i, ip in enumerate(ips)
                ]
                or None,
            }
        )
        created = aws.ec2.create_network_interface(
            ClientToken=client_token(), **args, **tag_spec("network-interface", inputs.get("tags"))
        )
        id_ = created["NetworkInterface"]["NetworkInterfaceId"]
        until(lambda: _find_interface(aws, id_), lambda eni: eni["Status"] == "available")
        if not inputs.get("sourceDestCheck", True):
            self._source_dest_check(aws, id_, False)
        return id_, self.read(aws, req, id_, inputs)

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        eni = _find_interface(aws, id_)
        owner = eni["OwnerId"]
        ips = [a["PrivateIpAddress"] for a in eni.get("PrivateIpAddresses", [])]
        ipv6 = [a["Ipv6Address"] for a in eni.get("Ipv6Addresses", [])]
        attached = eni.get("Attachment") or {}
        attachment = {
            "attachmentId": attached.get("AttachmentId"),
            "deviceIndex": attached.get("DeviceIndex"),
            "instance": attached.get("InstanceId"),
            "networkCardIndex": attached.get("NetworkCardIndex"),
        }
        return some(
            {
                "arn": ec2_arn(aws, owner, f"network-interface/{id_}"),
                "attachments": [some(attachment)] if attached else [],
                "description": eni.get("Description"),
                "interfaceType": eni.get("InterfaceType"),
                "ipv6AddressCount": len(ipv6),
                "ipv6Addresses": ipv6,
                "macAddress": eni.get("MacAddress"),
                "outpostArn": eni.get("OutpostArn"),
                "ownerId": owner,
                "privateDnsName": eni.get("PrivateDnsName"),
                "privateIp": eni.get("PrivateIpAddress"),
                "privateIpLists": ips,
                "privateIps": ips,
                "privateIpsCount": max(len(ips) - 1, 0),
                "securityGroups": [g["GroupId"] for g in eni.get("Groups", [])],
                "sourceDestCheck": eni.get("SourceDestCheck"),
                "subnetId": eni["SubnetId"],
                **tag_outputs(eni.get("TagSet")),
            }
        )

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        modify = aws.ec2.modify_network_interface_attribute
        groups = list(news.get("securityGroups") or [])
        if groups and set(groups) != set(olds.get("securityGroups") or []):
            modify(NetworkInterfaceId=id_, Groups=groups)
        if changed(olds, news, "description"):
            modify(NetworkInterfaceId=id_, Description={"Value": news.get("description") or ""})
        if changed(olds, news, "sourceDestCheck"):
            self._source_dest_check(aws, id_, bool(news.get("sourceDestCheck", True)))
        if isinstance(news.get("privateIps"), list):  # the primary stays (forced_new)
            old, new = set(olds.get("privateIps") or []), set(news["privateIps"])
            if dropped := sorted(old - new):
                aws.ec2.unassign_private_ip_addresses(
                    NetworkInterfaceId=id_, PrivateIpAddresses=dropped
                )
            if added := sorted(new - old):
                aws.ec2.assign_private_ip_addresses(
                    NetworkInterfaceId=id_, PrivateIpAddresses=added
                )
        retag(aws, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        try:
            attachment = _find_interface(aws, id_).get("Attachment")
        except NotFound:
            return
        if attachment:
            ignore_gone(
                lambda: aws.ec2.detach_network_interface(
                    AttachmentId=attachment["AttachmentId"], Force=True
                )
            )

            def detached() -> bool:
                try:
                    now = _find_interface(aws, id_).get("Attachment")
                except NotFound:
                    return True
                return not now or now.get("Status") == "detached"

            until(detached, bool, _DETACH)
        ignore_gone(lambda: aws.ec2.delete_network_interface(NetworkInterfaceId=id_))

    @staticmethod
    def _source_dest_check(aws: Aws, id_: str, value: bool) -> None:
        aws.ec2.modify_network_interface_attribute(
            NetworkInterfaceId=id_, SourceDestCheck={"Value": value}
        )
