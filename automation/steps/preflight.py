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


def aws_preflight(ctx: HookContext) -> HookResult:
    """Read-only, so a dry run runs it too; refuses with every problem named."""
    out = ctx.outputs
    vpcs = [
        outputs.require(out, key, ctx.phase)
        for key in (outputs.SOURCE_VPC_ID, outputs.TARGET_VPC_ID)
    ]
    groups = list(out.get(outputs.NODE_SECURITY_GROUP_IDS) or [])
    groups += [g for g in (out.get("shared_security_group_ids") or {}).values() if g]
    arns = [
        arn
        for lb_key, by_port in (out.get(outputs.TARGET_GROUP_ARNS) or {}).items()
        if lb_key.endswith("-target")
        for arn in by_port.values()
    ]
    aws = ctx.clients.aws()
    report = preflight(
        aws.ec2, aws.elbv2, target_group_arns=arns, security_group_ids=groups, vpc_ids=vpcs
    ).require()
    return HookResult(False, report.message(), {"checks": list(report.checks)})
