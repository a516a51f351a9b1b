"""The tags another tool put on the live cluster, for ``kubeshift:cluster.kept_tags``.

Each resource discovery mapped is read by its service's own call, in batches as AWS
allows them (EC2's ``DescribeTags`` by resource id, 200 ids a filter; Auto Scaling
groups 50 names a call; ELBv2's ``DescribeTags`` 20 ARNs a call; IAM's ``GetRole`` and
``GetInstanceProfile``, which carry the tags, one a call). A tag the program does not
declare for that resource is one to keep; AWS's own ``aws:`` tags are never declared
by anyone. Route53 records, routes, rules, associations and attachments carry no tags.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from automation.adoption.models import AdoptedResource
from automation.aws.clients import AwsClients
from components.kept_tags import NAME

EC2_TYPES = frozenset({
    "aws:ec2/vpc:Vpc", "aws:ec2/subnet:Subnet", "aws:ec2/routeTable:RouteTable",
    "aws:ec2/internetGateway:InternetGateway", "aws:ec2/natGateway:NatGateway",
    "aws:ec2/eip:Eip", "aws:ec2/securityGroup:SecurityGroup",
    "aws:ec2/launchTemplate:LaunchTemplate", "aws:ebs/volume:Volume",
    "aws:ec2/networkInterface:NetworkInterface",
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule",
})  # fmt: skip
GROUP = "aws:autoscaling/group:Group"
ELB_TYPES = frozenset({
    "aws:lb/loadBalancer:LoadBalancer", "aws:lb/targetGroup:TargetGroup",
    "aws:lb/listener:Listener",
})  # fmt: skip
ROLE = "aws:iam/role:Role"
PROFILE = "aws:iam/instanceProfile:InstanceProfile"

Tags = dict[str, str]


def _chunks(items: Sequence[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


def _pairs(tags: Sequence[Mapping[str, Any]] | None) -> Tags:
    return {
        str(t["Key"]): str(t.get("Value", ""))
        for t in tags or []
        if not str(t["Key"]).startswith("aws:")
    }


def _ec2(clients: AwsClients, ids: list[str]) -> dict[str, Tags]:
    found: dict[str, Tags] = {i: {} for i in ids}
    paginator = clients.ec2.get_paginator("describe_tags")
    for chunk in _chunks(sorted(ids), 200):
        for page in paginator.paginate(Filters=[{"Name": "resource-id", "Values": chunk}]):
            for tag in page["Tags"]:
                if not tag["Key"].startswith("aws:"):
                    found.setdefault(tag["ResourceId"], {})[tag["Key"]] = tag.get("Value", "")
    return found


def _groups(clients: AwsClients, names: list[str]) -> dict[str, Tags]:
    found: dict[str, Tags] = {}
    for chunk in _chunks(sorted(names), 50):
        answer = clients.autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=chunk)
        for group in answer["AutoScalingGroups"]:
            found[group["AutoScalingGroupName"]] = _pairs(group.get("Tags"))  # type: ignore[arg-type]
    return found


def _balancing(clients: AwsClients, arns: list[str]) -> dict[str, Tags]:
    found: dict[str, Tags] = {}
    for chunk in _chunks(sorted(arns), 20):
        for described in clients.elbv2.describe_tags(ResourceArns=chunk)["TagDescriptions"]:
            found[described["ResourceArn"]] = _pairs(described.get("Tags"))  # type: ignore[arg-type]
    return found


def _iam(clients: AwsClients, type_: str, name: str) -> Tags:
    """``GetRole`` and ``GetInstanceProfile`` answer with the tags (up to 50, all IAM
    allows)."""
    if type_ == ROLE:
        role = clients.iam.get_role(RoleName=name)["Role"]
        return _pairs(role.get("Tags"))  # type: ignore[arg-type]
    profile = clients.iam.get_instance_profile(InstanceProfileName=name)["InstanceProfile"]
    return _pairs(profile.get("Tags"))  # type: ignore[arg-type]


def live_tags(clients: AwsClients, resources: Sequence[AdoptedResource]) -> dict[str, Tags]:
    """Logical name -> the tags its live resource carries (resources that take tags)."""
    by_id: dict[str, Tags] = {}
    by_id.update(_ec2(clients, [r.id for r in resources if r.type in EC2_TYPES]))
    by_id.update(_groups(clients, [r.id for r in resources if r.type == GROUP]))
    by_id.update(_balancing(clients, [r.id for r in resources if r.type in ELB_TYPES]))
    tags = {
        r.name: by_id.get(r.id, {})
        for r in resources
        if r.type in EC2_TYPES or r.type in ELB_TYPES or r.type == GROUP
    }
    iam = [r for r in resources if r.type in (ROLE, PROFILE)]
    tags.update({r.name: _iam(clients, r.type, r.id) for r in iam})
    return tags


def declared_tags(tags: Any) -> Tags:
    """The tags a resource's inputs declare: a map, or an Auto Scaling group's blocks."""
    if isinstance(tags, list):
        return {str(b["key"]): str(b["value"]) for b in tags if isinstance(b, Mapping)}
    return {str(k): str(v) for k, v in (tags or {}).items()}


def tags_to_keep(live: Mapping[str, Tags], declared: Mapping[str, Tags]) -> dict[str, Tags]:
    """Logical name -> the live tags the program does not declare for it, and the live
    ``Name`` where the program declares another (a rename of another tool's resource)."""
    kept = {
        name: {
            k: v
            for k, v in sorted(tags.items())
            if k not in declared[name] or (k == NAME and declared[name][k] != v)
        }
        for name, tags in sorted(live.items())
        if name in declared
    }
    return {name: tags for name, tags in kept.items() if tags}
