"""``aws:ec2`` launch templates (``aws:ec2/launchTemplate:LaunchTemplate``).

``force_new`` is what the Terraform AWS provider (``internal/service/ec2/
ec2_launch_template.go``) marks ``ForceNew``: the name and its prefix; pulumi-aws
replaces on exactly those. Any other change of the launch data makes a new version
(made the default with ``updateDefaultVersion``), and the module holds how the engine's
launch data becomes the API's ``LaunchTemplateData`` and back.
"""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Any

from automation.sandbox.provider.diffing import IGNORED, contains_unknown, same, unset
from automation.sandbox.provider.model import (
    REGION,
    UNTRIED,
    Aws,
    ForceNew,
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
    client_token,
    declared_change,
    ec2_arn,
    ignore_gone,
    integer,
    one,
    retag,
    rfc3339,
    some,
    tag_outputs,
    tag_spec,
    until,
)

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
        return rfc3339(value)
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
            ClientToken=client_token(),
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
                ClientToken=client_token(),
                LaunchTemplateId=id_,
                LaunchTemplateData=_template_data(news),
                **some({"VersionDescription": news.get("description")}),
            )
            latest = version["LaunchTemplateVersion"]["VersionNumber"]
        default = None
        if news.get("updateDefaultVersion"):
            default = latest
        elif declared_change(olds, news, "defaultVersion"):
            default = integer(news["defaultVersion"])
        if default is not None:
            aws.ec2.modify_launch_template(LaunchTemplateId=id_, DefaultVersion=str(default))
        retag(aws, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        ignore_gone(lambda: aws.ec2.delete_launch_template(LaunchTemplateId=id_))
