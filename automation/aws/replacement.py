"""Replace an Auto Scaling group member with a fresh instance (seed 000: "roll them again").

The instance is terminated through its group with ``ShouldDecrementDesiredCapacity``
false, so the group launches a fresh instance from its launch template at once — the
documented way to recycle one member (``TerminateInstanceInAutoScalingGroup``). An
instance already shutting down or gone is not terminated again, so a run resumed
after a crash repeats nothing destructive.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from automation.core.errors import PreconditionFailed, from_client_error

if TYPE_CHECKING:
    from mypy_boto3_autoscaling import AutoScalingClient
    from mypy_boto3_ec2 import EC2Client

GONE = frozenset({"shutting-down", "terminated"})
GROUP_TAG = "aws:autoscaling:groupName"
REPLACED_IN = "kubeshift.io/replaced-in-group"
"""Tagged on an instance before kubeshift terminates it: a terminated instance stays
listed for about an hour, so a resumed run still finds the group to wait for (a
detached instance loses the group's own tag)."""


@dataclass(frozen=True)
class Member:
    """One instance and the Auto Scaling group it belongs to."""

    instance_id: str
    group: str
    state: str

    @property
    def gone(self) -> bool:
        return self.state in GONE


def member_of_group(ec2: EC2Client, autoscaling: AutoScalingClient, instance_id: str) -> Member:
    """The instance's group and state; refused when it belongs to no group."""
    try:
        found = ec2.describe_instances(InstanceIds=[instance_id])["Reservations"]
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "InvalidInstanceID.NotFound":
            return Member(instance_id, "", "terminated")
        raise from_client_error(exc, f"describe instance {instance_id}") from exc
    instances = [i for r in found for i in r.get("Instances", [])]
    state = instances[0]["State"]["Name"] if instances else "terminated"
    tags = {t["Key"]: t["Value"] for i in instances for t in i.get("Tags", [])}
    group = tags.get(GROUP_TAG) or tags.get(REPLACED_IN, "")
    if not group and state not in GONE:
        try:
            answer = autoscaling.describe_auto_scaling_instances(InstanceIds=[instance_id])
        except ClientError as exc:
            raise from_client_error(exc, f"find the group of {instance_id}") from exc
        groups = [a["AutoScalingGroupName"] for a in answer.get("AutoScalingInstances", [])]
        group = groups[0] if groups else ""
    if not group and state not in GONE:
        raise PreconditionFailed(
            f"Instance {instance_id} belongs to no Auto Scaling group; kubeshift replaces "
            "only group members (a lone instance would not come back)."
        )
    return Member(instance_id, group, state)


def terminate_for_replacement(
    ec2: EC2Client, autoscaling: AutoScalingClient, member: Member
) -> bool:
    """Terminate ``member`` so its group launches a fresh one; False if already gone."""
    if member.gone:
        return False
    try:
        ec2.create_tags(
            Resources=[member.instance_id], Tags=[{"Key": REPLACED_IN, "Value": member.group}]
        )
        autoscaling.terminate_instance_in_auto_scaling_group(
            InstanceId=member.instance_id, ShouldDecrementDesiredCapacity=False
        )
    except ClientError as exc:
        raise from_client_error(exc, f"terminate {member.instance_id} in {member.group}") from exc
    return True


def in_service(autoscaling: AutoScalingClient, group: str) -> tuple[int, list[str]]:
    """The group's desired capacity and its InService instance ids."""
    try:
        answer = autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=[group])
    except ClientError as exc:
        raise from_client_error(exc, f"describe Auto Scaling group {group}") from exc
    groups = answer.get("AutoScalingGroups", [])
    if not groups:
        raise PreconditionFailed(f"Auto Scaling group {group} no longer exists.")
    members = [
        i["InstanceId"]
        for i in groups[0].get("Instances", [])
        if i.get("LifecycleState") == "InService"
    ]
    return groups[0]["DesiredCapacity"], sorted(members)


DESCRIBE_GROUPS_AT_ONCE = 100
"""``DescribeAutoScalingGroups`` takes at most 100 group names per call."""


def in_service_of(autoscaling: AutoScalingClient, groups: Sequence[str]) -> list[str]:
    """The InService instance ids of every group in ``groups``, one call per 100 groups;
    a group that no longer exists is one sentence."""
    found: dict[str, list[str]] = {}
    for start in range(0, len(groups), DESCRIBE_GROUPS_AT_ONCE):
        names = list(groups[start : start + DESCRIBE_GROUPS_AT_ONCE])
        try:
            pages = autoscaling.get_paginator("describe_auto_scaling_groups").paginate(
                AutoScalingGroupNames=names
            )
            for page in pages:
                for group in page.get("AutoScalingGroups", []):
                    found[group["AutoScalingGroupName"]] = [
                        i["InstanceId"]
                        for i in group.get("Instances", [])
                        if i.get("LifecycleState") == "InService"
                    ]
        except ClientError as exc:
            raise from_client_error(exc, f"describe Auto Scaling groups {names[0]}…") from exc
    if missing := [g for g in groups if g not in found]:
        raise PreconditionFailed(f"Auto Scaling group {missing[0]} no longer exists.")
    return sorted(i for g in groups for i in found[g])
