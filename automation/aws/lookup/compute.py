"""Launch templates, Auto Scaling groups and their target groups, etcd volumes and the
members' fixed network interfaces."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from automation.aws.lookup.model import (
    Found,
    Lookup,
    Missing,
    Props,
    by,
    declared_tags,
    finds,
    only,
)


@finds("aws:ec2/launchTemplate:LaunchTemplate")
def launch_template(lookup: Lookup, name: str, inputs: Props) -> Found:
    """The launch template with the declared name (unique per region)."""
    template_name = inputs["name"]
    try:
        templates = lookup.clients.ec2.describe_launch_templates(
            LaunchTemplateNames=[template_name]
        )["LaunchTemplates"]
    except ClientError as exc:
        if "NotFound" not in exc.response.get("Error", {}).get("Code", ""):
            raise
        templates = []
    found = only(
        name, f"launch template {template_name}", [t["LaunchTemplateId"] for t in templates]
    )
    latest = next(t["LatestVersionNumber"] for t in templates if t["LaunchTemplateId"] == found)
    return Found(found, found, {"latestVersion": latest, "name": template_name})


def _group(lookup: Lookup, group_name: str) -> dict[str, Any] | None:
    def load() -> dict[str, Any] | None:
        groups = lookup.clients.autoscaling.describe_auto_scaling_groups(
            AutoScalingGroupNames=[group_name]
        )["AutoScalingGroups"]
        return dict(groups[0]) if groups else None

    group: dict[str, Any] | None = lookup.memo(f"asg:{group_name}", load)
    return group


@finds("aws:autoscaling/group:Group")
def autoscaling_group(lookup: Lookup, name: str, inputs: Props) -> Found:
    """The Auto Scaling group with the declared name (its id in the state)."""
    group_name = inputs["name"]
    group = _group(lookup, group_name)
    if group is None:
        raise Missing(f"{name}: no live Auto Scaling group {group_name}.")
    return Found(group_name, group_name, {"arn": group["AutoScalingGroupARN"], "name": group_name})


@finds("aws:autoscaling/attachment:Attachment")
def target_group_attachment(lookup: Lookup, name: str, inputs: Props) -> Found:
    """A target group attached to a group. pulumi-aws cannot import this type, so
    adoption records it by a create — AWS's attach call changes nothing for a target
    group already attached, which is checked here."""
    group_name, arn = inputs["autoscalingGroupName"], inputs["lbTargetGroupArn"]
    group = _group(lookup, group_name)
    attached = list(group.get("TargetGroupARNs", [])) if group else []
    if arn not in attached:
        raise Missing(f"{name}: target group {arn} is not attached to {group_name} live.")
    return Found(f"{group_name}-adopted", None)


@finds("aws:ebs/volume:Volume")
def volume(lookup: Lookup, name: str, inputs: Props) -> Found:
    """The volume in the declared AZ with the declared ``Name`` tag."""
    az = inputs["availabilityZone"]
    tag = declared_tags(inputs).get("Name", name)
    volumes = lookup.clients.ec2.describe_volumes(
        Filters=[
            by("availability-zone", az),
            by("tag:Name", tag),
            by("status", "creating", "available", "in-use"),
        ]
    )["Volumes"]
    found = only(name, f"volume named {tag} in {az}", [v["VolumeId"] for v in volumes])
    return Found(found, found)


@finds("aws:ec2/networkInterface:NetworkInterface")
def network_interface(lookup: Lookup, name: str, inputs: Props) -> Found:
    """The interface holding the declared fixed address in the declared subnet."""
    subnet_id = inputs["subnetId"]
    address = (inputs.get("privateIps") or [inputs.get("privateIp")])[0]
    if not address:
        raise Missing(f"{name}: declares no fixed address to find its network interface by.")
    interfaces = lookup.clients.ec2.describe_network_interfaces(
        Filters=[by("subnet-id", subnet_id), by("addresses.private-ip-address", address)]
    )["NetworkInterfaces"]
    found = only(
        name,
        f"network interface with {address} in {subnet_id}",
        [i["NetworkInterfaceId"] for i in interfaces],
    )
    return Found(found, found, {"privateIp": address})
