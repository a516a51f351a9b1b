"""cni-swap steps: one runner per CronJob, handed between the primary and the mirror.

While the mirror serves, its copies of the CronJobs run and the primary's are
suspended; on the way back the primary's run again, and before the mirror goes each
CronJob of the primary is as it was before the scenario (``automation.kube.cronjobs``).
"""

from __future__ import annotations

from typing import Literal

from automation.model.context import HookContext
from automation.model.phase import HookResult
from automation.steps.mirror import MIRROR, PRIMARY, copy_options


def _hand_over(ctx: HookContext, to: Literal["primary", "mirror"]) -> HookResult:
    from automation.kube.cronjobs import hand_over

    primary, mirror = ctx.clients.kube(PRIMARY), ctx.clients.kube(MIRROR)
    namespaces = copy_options(ctx).namespaces
    return hand_over(to, primary, mirror, namespaces, dry_run=ctx.dry_run).as_hook_result()


def cronjobs_to_mirror(ctx: HookContext) -> HookResult:
    """Suspend the primary's CronJobs and resume their copies on the mirror."""
    return _hand_over(ctx, "mirror")


def cronjobs_to_primary(ctx: HookContext) -> HookResult:
    """Suspend the mirror's copies and resume the primary's CronJobs kubeshift suspended."""
    return _hand_over(ctx, "primary")


def cronjobs_restored(ctx: HookContext) -> HookResult:
    """Before the mirror goes: the primary's CronJobs as they were before the scenario."""
    from automation.kube.cronjobs import restore

    report = restore(ctx.clients.kube(PRIMARY), copy_options(ctx).namespaces, dry_run=ctx.dry_run)
    return report.as_hook_result()
