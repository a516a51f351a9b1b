"""cni-swap steps: let the mirror's nodes reach the primary's dependencies, and revoke it.

Each dependency security group (RDS, caches; listed in ``kubeshift:migration.mirror``)
gets, for every rule that admits the primary's node groups, the same rule for each of
the mirror's node groups (``automation.aws.grants``); the grants are revoked before the
mirror is torn down.
"""

from __future__ import annotations

from typing import Any

from automation.core.errors import PreconditionFailed
from automation.model.context import HookContext
from automation.model.phase import HookResult
from automation.steps import outputs
from components.contract.scenarios.cni_swap import CniSwapOutputs


def mirror_grants(ctx: HookContext) -> list[Any]:
    """The ingress rules the mirror's nodes need: each rule that admits the primary's nodes.

    For every dependency SG (``kubeshift:migration.mirror.dependency_security_group_ids``)
    each rule referencing one of the primary's node SGs is mirrored for each of the
    mirror's node SGs, same protocol and ports.
    """
    from automation.aws.failures import ClientError
    from automation.aws.grants import SgGrant
    from automation.core.errors import from_client_error

    mirror_cfg = ctx.stack_config.migration.mirror
    dependencies = list(mirror_cfg.dependency_security_group_ids) if mirror_cfg else []
    if not dependencies:
        return []
    out = ctx.read_outputs(CniSwapOutputs)
    primary_sgs = set(
        outputs.need(out.node_security_group_ids, "node_security_group_ids", ctx.phase)
    )
    mirror_sgs = outputs.need(
        out.mirror_node_security_group_ids, "mirror_node_security_group_ids", ctx.phase
    )
    try:
        groups = ctx.clients.aws().ec2.describe_security_groups(GroupIds=dependencies)
    except ClientError as exc:
        raise from_client_error(exc, f"read security groups {', '.join(dependencies)}") from exc
    grants: list[Any] = []
    for group in groups["SecurityGroups"]:
        admitted = [
            perm
            for perm in group.get("IpPermissions", [])
            if any(p.get("GroupId") in primary_sgs for p in perm.get("UserIdGroupPairs", []))
        ]
        if not admitted:
            raise PreconditionFailed(
                f"Security group {group['GroupId']} admits none of the primary's node groups "
                f"({', '.join(sorted(primary_sgs))}), so there is nothing to mirror; remove it "
                "from kubeshift:migration.mirror.dependency_security_group_ids."
            )
        for perm in admitted:
            for source in mirror_sgs:
                grants.append(
                    SgGrant(
                        group_id=group["GroupId"],
                        source_group_id=source,
                        protocol=str(perm["IpProtocol"]),
                        from_port=perm.get("FromPort"),
                        to_port=perm.get("ToPort"),
                        description="kubeshift cni-swap mirror",
                    )
                )
    return grants


def _grant_result(results: Any, verb: str) -> HookResult:
    changed = any(r.changed for r in results)
    if not results:
        return HookResult(False, f"no dependency security groups to {verb}")
    return HookResult(
        changed,
        "; ".join(r.message for r in results),
        {"grants": [r.message for r in results]},
    )


def grant_mirror_access(ctx: HookContext) -> HookResult:
    """Let the mirror's nodes reach the dependencies (RDS, caches) the primary's reach."""
    from automation.aws.grants import add_grants

    grants = mirror_grants(ctx)
    return _grant_result(
        add_grants(ctx.clients.aws().ec2, grants, dry_run=ctx.dry_run) if grants else (), "grant"
    )


def revoke_mirror_access(ctx: HookContext) -> HookResult:
    """Remove the mirror's grants on the dependencies before the mirror is torn down."""
    from automation.aws.grants import remove_grants

    grants = mirror_grants(ctx)
    return _grant_result(
        remove_grants(ctx.clients.aws().ec2, grants, dry_run=ctx.dry_run) if grants else (),
        "revoke",
    )
