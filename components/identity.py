"""IAM identity of cluster instances: role, instance profile, policies.

IAM is global, not per VPC, so a vpc-move does not duplicate it (the seed's flag to
"not create the InstanceProfile" on the migration side). When the original side is
retired, the identity moves under the surviving side's component with aliases: its
physical names never change.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

import pulumi
import pulumi_aws as aws

from components.contract.naming import Namer
from components.contract.tags import merge_tags
from components.moves import Move, child_options, moved_options

TYPE = "kubeshift:iam:NodeIdentity"

ASSUME_EC2 = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": "ec2.amazonaws.com"},
                "Action": "sts:AssumeRole",
            }
        ],
    }
)

SSM_CORE = "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"

WORKER_POLICIES = (
    "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly",
    SSM_CORE,
)

CONTROL_PLANE_INLINE = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "AttachOwnEtcdVolumeAndInterface",
                "Effect": "Allow",
                "Action": [
                    "ec2:AttachVolume",
                    "ec2:DescribeVolumes",
                    "ec2:AttachNetworkInterface",
                    "ec2:DescribeNetworkInterfaces",
                    "ec2:DescribeInstances",
                ],
                "Resource": "*",
            }
        ],
    }
)


def source_dest_check_statement(cluster: str) -> dict[str, object]:
    """Let an instance switch off the source/destination check (native pod routing) of
    the cluster's own instances only — what the workers' boot script runs."""
    owned = {f"aws:ResourceTag/kubernetes.io/cluster/{cluster}": "owned"}
    return {
        "Sid": "SourceDestCheckOffOnClusterInstances",
        "Effect": "Allow",
        "Action": ["ec2:ModifyInstanceAttribute"],
        "Resource": "arn:aws:ec2:*:*:instance/*",
        "Condition": {"StringEquals": owned},
    }


def route_controller_statements(cluster: str) -> list[dict[str, object]]:
    """What the AWS cloud-controller-manager's route controller calls, on the control
    plane where it runs: read tables and instances; write routes only in the cluster's
    tagged table; switch the check off only on the cluster's instances."""
    owned = {f"aws:ResourceTag/kubernetes.io/cluster/{cluster}": "owned"}
    return [
        {
            "Sid": "RouteControllerReads",
            "Effect": "Allow",
            "Action": ["ec2:DescribeRouteTables", "ec2:DescribeInstances"],
            "Resource": "*",
        },
        {
            "Sid": "RouteControllerWritesTheClusterTable",
            "Effect": "Allow",
            "Action": ["ec2:CreateRoute", "ec2:DeleteRoute", "ec2:ReplaceRoute"],
            "Resource": "arn:aws:ec2:*:*:route-table/*",
            "Condition": {"StringEquals": owned},
        },
        {**source_dest_check_statement(cluster), "Sid": "RouteControllerSourceDestCheck"},
    ]


IdentityRole = Literal["node", "control-plane"]
"""Workers or control-plane members."""


@dataclass(frozen=True)
class Policies:
    """What an identity may do: AWS managed policies and an optional inline policy."""

    managed: tuple[str, ...]
    """ARNs of the managed policies attached to the role."""
    inline: str | None = None
    """JSON of what kubeshift's boot script needs, in the role's inline policy
    ``<role>-inline``."""


POLICIES: dict[IdentityRole, Policies] = {
    "node": Policies(WORKER_POLICIES),
    "control-plane": Policies((SSM_CORE,), CONTROL_PLANE_INLINE),
}


@dataclass(frozen=True)
class NodeIdentityArgs:
    """Inputs of :class:`NodeIdentity`."""

    namer: Namer
    """Always the ORIGINAL side's namer: a moved identity keeps its physical names."""
    role: IdentityRole
    """Part of the physical names; picks the identity's :data:`POLICIES`."""
    moved_from: Move | None = None
    """Set when this identity used to live under another component."""
    source_dest_check_off: bool = False
    """Its instances switch off their own source/destination check at boot."""
    route_controller: bool = False
    """Its instances run the cloud provider's route controller (native pod routes)."""
    managed: tuple[str, ...] | None = None
    """ARNs of the policies attached to the role; None: its :data:`POLICIES` entry's."""
    boots_own_script: bool = True
    """Some of its instances boot kubeshift's script (off when every one of an adopted
    cluster's boots its first tool's, new generations and moved members included:
    nothing of kubeshift's runs to need a grant)."""
    tags: dict[str, str] = field(default_factory=dict)


def inline_policy(args: NodeIdentityArgs) -> str | None:
    """kubeshift's inline policy on the role: its :data:`POLICIES` entry (while its
    instances boot kubeshift's script) plus what the args grant; None: nothing to grant."""
    base = POLICIES[args.role].inline if args.boots_own_script else None
    extra = []
    if args.source_dest_check_off:
        extra.append(source_dest_check_statement(args.namer.tag_id))
    if args.route_controller:
        extra.extend(route_controller_statements(args.namer.tag_id))
    if not extra:
        return base
    statements = json.loads(base)["Statement"] if base else []
    return json.dumps({"Version": "2012-10-17", "Statement": [*statements, *extra]})


class NodeIdentity(pulumi.ComponentResource):
    """IAM role + instance profile (+ policy attachments) for one kind of instance."""

    instance_profile_name: pulumi.Output[str]
    role_name: pulumi.Output[str]
    grants: list[pulumi.Resource]
    """What grants the role its permissions (attachments, inline policy): an instance
    launched before them may not do what it boots to do."""

    def __init__(
        self, name: str, args: NodeIdentityArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE, name, None, moved_options(args.moved_from, opts))
        move = args.moved_from

        def child(role: str) -> pulumi.ResourceOptions:
            return child_options(self, TYPE, role, move)

        role_name = args.namer.iam_role(f"{args.role}-role")
        role = aws.iam.Role(
            f"{name}-role",
            name=role_name,
            assume_role_policy=ASSUME_EC2,
            tags=merge_tags(args.tags, {"Name": role_name}),
            opts=child("role"),
        )
        managed = POLICIES[args.role].managed if args.managed is None else args.managed
        self.grants = []
        for arn in managed:
            short = arn.rsplit("/", 1)[-1]
            self.grants.append(
                aws.iam.RolePolicyAttachment(
                    f"{name}-{short}", role=role.name, policy_arn=arn, opts=child(short)
                )
            )
        inline = inline_policy(args)
        if inline:
            policy = aws.iam.RolePolicy(
                f"{name}-inline",
                name=args.namer.inline_policy(args.role),
                role=role.name,
                policy=inline,
                opts=child("inline"),
            )
            self.grants.append(policy)
        profile_name = args.namer.instance_profile(f"{args.role}-profile")
        profile = aws.iam.InstanceProfile(
            f"{name}-profile",
            name=profile_name,
            role=role.name,
            tags=merge_tags(args.tags, {"Name": profile_name}),
            opts=child("profile"),
        )
        self.instance_profile_name = profile.name
        self.role_name = role.name
        self.register_outputs(
            {"instance_profile_name": self.instance_profile_name, "role_name": self.role_name}
        )
