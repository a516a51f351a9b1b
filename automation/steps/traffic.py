"""Traffic steps on AWS: target health before DNS moves, records in sync after.

In vpc-move the records belong to the Pulumi stack (the update switches them); these
gates make sure the new targets serve before, and Route53 agrees after. In cni-swap
the per-service records are moved by the validated cutover hook, which rolls a record
back when the new target does not serve.
"""

from __future__ import annotations

from typing import Any

from automation.core.waiting import Pending
from automation.model.context import HookContext
from automation.model.phase import HookResult
from automation.steps import outputs
from components.contract.scenarios.vpc_move import DNS_CUTOVER, VpcMoveOutputs, control_plane_phase


def _ingress_targets_healthy(ctx: HookContext, balancer: str) -> Pending:
    from automation.aws.targets import targets_pending

    arns = outputs.target_group_arns(ctx.read_outputs(VpcMoveOutputs), balancer, ctx.phase)
    return targets_pending(ctx.clients.aws().elbv2, arns)


def new_ingress_targets_healthy(ctx: HookContext) -> Pending:
    """Every target of the new ingress load balancer's target groups is healthy."""
    return _ingress_targets_healthy(ctx, "ingress-target")


def old_ingress_targets_healthy(ctx: HookContext) -> Pending:
    """Going back: every target of the source ingress load balancer's target groups is
    healthy, before the records move back to it."""
    return _ingress_targets_healthy(ctx, "ingress-source")


def _api_targets_healthy(ctx: HookContext, balancer: str) -> Pending:
    from automation.aws.targets import targets_pending

    arns = outputs.target_group_arns(ctx.read_outputs(VpcMoveOutputs), balancer, ctx.phase)
    return targets_pending(ctx.clients.aws().elbv2, arns, min_healthy=1)


def new_api_targets_healthy(ctx: HookContext) -> Pending:
    """At least one healthy API server behind the new API load balancer."""
    return _api_targets_healthy(ctx, "api-target")


def source_api_targets_healthy(ctx: HookContext) -> Pending:
    """Going back: at least one healthy API server behind the source API load balancer,
    before the API record moves back to it."""
    return _api_targets_healthy(ctx, "api-source")


def _declared_cutovers(ctx: HookContext, keys: tuple[str, ...] | None) -> list[Any]:
    """The records the stack declares (output ``records``) as cutovers to check."""
    from automation.aws.dns.requests import AliasTarget, ARecordTarget, CnameTarget, RecordCutover

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
    from automation.aws.dns.cutover import is_cut_over

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
    """The API record is the CNAME or alias this control-plane phase declares."""
    return _records_pending(ctx, ("api",))


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


KUBELET_PORT = 10250


def peering_reachable(ctx: HookContext) -> Pending:
    """Routes, network ACLs and security groups let the two VPCs' cluster instances
    reach each other over the peering: every worker both ways (pods, node ports), new
    workers to the API on the members still in the source VPC, and those members to
    the new kubelets."""
    from automation.aws.nodes import find_cluster_instances
    from automation.aws.reachability import Need, reachability_problems

    out = ctx.read_outputs(VpcMoveOutputs)
    config = ctx.stack_config
    ec2 = ctx.clients.aws().ec2
    member_groups = {m.asg_name for m in out.control_plane_members.values()}
    sides = {}
    for side in ("source", "target"):
        vpc = outputs.need(getattr(out, f"{side}_vpc_id"), f"{side}_vpc_id", ctx.phase)
        found = find_cluster_instances(ec2, cluster=config.cluster.tag_id, vpc_id=vpc)
        workers = tuple(i for i in found if i.auto_scaling_group not in member_groups)
        members = tuple(i for i in found if i.auto_scaling_group in member_groups)
        sides[side] = (workers, members)
    (old, source_members), (new, target_members) = sides["source"], sides["target"]
    api = config.cluster.control_plane.api_port
    needs = [
        Need("pods and node ports", old, new),
        Need("pods and node ports", new, old),
        Need("the API", new, source_members, port=api),
        Need("the API", old, target_members, port=api),
        Need("the kubelets", source_members, new, port=KUBELET_PORT),
        Need("the kubelets", target_members, old, port=KUBELET_PORT),
    ]
    problems = reachability_problems(ec2, needs)
    pairs = f"{len(old)} old and {len(new)} new worker(s), {len(member_groups)} member(s)"
    return Pending.of(problems, f"checked routes, network ACLs and security groups for {pairs}")


def _drain(ctx: HookContext, moved_in: str, balancer: str) -> HookResult:
    from automation.steps.dns_drain import Drain, drain_dns

    names = ctx.read_outputs(VpcMoveOutputs).lb_dns_names
    dns_names = [names[balancer]] if balancer in names else []
    return drain_dns(ctx, Drain(moved_in, ctx.stack_config.cluster.dns.ttl, dns_names))


def drain_old_ingress(ctx: HookContext) -> HookResult:
    """Before the old ingress load balancer goes: its clients left (the records' TTL
    plus the margin since dns-cutover, then no traffic in CloudWatch)."""
    return _drain(ctx, DNS_CUTOVER, "ingress-source")


def drain_source_api(ctx: HookContext) -> HookResult:
    """Before the source API load balancer goes: its clients left (since the API record
    moved off it, at the second member's move)."""
    return _drain(ctx, control_plane_phase(2), "api-source")
