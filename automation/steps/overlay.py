"""overlay-switch steps (seed 002): leave IPIP only when every route exists.

Gardener's rule, kept exactly: every node must report ``NetworkUnavailable=False``
with reason ``RouteCreated``; until then the overlay stays and the gate keeps
reporting which nodes are missing. kubeshift adds what Gardener lacks: a deadline,
a per-node report, and a check of the route tables themselves.
"""

from __future__ import annotations

from typing import Literal

from automation.core.waiting import Pending
from automation.model.context import HookContext
from automation.model.phase import HookResult

ROLL_TOKEN = "native-routing"
ROLL_BACK_TOKEN = "ipip"  # the roll that takes native-routing back (``kubeshift back``)


def disable_ipip(ctx: HookContext) -> HookResult:
    return _ipip_mode(ctx, "Never")


def enable_ipip(ctx: HookContext) -> HookResult:
    """native-routing taken back: the IP pool encapsulates again (``ipipMode: Always``)."""
    return _ipip_mode(ctx, "Always")


def _ipip_mode(ctx: HookContext, mode: Literal["Always", "Never"]) -> HookResult:
    from automation.kube.calico import set_ipip_mode

    kube = ctx.clients.kube("primary")
    change = set_ipip_mode(kube.custom, ctx.settings.calico.ip_pool, mode, dry_run=ctx.dry_run)
    return HookResult(changed=change.changed, message=change.message)


def roll_calico(ctx: HookContext) -> HookResult:
    return _roll(ctx, ROLL_TOKEN)


def roll_calico_back(ctx: HookContext) -> HookResult:
    """calico-node restarted once more, to take the pool's IPIP mode back up."""
    return _roll(ctx, ROLL_BACK_TOKEN)


def _roll(ctx: HookContext, token: str) -> HookResult:
    from automation.kube.calico import restart_daemonset

    calico = ctx.settings.calico
    change = restart_daemonset(
        ctx.clients.kube("primary").apps, calico.namespace, calico.daemonset, token,
        dry_run=ctx.dry_run,
    )  # fmt: skip
    return HookResult(changed=change.changed, message=change.message)


def calico_rolled(ctx: HookContext) -> Pending:
    from automation.kube.calico import daemonset_rolled

    calico = ctx.settings.calico
    return daemonset_rolled(ctx.clients.kube("primary").apps, calico.namespace, calico.daemonset)
