"""The cluster's security groups: kops's three (``masters``, ``nodes``, ``api-elb``)
opened by kops's own rules. The rules kubeshift's stack file asks for beyond kops's (its
clients' ranges, its ingress load balancer's) adoption adds."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from automation.sandbox.provider.model import Aws
from automation.sandbox.world.kops import DESCRIPTIONS, KopsRule, rules_for
from automation.sandbox.world.model import Built, KopsCluster, WorldCluster, tag_spec

KOPS_RULE = "kops:security-group-rule"
"""A rule kops adds to one of its groups."""
GROUP_ROLES = ("masters", "nodes", "api-elb")


def create_group(
    aws: Aws, cluster: WorldCluster, vpc_id: str, name: str, description: str
) -> Built:
    """A group without AWS's default egress rule, which kops (and Terraform's
    ``aws_security_group``) replaces by rules of its own."""
    made = aws.ec2.create_security_group(
        GroupName=name, Description=description, VpcId=vpc_id,
        TagSpecifications=tag_spec("security-group", cluster.tags(name)),
    )  # fmt: skip
    everything = {"IpProtocol": "-1", "IpRanges": [{"CidrIp": "0.0.0.0/0"}]}
    aws.ec2.revoke_security_group_egress(GroupId=made["GroupId"], IpPermissions=[everything])
    return Built("ec2:security-group", name, made["GroupId"])


def build_kops_groups(aws: Aws, cluster: KopsCluster, vpc_id: str) -> list[Built]:
    return [
        create_group(aws, cluster, vpc_id, f"{role}.{cluster.domain}", DESCRIPTIONS[role])
        for role in GROUP_ROLES
    ]


def permission(
    protocol: str, ports: tuple[int, int] | None, peer: str, group_ids: dict[str, str]
) -> dict[str, Any]:
    """One IpPermission: ``peer`` is a role's group, or an IPv4 or IPv6 range."""
    allowed: dict[str, Any] = {"IpProtocol": protocol}
    if ports:
        allowed |= {"FromPort": ports[0], "ToPort": ports[1]}
    if peer in group_ids:
        allowed["UserIdGroupPairs"] = [{"GroupId": group_ids[peer]}]
    elif ":" in peer:
        allowed["Ipv6Ranges"] = [{"CidrIpv6": peer}]
    else:
        allowed["IpRanges"] = [{"CidrIp": peer}]
    return allowed


def authorize(
    aws: Aws, group_id: str, allowed: dict[str, Any], tags: dict[str, str], *, egress: bool
) -> list[str]:
    """Add one rule; return its ids (none when the group holds it already)."""
    ec2 = aws.ec2
    call = ec2.authorize_security_group_egress if egress else ec2.authorize_security_group_ingress
    try:
        answer = call(
            GroupId=group_id, IpPermissions=[allowed],
            TagSpecifications=tag_spec("security-group-rule", tags),
        )  # fmt: skip
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "InvalidPermission.Duplicate":
            return []
        raise
    return [r["SecurityGroupRuleId"] for r in answer.get("SecurityGroupRules", [])]


def _ports(rule: KopsRule) -> tuple[int, int] | None:
    return (rule.from_port, rule.to_port) if rule.ported else None


def open_as_kops(aws: Aws, cluster: KopsCluster, group_ids: dict[str, str]) -> list[Built]:
    """kops's own rules in its groups (Calico's too where the cluster runs it), each
    tagged with the name kops gives it."""
    added = []
    for rule in rules_for(cluster.calico):
        if rule.group not in group_ids:
            continue
        name = rule.name(cluster.domain)
        tags = cluster.tags(name)
        allowed = permission(rule.protocol, _ports(rule), rule.peer, group_ids)
        for id_ in authorize(aws, group_ids[rule.group], allowed, tags, egress=rule.egress):
            added.append(Built(KOPS_RULE, name, id_))
    return added
