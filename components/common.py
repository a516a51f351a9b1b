"""The per-side "common" resources of a cluster: security groups and, on one side only,
the workers' IAM identity (the seed's ``worker-common`` module and its ``-migration``
twin).

When the original side is retired, its identity moves to the other side's Common with
aliases (see ``components.moves``) instead of being recreated.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi

from components.contract.naming import Namer
from components.identity import NodeIdentity, NodeIdentityArgs
from components.moves import Move
from components.security_groups import SecurityGroups, SecurityGroupsArgs

TYPE = "kubeshift:cluster:Common"


@dataclass(frozen=True)
class CommonArgs:
    """Inputs of :class:`Common`."""

    security_groups: SecurityGroupsArgs
    create_node_identity: bool = False
    """The workers' identity lives in this side's Common."""
    identity_namer: Namer | None = None
    """The identity's ORIGINAL side namer (default: the groups'); its names never change."""
    identity_moved_from: Move | None = None
    """Where the identity lived before (see :mod:`components.moves`)."""
    source_dest_check_off: bool = False
    """The workers switch off their source/destination check at boot (native routing)."""
    identity_managed: tuple[str, ...] | None = None
    """The identity's attached policies; None: kubeshift's."""
    tags: dict[str, str] = field(default_factory=dict)


class Common(pulumi.ComponentResource):
    """Security groups of one side, plus the node identity where it lives."""

    groups: SecurityGroups
    instance_profile_name: pulumi.Output[str] | None
    grants: list[pulumi.Resource]
    """What grants the workers' identity its permissions, where it lives (else none)."""

    def __init__(
        self, name: str, args: CommonArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.groups = SecurityGroups(f"{name}-sg", args.security_groups, child)
        self.instance_profile_name = None
        self.grants = []
        if args.create_node_identity:
            namer = args.identity_namer or args.security_groups.namer
            identity = NodeIdentity(
                f"{name}-node-identity",
                NodeIdentityArgs(
                    namer=namer,
                    role="node",
                    moved_from=args.identity_moved_from,
                    source_dest_check_off=args.source_dest_check_off,
                    managed=args.identity_managed,
                    tags=args.tags,
                ),
                child,
            )
            self.instance_profile_name = identity.instance_profile_name
            self.grants = identity.grants
        self.register_outputs({"instance_profile_name": self.instance_profile_name})
