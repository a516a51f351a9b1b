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
from automation.core.errors import PreconditionFailed
from automation.core.results import HookResult
from automation.model.context import HookContext
from automation.steps import outputs
from components.contract.scenarios.vpc_move import VpcMoveOutputs


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


def member_address_free(ctx: HookContext) -> HookResult:
    """The moving member's fixed address is free in the VPC it goes to (the target; the
    source, taking the move back). Workers launched there hold addresses anywhere in its
    subnets (AWS hands them out at random), and AWS would refuse the member's interface
    half-way through the phase (``InvalidIPAddress.InUse``). Read-only; its own
    interface (an earlier attempt's, same description) is no problem."""
    from automation.steps.etcd import from_and_to, going_back, moving_member

    config = ctx.stack_config
    member = moving_member(ctx)
    _, address = from_and_to(ctx, member)
    out = ctx.read_outputs(VpcMoveOutputs)
    side = "source" if going_back(ctx) else "target"
    vpc = outputs.need(
        out.source_vpc_id if side == "source" else out.target_vpc_id, f"{side}_vpc_id", ctx.phase
    )
    planned = {address: f"etcd member {member} of {config.cluster.name}"}
    require_free(
        ctx,
        vpc,
        planned,
        f"an instance in the {side} subnet took the member's address: set "
        "kubeshift:cluster.control_plane.host_index to a free range",
    )
    return HookResult(False, f"member {member}'s address {address} is free in {vpc}")


def require_free(ctx: HookContext, vpc: str, planned: dict[str, str], remedy: str) -> None:
    """Refuse, naming each taken address and ``remedy``, unless every planned fixed
    address (address -> its interface's description) is free in ``vpc``."""
    aws = ctx.clients.aws()
    report = preflight(aws.ec2, aws.elbv2, fixed_addresses=(vpc, planned))
    if not report.ok:
        raise PreconditionFailed(f"{report.message()[:-1]}; {remedy}.")
