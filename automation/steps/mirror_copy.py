"""cni-swap steps: copy the workloads to the mirror, and the gates that judge the copy.

The copy (``automation.kube.copy``) takes the options the mirror's settings give; the
gates wait for the mirror's workers to be Ready, for the copies to be available there
and, after the swap, for the primary's copied workloads to be available again, and
hold the deploy freeze: nothing copied may change on the primary since the copy. Going
back, the copy is deleted from the mirror and a gate waits until it is gone.
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


def remove_copies_from_mirror(ctx: HookContext) -> HookResult:
    """The copy taken back: what it wrote on the mirror deleted (its namespaces whole)."""
    from automation.kube.copy.removal import remove_copies

    return remove_copies(
        ctx.clients.kube(MIRROR), copy_options(ctx), dry_run=ctx.dry_run
    ).as_hook_result()


def copies_gone_from_mirror(ctx: HookContext) -> Pending:
    """Nothing the copy wrote is left on the mirror (its namespaces finished terminating)."""
    from automation.kube.copy.removal import copies_gone

    return copies_gone(ctx.clients.kube(MIRROR), copy_options(ctx))


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
