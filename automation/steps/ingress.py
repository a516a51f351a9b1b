"""Ingress steps (seed 001): NodePort while old target groups serve new nodes, then back.

While workers in both VPCs serve, the old target groups can only reach pods on new
nodes through a NodePort; once the ingress pods run on new nodes the Service goes
back to LoadBalancer and the extra proxy hop disappears.
"""

from __future__ import annotations

from automation.context import HookContext
from automation.errors import PreconditionFailed
from automation.phase import HookResult
from automation.steps.availability import watched
from automation.steps.nodes import workers_in_vpc


def _switch(ctx: HookContext, service_type: str) -> HookResult:
    from automation.kube.ingress import set_service_type

    ingress = ctx.settings.ingress
    switch = set_service_type(
        ctx.clients.kube("primary").core,
        ingress.namespace,
        ingress.service,
        service_type,  # type: ignore[arg-type]
        dry_run=ctx.dry_run,
    )
    return HookResult(changed=switch.changed, message=switch.message)


def ingress_to_nodeport(ctx: HookContext) -> HookResult:
    return _switch(ctx, "NodePort")


def ingress_to_loadbalancer(ctx: HookContext) -> HookResult:
    return _switch(ctx, "LoadBalancer")


def move_ingress_pods(ctx: HookContext) -> HookResult:
    """Evict ingress pods so they reschedule onto target-VPC nodes; wait until Ready there."""
    from automation.kube.ingress import PodMove, move_pods
    from automation.kube.nodes import NodeSelection
    from automation.kube.selectors import to_string

    ingress = ctx.settings.ingress
    targets = workers_in_vpc(ctx, "target")
    if not targets:
        raise PreconditionFailed(
            f"Phase '{ctx.phase}' moves the ingress pods to the target VPC's workers, and "
            "none has joined the cluster."
        )
    move = PodMove(
        namespace=ingress.namespace,
        pod_selector=to_string(ingress.pod_selector),
        target=NodeSelection(names=targets),
    )

    def move_them() -> HookResult:
        result = move_pods(
            ctx.clients.kube("primary"),
            move,
            options=ctx.settings.drain,  # the drain's filters, budgets and limits
            limits=ctx.settings.drain_limits,
            reporter=ctx.progress,
            dry_run=ctx.dry_run,
        )
        return HookResult(changed=result.changed, message=result.message)

    return watched(ctx, move_them)
