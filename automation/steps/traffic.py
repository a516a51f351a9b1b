"""Traffic steps on AWS: target health before DNS moves, records in sync after.

In vpc-move the records belong to the Pulumi stack (the update switches them); these
gates make sure the new targets serve before, and Route53 agrees after. In cni-swap
the per-service records are moved by the validated cutover hook, which rolls a record
back when the new target does not serve.
"""

from __future__ import annotations

from automation.context import HookContext
from automation.steps import outputs
from automation.waiting import Pending


def new_ingress_targets_healthy(ctx: HookContext) -> Pending:
    """Every target of the new ingress load balancer's target groups is healthy."""
    from automation.aws.targets import targets_pending

    arns = outputs.target_group_arns(ctx.outputs, "ingress-target", ctx.phase)
    return targets_pending(ctx.clients.aws().elbv2, arns)


def new_api_targets_healthy(ctx: HookContext) -> Pending:
    """At least one healthy API server behind the new API load balancer."""
    from automation.aws.targets import targets_pending

    arns = outputs.target_group_arns(ctx.outputs, "api-target", ctx.phase)
    return targets_pending(ctx.clients.aws().elbv2, arns, min_healthy=1)
