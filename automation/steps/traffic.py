"""Traffic steps on AWS: target health before DNS moves, records in sync after.

In vpc-move the records belong to the Pulumi stack (the update switches them); these
gates make sure the new targets serve before, and Route53 agrees after. In cni-swap
the per-service records are moved by the validated cutover hook, which rolls a record
back when the new target does not serve.
"""

from __future__ import annotations

from typing import Any

from automation.context import HookContext
from automation.phase import HookResult
from automation.steps import outputs
from automation.waiting import Pending
from components.config import API_MEMBER_KEY
from components.scenarios.vpc_move import VpcMoveOutputs


def new_ingress_targets_healthy(ctx: HookContext) -> Pending:
    """Every target of the new ingress load balancer's target groups is healthy."""
    from automation.aws.targets import targets_pending

    arns = outputs.target_group_arns(ctx.read_outputs(VpcMoveOutputs), "ingress-target", ctx.phase)
    return targets_pending(ctx.clients.aws().elbv2, arns)


def new_api_targets_healthy(ctx: HookContext) -> Pending:
    """At least one healthy API server behind the new API load balancer."""
    from automation.aws.targets import targets_pending

    arns = outputs.target_group_arns(ctx.read_outputs(VpcMoveOutputs), "api-target", ctx.phase)
    return targets_pending(ctx.clients.aws().elbv2, arns, min_healthy=1)


def _declared_cutovers(ctx: HookContext, keys: tuple[str, ...] | None) -> list[Any]:
    """The records the stack declares (output ``records``) as cutovers to check."""
    from automation.aws.dns import AliasTarget, ARecordTarget, CnameTarget, RecordCutover

    declared = outputs.need(ctx.read_outputs(VpcMoveOutputs).records, "records", ctx.phase)
    dns = ctx.stack_config.cluster.dns
    cutovers = []
    for key, record in sorted(declared.items()):
        if keys is not None and key not in keys:
            continue
        values = tuple(record.values)
        target: Any
        if record.alias_zone_id is not None:
            target = AliasTarget(dns_name=values[0], hosted_zone_id=record.alias_zone_id)
        elif record.type == "CNAME":
            target = CnameTarget(value=values[0], ttl=dns.ttl)
        else:
            target = ARecordTarget(addresses=values, ttl=dns.ttl)
        cutovers.append(RecordCutover(zone_id=dns.zone_id, name=record.name, target=target))
    return cutovers


def _records_pending(ctx: HookContext, keys: tuple[str, ...] | None) -> Pending:
    from automation.aws.dns import is_cut_over

    route53 = ctx.clients.aws().route53
    cutovers = _declared_cutovers(ctx, keys)
    behind = [
        f"{c.fqdn} not yet {c.record_type} {c.endpoint}"
        for c in cutovers
        if not is_cut_over(route53, c)
    ]
    return Pending.of(behind, f"{len(cutovers) - len(behind)}/{len(cutovers)} records as declared")


def records_as_declared(ctx: HookContext) -> Pending:
    """Route53 serves every record exactly as the stack now declares it."""
    return _records_pending(ctx, None)


def api_record_as_declared(ctx: HookContext) -> Pending:
    """The API record is the CNAME or A record this control-plane phase declares (and
    the helper A record a CNAME names while it points at a moved member)."""
    return _records_pending(ctx, ("api", API_MEMBER_KEY))


def dns_writers_guard(ctx: HookContext) -> HookResult:
    """No DNS controller writes a record this stack moves (or, as the stack says, pause)."""
    from automation.steps.dns_writers import guard_records

    declared = outputs.need(ctx.read_outputs(VpcMoveOutputs).records, "records", ctx.phase)
    zone = ctx.stack_config.cluster.dns.zone_id
    return guard_records(ctx, [r.name for r in declared.values()], [zone], ["primary"])


def resume_dns_writers(ctx: HookContext) -> HookResult:
    """Give back the replicas of the DNS controllers kubeshift paused."""
    from automation.steps.dns_writers import resume_writers

    return resume_writers(ctx, ["primary"])
