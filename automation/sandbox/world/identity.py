"""kops's two identities: the ``masters.<cluster domain>`` and ``nodes.<…>`` roles, each
with an instance profile of its name, kops's inline policy (:func:`.kops.kops_policy`)
and the managed policies the cluster's spec lists as external (kops attaches none of
its own)."""

from __future__ import annotations

import json

from automation.sandbox.provider.model import Aws
from automation.sandbox.world.kops import kops_policy
from automation.sandbox.world.model import Built, KopsCluster, tag_list

KOPS_POLICY = "kops:role-policy"
"""A role's inline policy: kops's grants."""
EC2 = {"Service": "ec2.amazonaws.com"}
ASSUME_EC2 = json.dumps(
    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": EC2,
                                             "Action": "sts:AssumeRole"}]}
)  # fmt: skip
"""Who may take the role: EC2, for the cluster's instances."""


def build_identities(aws: Aws, cluster: KopsCluster) -> list[Built]:
    iam = aws.client("iam")
    made = []
    external = cluster.spec.managed_policies
    for role, policies in (("masters", external.control_plane), ("nodes", external.node)):
        name = f"{role}.{cluster.domain}"
        tags = tag_list(cluster.tags(name))
        iam.create_role(RoleName=name, AssumeRolePolicyDocument=ASSUME_EC2, Tags=tags)
        made.append(Built("iam:role", name, name))
        iam.create_instance_profile(InstanceProfileName=name, Tags=tags)
        iam.add_role_to_instance_profile(InstanceProfileName=name, RoleName=name)
        made.append(Built("iam:instance-profile", name, name))
        policy, document = kops_policy(role, cluster.domain)  # type: ignore[arg-type]
        iam.put_role_policy(RoleName=name, PolicyName=policy, PolicyDocument=document)
        made.append(Built(KOPS_POLICY, policy, f"{name}:{policy}"))
        for arn in policies or []:
            iam.attach_role_policy(RoleName=name, PolicyArn=arn)
            made.append(Built("iam:role-policy-attachment", arn, f"{name}/{arn}"))
    return made
