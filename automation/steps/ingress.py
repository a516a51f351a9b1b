"""Ingress steps (seed 001): a bridge while old target groups serve new nodes, then back.

While workers in both VPCs serve, the old target groups can only reach pods on new
nodes through any node's node port (``Cluster`` policy, NodePort); once the ingress pods
run on new nodes the Service gets back what it had and the extra proxy hop disappears.
"""

from __future__ import annotations

from automation.core.errors import PreconditionFailed
from automation.model.context import HookContext
from automation.model.phase import HookResult
from automation.steps.availability import watched
from automation.steps.nodes import workers_in_vpc


def ingress_to_nodeport(ctx: HookContext) -> HookResult:
    """Open the ingress Service's bridge: NodePort (unless a controller owns its load
    balancer) and the ``Cluster`` traffic policy, what it had saved on it."""
    from automation.kube.service_bridge import open_bridge

    ingress = ctx.settings.ingress
    core = ctx.clients.kube("primary").core
    change = open_bridge(core, ingress.namespace, ingress.service, dry_run=ctx.dry_run)
    return HookResult(changed=change.changed and not ctx.dry_run, message=change.message)


def ingress_to_loadbalancer(ctx: HookContext) -> HookResult:
    """Close the ingress Service's bridge: every field it had back (type, traffic policy,
    health-check node port, load balancer fields), node ports unchanged."""
    from automation.kube.service_bridge import close_bridge

    ingress = ctx.settings.ingress
    core = ctx.clients.kube("primary").core
    change = close_bridge(core, ingress.namespace, ingress.service, dry_run=ctx.dry_run)
    return HookResult(changed=change.changed and not ctx.dry_run, message=change.message)


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
