"""cni-swap steps: copy the workloads to the mirror, and the gates that judge the copy.

The copy (``automation.kube.copy``) takes the options the mirror's settings give; the
gates wait for the mirror's workers to be Ready, for the copies to be available there
and, after the swap, for the primary's copied workloads to be available again, and
hold the deploy freeze: nothing copied may change on the primary since the copy.
"""

from __future__ import annotations

from automation.core.waiting import Pending
from automation.model.context import HookContext
from automation.model.phase import HookResult
from automation.steps.mirror import MIRROR, PRIMARY, copy_options, expected_workers


def copy_to_mirror(ctx: HookContext) -> HookResult:
    """Copy the chosen namespaces to the mirror: stripped, images rewritten, idempotent."""
    from automation.kube.copy.copying import copy_namespaces

    report = copy_namespaces(
        ctx.clients.kube(PRIMARY),
        ctx.clients.kube(MIRROR),
        copy_options(ctx),
        dry_run=ctx.dry_run,
        reporter=ctx.progress,
    )
    for line in report.table().splitlines():
        ctx.log.info("%s", line)
    return report.as_hook_result()


def mirror_matches_primary(ctx: HookContext) -> Pending:
    """Freeze gate: nothing copied has changed on the primary since the copy."""
    from automation.kube.copy.drift import drift_since_copy

    return drift_since_copy(ctx.clients.kube(PRIMARY), ctx.clients.kube(MIRROR), copy_options(ctx))


def mirror_workloads_available(ctx: HookContext) -> Pending:
    """Every copied Deployment/StatefulSet is available on the mirror, PDBs satisfied."""
    from automation.kube.gates import workloads_available

    return workloads_available(ctx.clients.kube(MIRROR), copy_options(ctx).namespaces)


def primary_workloads_available(ctx: HookContext) -> Pending:
    """After the swap the primary's workloads are available again (their probes pass)."""
    from automation.kube.gates import workloads_available

    return workloads_available(ctx.clients.kube(PRIMARY), copy_options(ctx).namespaces)


def mirror_nodes_ready(ctx: HookContext) -> Pending:
    """The mirror's workers joined and are Ready: as many as the primary's pools start."""
    from automation.kube.gates import nodes_ready

    return nodes_ready(
        ctx.clients.kube(MIRROR),
        "!node-role.kubernetes.io/control-plane",
        expected=expected_workers(ctx),
    )
