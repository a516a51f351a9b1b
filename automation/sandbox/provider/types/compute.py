"""``aws:ec2`` launch templates and network interfaces, and ``aws:ebs`` volumes.

``force_new`` is what the Terraform AWS provider (hashicorp/terraform-provider-aws
``internal/service/ec2/``) marks ``ForceNew``; pulumi-aws replaces on exactly those.
Everything else changes in place: a launch template gets a new version (made the
default with ``updateDefaultVersion``), an interface ModifyNetworkInterfaceAttribute,
a volume ModifyVolume. Waits follow the Terraform provider's, so the calls are right for
AWS too; against moto every wait ends at its first poll.
"""

from __future__ import annotations

import secrets
import uuid
from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import ClientError
from pulumi.runtime import rpc

from automation.sandbox.provider.diffing import IGNORED, contains_unknown, same, unset
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
    tags_dict,
    tags_list,
)
from automation.sandbox.provider.types.ec2_calls import (
    SRC,
    Raw,
    account_id,
    autoname,
    changed,
    ec2_arn,
    ignore_gone,
    integer,
    is_gone,
    one,
    retag,
    retry,
    some,
    tag_outputs,
    tag_spec,
    until,
    until_gone,
)


def _token() -> str:
    return str(uuid.uuid4())


def _declared_change(olds: Props, news: Props, prop: str) -> bool:
    """A change of an Optional+Computed property: only when the program declares it."""
    return prop in news and changed(olds, news, prop)


# --- launch template ------------------------------------------------------------------

_LT = SRC + "ec2_launch_template.go"
_LT_NAME = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789().-/_"
# Launch data sent and read back as AWS holds it: property -> LaunchTemplateData field.
# A block (one-element list in Terraform, an object here) maps field for field, each
# name the API's with a lower-case first letter.
_LT_PASSED = {
    "capacityReservationSpecification": "CapacityReservationSpecification",
    "cpuOptions": "CpuOptions",
    "creditSpecification": "CreditSpecification",
    "disableApiStop": "DisableApiStop",
    "disableApiTermination": "DisableApiTermination",
    "enclaveOptions": "EnclaveOptions",
    "hibernationOptions": "HibernationOptions",
    "instanceInitiatedShutdownBehavior": "InstanceInitiatedShutdownBehavior",
    "instanceMarketOptions": "InstanceMarketOptions",
    "kernelId": "KernelId",
    "maintenanceOptions": "MaintenanceOptions",
    "monitoring": "Monitoring",
    "placement": "Placement",
    "ramDiskId": "RamDiskId",
}
# Properties that live in a version's LaunchTemplateData (Terraform's updateKeys).
_LT_DATA = (
    *_LT_PASSED,
    "blockDeviceMappings",
    "description",
    "ebsOptimized",
    "iamInstanceProfile",
    "imageId",
    "instanceType",
    "keyName",
    "metadataOptions",
    "networkInterfaces",
    "tagSpecifications",
    "userData",
    "vpcSecurityGroupIds",
)
_METADATA = {
    "httpEndpoint": "HttpEndpoint",
    "httpProtocolIpv6": "HttpProtocolIpv6",
    "httpPutResponseHopLimit": "HttpPutResponseHopLimit",
    "httpTokens": "HttpTokens",
    "instanceMetadataTags": "InstanceMetadataTags",
}


