"""The AWS preflight as a hook: what AWS would refuse, checked before instances launch.

``automation.aws.preflight`` reads the account for the constraints moto does not
enforce (target groups and instances in one VPC, security groups referencing only
groups of the same or a peered VPC, no overlapping peered CIDRs). vpc-move runs it
before ``target-workers``, the first phase that launches instances into the new VPC
and attaches them to its target groups: a violation found there stops the run with
every problem named, instead of half-way through an update.
"""

from __future__ import annotations

from automation.aws.preflight import preflight
from automation.context import HookContext
from automation.results import HookResult
from automation.steps import outputs
from components.scenarios.vpc_move import VpcMoveOutputs


def aws_preflight(ctx: HookContext) -> HookResult:
    """Read-only, so a dry run runs it too; refuses with every problem named."""
    out = ctx.read_outputs(VpcMoveOutputs)
    vpcs = [
        outputs.need(out.source_vpc_id, "source_vpc_id", ctx.phase),
        outputs.need(out.target_vpc_id, "target_vpc_id", ctx.phase),
    ]
    groups = [*out.node_security_group_ids]
    groups += [g for side in out.peer_admitting_security_group_ids.values() for g in side]
    arns = [
        arn
        for lb_key, by_port in out.target_group_arns.items()
        if lb_key.endswith("-target")
        for arn in by_port.values()
    ]
    aws = ctx.clients.aws()
    report = preflight(
        aws.ec2, aws.elbv2, target_group_arns=arns, security_group_ids=groups, vpc_ids=vpcs
    ).require()
    return HookResult(False, report.message(), {"checks": list(report.checks)})
