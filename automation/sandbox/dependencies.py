"""Stand-ins for the security groups a cni-swap stack names as its dependencies.

``kubeshift:migration.mirror.dependency_security_group_ids`` names groups another team
owns (a database's, a cache's) that admit the primary's nodes; the mirror must be
admitted too. They do not exist in moto, so once the live cluster is built the sandbox
makes one per id in the cluster's VPC, admitting the cluster's worker security group
on a database port as the real one would, and aims the workspace's stack file at it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from automation.aws.nodes import cluster_tag_key
from automation.sandbox.instance_nodes import MEMBER_TAGS

if TYPE_CHECKING:
    from mypy_boto3_ec2 import EC2Client

DATABASE_PORT = 5432
STANDS_IN_FOR = "kubeshift.io/sandbox-stands-in-for"


@dataclass(frozen=True)
class StandIn:
    declared: str
    group_id: str

    def __str__(self) -> str:
        return (
            f"dependency security group {self.declared} -> {self.group_id} (made in moto, "
            f"admits the cluster's workers on tcp/{DATABASE_PORT})"
        )


def _worker_groups(ec2: EC2Client, cluster: str) -> tuple[str, set[str]]:
    """The cluster's VPC and the security groups of its running workers."""
    pages = ec2.get_paginator("describe_instances").paginate(
        Filters=[
            {"Name": "tag-key", "Values": [cluster_tag_key(cluster)]},
            {"Name": "instance-state-name", "Values": ["running"]},
        ]
    )
    vpcs: set[str] = set()
    groups: set[str] = set()
    for page in pages:
        for reservation in page["Reservations"]:
            for instance in reservation["Instances"]:
                tags = {t["Key"] for t in instance.get("Tags", [])}
                if tags.intersection(MEMBER_TAGS) or "VpcId" not in instance:
                    continue
                vpcs.add(instance["VpcId"])
                groups.update(g["GroupId"] for g in instance.get("SecurityGroups", []))
    if len(vpcs) != 1 or not groups:
        raise ValueError(f"expected the running workers of {cluster} in one VPC, found {vpcs}")
    # The workers' own group: the one of theirs tagged for the cluster (not the group
    # every cluster instance shares).
    described = ec2.describe_security_groups(GroupIds=sorted(groups))["SecurityGroups"]
    tagged = {
        g["GroupId"]
        for g in described
        if cluster_tag_key(cluster) in {t["Key"] for t in g.get("Tags", [])}
    }
    return vpcs.pop(), tagged or groups


def _existing(ec2: EC2Client, group_id: str) -> bool:
    from botocore.exceptions import ClientError

    try:
        ec2.describe_security_groups(GroupIds=[group_id])
    except ClientError:
        return False
    return True


def stand_in(ec2: EC2Client, cluster: str, declared: list[str]) -> list[StandIn]:
    """A group admitting the workers for each id moto does not hold (idempotent: one
    already made for an id, found by its tag, is reused)."""
    missing = [d for d in declared if not _existing(ec2, d)]
    if not missing:
        return []
    vpc_id, workers = _worker_groups(ec2, cluster)
    made: list[StandIn] = []
    for declared_id in missing:
        found = ec2.describe_security_groups(
            Filters=[
                {"Name": f"tag:{STANDS_IN_FOR}", "Values": [declared_id]},
                {"Name": "vpc-id", "Values": [vpc_id]},
            ]
        )["SecurityGroups"]
        if found:
            made.append(StandIn(declared_id, found[0]["GroupId"]))
            continue
        group_id = ec2.create_security_group(
            GroupName=f"sandbox-dependency-{declared_id}",
            Description=f"Sandbox stand-in for {declared_id}, a dependency of {cluster}",
            VpcId=vpc_id,
            TagSpecifications=[
                {
                    "ResourceType": "security-group",
                    "Tags": [{"Key": STANDS_IN_FOR, "Value": declared_id}],
                }
            ],
        )["GroupId"]
        permission: Any = {
            "IpProtocol": "tcp",
            "FromPort": DATABASE_PORT,
            "ToPort": DATABASE_PORT,
            "UserIdGroupPairs": [{"GroupId": g} for g in sorted(workers)],
        }
        ec2.authorize_security_group_ingress(GroupId=group_id, IpPermissions=[permission])
        made.append(StandIn(declared_id, group_id))
    return made