def _nbool(value: Any) -> bool | None:
    """Terraform's nullable bool (``"true"``, ``"false"``, ``""``), or a plain bool."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return value.strip().lower() in ("1", "t", "true")
    return bool(value)


def _text(value: bool | None) -> str | None:
    return None if value is None else str(bool(value)).lower()


def _passed_request(value: Any) -> Any:
    """A passed-through property as the API takes it: ``coreCount`` -> ``CoreCount``, and
    whole numbers (doubles on the wire) as ``int``."""
    if isinstance(value, dict):
        return {
            k[:1].upper() + k[1:]: _passed_request(v) for k, v in value.items() if v is not None
        }
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _passed_output(value: Any) -> Any:
    """The reverse of :func:`_passed_request`; a time (a spot request's ``validUntil``)
    in RFC 3339, as Terraform holds it."""
    if isinstance(value, dict):
        return {k[:1].lower() + k[1:]: _passed_output(v) for k, v in value.items()}
    if isinstance(value, datetime):
        return _rfc3339(value)
    return value


def _ebs_request(ebs: Props) -> Raw:
    return some(
        {
            "DeleteOnTermination": _nbool(ebs.get("deleteOnTermination")),
            "Encrypted": _nbool(ebs.get("encrypted")),
            "Iops": integer(ebs.get("iops")) or None,
            "KmsKeyId": ebs.get("kmsKeyId"),
            "SnapshotId": ebs.get("snapshotId"),
            "Throughput": integer(ebs.get("throughput")) or None,
            "VolumeSize": integer(ebs.get("volumeSize")) or None,
            "VolumeType": ebs.get("volumeType"),
        }
    )


def _ebs_output(ebs: Raw) -> Props:
    return some(
        {
            "deleteOnTermination": _text(ebs.get("DeleteOnTermination")),
            "encrypted": _text(ebs.get("Encrypted")),
            "iops": ebs.get("Iops"),
            "kmsKeyId": ebs.get("KmsKeyId"),
            "snapshotId": ebs.get("SnapshotId"),
            "throughput": ebs.get("Throughput"),
            "volumeSize": ebs.get("VolumeSize"),
            "volumeType": ebs.get("VolumeType"),
        }
    )


def _interface_request(interface: Props) -> Raw:
    """One network interface the template attaches (``expandLaunchTemplateNetworkInterface
    SpecificationRequest``: the booleans are Terraform's nullable strings)."""
    return some(
        {
            "AssociatePublicIpAddress": _nbool(interface.get("associatePublicIpAddress")),
            "DeleteOnTermination": _nbool(interface.get("deleteOnTermination")),
            "Description": interface.get("description"),
            "DeviceIndex": integer(interface.get("deviceIndex")),
            "Groups": list(interface.get("securityGroups") or []) or None,
            "SubnetId": interface.get("subnetId"),
        }
    )


def _interface_output(interface: Raw) -> Props:
    return some(
        {
            "associatePublicIpAddress": _text(interface.get("AssociatePublicIpAddress")),
            "deleteOnTermination": _text(interface.get("DeleteOnTermination")),
            "description": interface.get("Description"),
            "deviceIndex": interface.get("DeviceIndex"),
            "securityGroups": sorted(interface.get("Groups") or []) or None,
            "subnetId": interface.get("SubnetId"),
        }
    )


def _template_data(inputs: Props) -> Raw:
    """RequestLaunchTemplateData from the inputs (``expandRequestLaunchTemplateData``;
    like Terraform it always sends UserData, so the data is never empty)."""
    data: Raw = {"UserData": inputs.get("userData") or ""}
    data |= some(
        {
            "EbsOptimized": _nbool(inputs.get("ebsOptimized")),
            "ImageId": inputs.get("imageId"),
            "InstanceType": inputs.get("instanceType"),
            "KeyName": inputs.get("keyName"),
        }
    )
    if mappings := inputs.get("blockDeviceMappings"):
        data["BlockDeviceMappings"] = [
            some(
                {
                    "DeviceName": m.get("deviceName"),
                    "Ebs": _ebs_request(m["ebs"]) if m.get("ebs") else None,
                    "NoDevice": m.get("noDevice"),
                    "VirtualName": m.get("virtualName"),
                }
            )
            for m in mappings
        ]
    if profile := inputs.get("iamInstanceProfile"):
        data["IamInstanceProfile"] = some({"Arn": profile.get("arn"), "Name": profile.get("name")})
    if options := inputs.get("metadataOptions"):
        data["MetadataOptions"] = {
            api: integer(options[prop]) if prop == "httpPutResponseHopLimit" else options[prop]
            for prop, api in _METADATA.items()
            if options.get(prop) not in (None, "", 0)
        }
    if specs := inputs.get("tagSpecifications"):
        data["TagSpecifications"] = [
            some({"ResourceType": s.get("resourceType"), "Tags": tags_list(s.get("tags")) or None})
            for s in specs
        ]
    data |= {
        api: _passed_request(inputs[prop])
        for prop, api in _LT_PASSED.items()
        if inputs.get(prop) is not None
    }
    if groups := inputs.get("vpcSecurityGroupIds"):
        data["SecurityGroupIds"] = list(groups)
    if interfaces := inputs.get("networkInterfaces"):
        data["NetworkInterfaces"] = [_interface_request(i) for i in interfaces]
    return data


def _template_outputs(data: Raw) -> Props:
    """The inputs a version's LaunchTemplateData stands for."""
    profile = data.get("IamInstanceProfile")
    options = data.get("MetadataOptions")
    mappings = data.get("BlockDeviceMappings")
    # moto copies the template's own tags (launch-template) into the data; AWS does not.
    specs = [s for s in data.get("TagSpecifications", []) if s["ResourceType"] != "launch-template"]
    return {
        **{prop: _passed_output(data.get(api)) for prop, api in _LT_PASSED.items()},
        "blockDeviceMappings": [
            some(
                {
                    "deviceName": m.get("DeviceName"),
                    "ebs": _ebs_output(m["Ebs"]) if m.get("Ebs") else None,
                    "noDevice": m.get("NoDevice"),
                    "virtualName": m.get("VirtualName"),
                }
            )
            for m in mappings
        ]
        if mappings
        else None,
        "ebsOptimized": _text(data.get("EbsOptimized")),
        "iamInstanceProfile": some({"arn": profile.get("Arn"), "name": profile.get("Name")})
        if profile
        else None,
        "imageId": data.get("ImageId"),
        "instanceType": data.get("InstanceType"),
        "keyName": data.get("KeyName"),
        "metadataOptions": {p: options[api] for p, api in _METADATA.items() if api in options}
        if options
        else None,
        "tagSpecifications": [
            {"resourceType": s["ResourceType"], "tags": tags_dict(s.get("Tags"))} for s in specs
        ]
        or None,
        "networkInterfaces": [_interface_output(i) for i in data["NetworkInterfaces"]]
        if data.get("NetworkInterfaces")
        else None,
        "userData": data.get("UserData"),
        "vpcSecurityGroupIds": data.get("SecurityGroupIds") or None,
    }


# Changes after which CustomizeDiff leaves ``default_version`` / ``latest_version`` known.
_NO_NEW_DEFAULT = frozenset({"name", "namePrefix", "description"})
_NO_NEW_LATEST = _NO_NEW_DEFAULT | {"defaultVersion", "updateDefaultVersion"}


def _changed_inputs(kind: ResourceType, olds: Props, news: Props) -> set[str]:
    """The input properties ``news`` changes from the old outputs: declared ones that
    differ, and ones the program dropped (computed outputs are not inputs)."""
    declared = {k for k in news if k not in IGNORED and not _covers(olds.get(k), news[k])}
    dropped = {
        k for k, v in olds.items()
        if k not in news and k not in kind.computed and k not in IGNORED and not unset(v)
    }  # fmt: skip
    return declared | dropped


def _new_version(olds: Props, news: Props) -> bool:
    """Whether ``news`` changes the launch data (AWS then makes a new version)."""
    return not all(_covers(olds.get(prop), news.get(prop)) for prop in _LT_DATA)


def _covers(live: Any, declared: Any) -> bool:
    """Whether the live value already is the declared one: objects match on the declared
    keys (keys AWS fills in are Terraform's Optional+Computed), tag maps exactly."""
    if isinstance(declared, dict):
        return isinstance(live, dict) and all(
            same(live.get(k), v) if k == "tags" else _covers(live.get(k), v)
            for k, v in declared.items()
        )
    if isinstance(declared, list):
        return (
            isinstance(live, list)
            and len(live) == len(declared)
            and all(map(_covers, live, declared))
        )
    return same(live, declared)


@register
class LaunchTemplate(ResourceType):
    """``aws:ec2/launchTemplate:LaunchTemplate`` — ``ec2_launch_template.go``: ``name``
    and ``name_prefix`` ForceNew; any launch-data change makes a new version
    (CreateLaunchTemplateVersion), made the default when ``updateDefaultVersion``;
    tags change in place. A missing name is autonamed at create."""

    token = "aws:ec2/launchTemplate:LaunchTemplate"
    not_read = {
        **dict.fromkeys(
            ("instanceRequirements", "licenseSpecifications", "networkPerformanceOptions",
             "privateDnsNameOptions", "secondaryInterfaces", "securityGroupNames"),
            UNTRIED,
        ),
        "region": REGION,
    }  # fmt: skip
    auto_named = "name"  # pulumi-aws autonames it: set here, replacements delete first
    force_new = (
        ForceNew("name", _LT + ": name ForceNew"),
        ForceNew("namePrefix", _LT + ": name_prefix ForceNew"),
    )
    computed = ("arn", "defaultVersion", "latestVersion", "metadataOptions", "name", "tagsAll")
    optional_computed = ("metadataOptions", "name")
    sets = ("vpcSecurityGroupIds",)  # TypeSet upstream: a reorder is no change
    defaults = {
        "disableApiStop": False, "disableApiTermination": False, "updateDefaultVersion": False,
    }  # fmt: skip
    write_only = ("updateDefaultVersion",)

    def check(self, req: Request, news: Props) -> Props:
        name = news.get("name")
        if (
            isinstance(name, str)
            and not contains_unknown(name)
            and (not 3 <= len(name) <= 128 or set(name) - set(_LT_NAME))
        ):
            raise ValueError(f"launch template name {name!r}: 3-128 of A-Z a-z 0-9 ( ) . - / _")
        if news.get("updateDefaultVersion") and news.get("defaultVersion") is not None:
            raise ValueError("set updateDefaultVersion or defaultVersion, not both")
        interfaces = news.get("networkInterfaces")
        if isinstance(interfaces, list):  # an interface's groups are a set (TypeSet)
            news = {**news, "networkInterfaces": [
                {**i, "securityGroups": sorted(i["securityGroups"])}
                if isinstance(i, dict) and isinstance(i.get("securityGroups"), list)
                and not contains_unknown(i["securityGroups"]) else i
                for i in interfaces
            ]}  # fmt: skip
        return news

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        name = inputs.get("name") or (
            f"{inputs['namePrefix']}{secrets.token_hex(13)}"
            if inputs.get("namePrefix")
            else autoname(req)
        )
        created = aws.ec2.create_launch_template(
            ClientToken=_token(),
            LaunchTemplateName=name,
            LaunchTemplateData=_template_data(inputs),
            **some({"VersionDescription": inputs.get("description")}),
            **tag_spec("launch-template", inputs.get("tags")),
        )
        id_ = created["LaunchTemplate"]["LaunchTemplateId"]
        return id_, until(lambda: self.read(aws, req, id_, inputs))

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        ec2 = aws.ec2
        template = one(
            lambda: ec2.describe_launch_templates(LaunchTemplateIds=[id_])["LaunchTemplates"]
        )
        latest = template["LatestVersionNumber"]
        version = one(
            lambda: ec2.describe_launch_template_versions(
                LaunchTemplateId=id_, Versions=[str(latest)]
            )["LaunchTemplateVersions"]
        )
        # DescribeTags, not the template's Tags: moto freezes those at create.
        tags = ec2.describe_tags(Filters=[{"Name": "resource-id", "Values": [id_]}])["Tags"]
        return some(
            {
                "arn": ec2_arn(aws, account_id(aws), f"launch-template/{id_}"),
                "defaultVersion": template["DefaultVersionNumber"],
                "description": version.get("VersionDescription"),
                "latestVersion": latest,
                "name": template["LaunchTemplateName"],
                "namePrefix": state.get("namePrefix"),
                "updateDefaultVersion": state.get("updateDefaultVersion"),
                **_template_outputs(version.get("LaunchTemplateData", {})),
                **tag_outputs(tags),
            }
        )

    def recomputed(self, olds: Props, news: Props) -> tuple[str, ...]:
        """What the provider's CustomizeDiff marks unknown (``ec2_launch_template.go``,
        ``customdiff.ComputedIf``): ``latest_version`` on a change of anything but the
        name, its prefix, the description and the default-version settings — tags
        included, though they make no version — and ``default_version`` on a change of
        anything but the name, its prefix and the description when
        ``update_default_version``. A group that references either previews as an
        update, as it does on an account."""
        changed = _changed_inputs(self, olds, news)
        recomputed = []
        if changed - _NO_NEW_LATEST:
            recomputed.append("latestVersion")
        if news.get("updateDefaultVersion") and changed - _NO_NEW_DEFAULT:
            recomputed.append("defaultVersion")
        return tuple(recomputed)

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        latest = integer(olds.get("latestVersion"))
        if _new_version(olds, news):
            version = aws.ec2.create_launch_template_version(
                ClientToken=_token(),
                LaunchTemplateId=id_,
                LaunchTemplateData=_template_data(news),
                **some({"VersionDescription": news.get("description")}),
            )
            latest = version["LaunchTemplateVersion"]["VersionNumber"]
        default = None
        if news.get("updateDefaultVersion"):
            default = latest
        elif _declared_change(olds, news, "defaultVersion"):
            default = integer(news["defaultVersion"])
        if default is not None:
            aws.ec2.modify_launch_template(LaunchTemplateId=id_, DefaultVersion=str(default))
        retag(aws, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        ignore_gone(lambda: aws.ec2.delete_launch_template(LaunchTemplateId=id_))


# --- network interface ----------------------------------------------------------------

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
    sets = ("securityGroups", "privateIps", "ipv6Addresses")
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
            ClientToken=_token(), **args, **tag_spec("network-interface", inputs.get("tags"))
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


# --- EBS volume -----------------------------------------------------------------------

_EBS = SRC + "ebs_volume.go"
_VOLUME_CREATE = 5 * 60.0  # the Terraform provider's timeouts
_VOLUME_UPDATE = 5 * 60.0
_VOLUME_DELETE = 10 * 60.0
_PROVISIONED = ("io1", "io2")


def _find_volume(aws: Aws, id_: str) -> Raw:
    volume = one(lambda: aws.ec2.describe_volumes(VolumeIds=[id_])["Volumes"])
    if volume.get("State") == "deleted":
        raise NotFound(f"{id_} is deleted")
    return volume


def _rfc3339(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@register
class Volume(ResourceType):
    """``aws:ebs/volume:Volume`` — ``ebs_volume.go``: ``availability_zone``,
    ``encrypted``, ``kms_key_id``, ``multi_attach_enabled``, ``outpost_arn`` and
    ``snapshot_id`` ForceNew; ``size``, ``type``, ``iops`` and ``throughput`` change with
    ModifyVolume; tags in place. ``finalSnapshot`` snapshots the volume before deleting."""

    token = "aws:ebs/volume:Volume"
    not_read = {
        "outpostArn": "moto has no Outposts, so no sandbox volume has one",
        "volumeInitializationRate": MOTO_LACKS,
        "region": REGION,
    }
    force_new = (
        ForceNew("availabilityZone", _EBS + ": availability_zone ForceNew"),
        ForceNew("encrypted", _EBS + ": encrypted ForceNew"),
        ForceNew("kmsKeyId", _EBS + ": kms_key_id ForceNew"),
        ForceNew("multiAttachEnabled", _EBS + ": multi_attach_enabled ForceNew"),
        ForceNew("outpostArn", _EBS + ": outpost_arn ForceNew"),
        ForceNew("snapshotId", _EBS + ": snapshot_id ForceNew"),
    )
    computed = (
        "arn",
        "createTime",
        "encrypted",
        "iops",
        "kmsKeyId",
        "size",
        "snapshotId",
        "tagsAll",
        "throughput",
        "type",
    )
    write_only = ("finalSnapshot",)
    optional_computed = (
        "encrypted", "iops", "kmsKeyId", "size", "snapshotId", "throughput", "type"
    )  # fmt: skip
    defaults = {"finalSnapshot": False, "multiAttachEnabled": False}

    def check(self, req: Request, news: Props) -> Props:
        checked = {"finalSnapshot": False, **news}
        if contains_unknown(news):
            return checked
        # resourceEBSVolumeCustomizeDiff's rules, and AtLeastOneOf(size, snapshot_id).
        kind, iops, throughput = news.get("type"), news.get("iops"), news.get("throughput")
        if not news.get("size") and not news.get("snapshotId"):
            raise ValueError("set size or snapshotId")
        if kind in _PROVISIONED and not iops:
            raise ValueError(f"iops must be set when type is {kind}")
        if iops and kind not in (*_PROVISIONED, "gp3"):
            raise ValueError(f"iops must not be set when type is {kind or 'gp2 (the default)'}")
        if news.get("multiAttachEnabled") and kind not in _PROVISIONED:
            raise ValueError("multiAttachEnabled needs type io1 or io2")
        if throughput and (kind != "gp3" or not 125 <= throughput <= 1000):
            raise ValueError("throughput (125-1000) is only for type gp3")
        return checked

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        args = some(
            {
                "AvailabilityZone": inputs["availabilityZone"],
                "Encrypted": inputs.get("encrypted"),
                "Iops": integer(inputs.get("iops")) or None,
                "KmsKeyId": inputs.get("kmsKeyId"),
                "MultiAttachEnabled": inputs.get("multiAttachEnabled") or None,
                "OutpostArn": inputs.get("outpostArn"),
                "Size": integer(inputs.get("size")) or None,
                "SnapshotId": inputs.get("snapshotId"),
                "Throughput": integer(inputs.get("throughput")) or None,
                "VolumeType": inputs.get("type"),
            }
        )
        created = aws.ec2.create_volume(
            ClientToken=_token(), **args, **tag_spec("volume", inputs.get("tags"))
        )
        id_ = created["VolumeId"]
        until(lambda: _find_volume(aws, id_), lambda v: v["State"] == "available", _VOLUME_CREATE)
        return id_, self.read(aws, req, id_, inputs)

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        volume = _find_volume(aws, id_)
        return some(
            {
                "arn": ec2_arn(aws, account_id(aws), f"volume/{id_}"),
                "availabilityZone": volume["AvailabilityZone"],
                "createTime": _rfc3339(volume.get("CreateTime")),
                "encrypted": bool(volume.get("Encrypted")),
                "finalSnapshot": bool(state.get("finalSnapshot")),
                "iops": volume.get("Iops"),
                "kmsKeyId": volume.get("KmsKeyId"),
                "multiAttachEnabled": bool(volume.get("MultiAttachEnabled")),
                "outpostArn": volume.get("OutpostArn"),
                "size": volume.get("Size"),
                "snapshotId": volume.get("SnapshotId"),
                "throughput": volume.get("Throughput"),
                "type": volume.get("VolumeType"),
                **tag_outputs(volume.get("Tags")),
            }
        )

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        if any(_declared_change(olds, news, p) for p in ("iops", "size", "throughput", "type")):
            kind = news.get("type") or olds.get("type")
            iops = integer(news.get("iops") or olds.get("iops"))
            throughput = integer(news.get("throughput") or olds.get("throughput"))
            args: Raw = {"VolumeId": id_}
            if _declared_change(olds, news, "iops") and iops:
                args["Iops"] = iops
            if _declared_change(olds, news, "size"):
                args["Size"] = integer(news["size"])
            if throughput and kind == "gp3":  # AWS does not keep it across a modification
                args["Throughput"] = throughput
            if _declared_change(olds, news, "type"):
                args["VolumeType"] = kind
                if kind in (*_PROVISIONED, "gp3") and iops:  # else AWS resets it (3000)
                    args["Iops"] = iops
            aws.ec2.modify_volume(**args)
            until(
                lambda: _find_volume(aws, id_),
                lambda v: v["State"] in ("available", "in-use"),
                _VOLUME_UPDATE,
            )
        retag(aws, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        ec2 = aws.ec2
        try:
            if state.get("finalSnapshot"):
                snapshot = retry(
                    lambda: ec2.create_snapshot(
                        VolumeId=id_, **tag_spec("snapshot", state.get("tagsAll"))
                    ),
                    ("SnapshotCreationPerVolumeRateExceeded",),
                    60.0,
                )
                ec2.get_waiter("snapshot_completed").wait(
                    SnapshotIds=[snapshot["SnapshotId"]],
                    WaiterConfig={"Delay": 10, "MaxAttempts": int(_VOLUME_DELETE / 10)},
                )
            retry(lambda: ec2.delete_volume(VolumeId=id_), ("VolumeInUse",), _VOLUME_DELETE)
        except ClientError as err:
            if is_gone(err):
                return
            raise
        until_gone(lambda: _find_volume(aws, id_), _VOLUME_DELETE)
