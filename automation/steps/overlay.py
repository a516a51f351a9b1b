"""overlay-switch steps (seed 002): leave IPIP only when every route exists.

Gardener's rule, kept exactly: every node must report ``NetworkUnavailable=False``
with reason ``RouteCreated``; until then the overlay stays and the gate keeps
reporting which nodes are missing. kubeshift adds what Gardener lacks: a deadline,
a per-node report, and a check of the route tables themselves.
"""

from __future__ import annotations

from automation.core.waiting import Pending
from automation.model.context import HookContext
from automation.model.phase import HookResult

ROLL_TOKEN = "native-routing"


def disable_ipip(ctx: HookContext) -> HookResult:
    from automation.kube.calico import set_ipip_mode

    kube = ctx.clients.kube("primary")
    change = set_ipip_mode(
        kube.custom,
        ctx.settings.calico.ip_pool,
        "Never",
        dry_run=ctx.dry_run,
    )
    return HookResult(changed=change.changed, message=change.message)


def roll_calico(ctx: HookContext) -> HookResult:
    from automation.kube.calico import restart_daemonset

    calico = ctx.settings.calico
    change = restart_daemonset(
        ctx.clients.kube("primary").apps,
        calico.namespace,
        calico.daemonset,
        ROLL_TOKEN,
        dry_run=ctx.dry_run,
    )
    return HookResult(changed=change.changed, message=change.message)


def calico_rolled(ctx: HookContext) -> Pending:
    from automation.kube.calico import daemonset_rolled

    calico = ctx.settings.calico
    return daemonset_rolled(ctx.clients.kube("primary").apps, calico.namespace, calico.daemonset)
