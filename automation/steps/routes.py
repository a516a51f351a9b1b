"""Route steps for native routing (seed 002): capacity before, completeness after.

Native routing needs one route per node's pod CIDR in every route table of the
cluster. Before switching, the tables must have room (the account's quota, AWS's
default 50 otherwise); before and after, every table must hold an active route to
every node — a node condition alone can be wrong.
"""

from __future__ import annotations

from typing import Any, Literal

from automation.core.waiting import Pending
from automation.model.context import HookContext
from automation.model.phase import HookResult
from automation.steps import outputs
from components.contract.registry import StackOutputs


def _cluster_vpcs(ctx: HookContext) -> list[str]:
    out = ctx.read_outputs(StackOutputs)
    found = [v for v in (out.source_vpc_id, out.target_vpc_id) if v]
    if not found:
        outputs.need(out.source_vpc_id, "source_vpc_id", ctx.phase)
    return found


def _node_routes(ctx: HookContext, vpc_ids: list[str]) -> tuple[Any, ...]:
    """Every node of the cluster (both VPCs while both exist) with its pod CIDR."""
    from automation.aws.nodes import cluster_node_names
    from automation.aws.routes import node_routes
    from automation.kube.clients import list_all

    listed = list_all(ctx.clients.kube("primary").core.list_node, action="list nodes")["items"]
    provider_ids = {n["metadata"]["name"]: (n.get("spec") or {}).get("providerID") for n in listed}
    pod_cidrs = {n["metadata"]["name"]: (n.get("spec") or {}).get("podCIDR") for n in listed}
    matched: dict[str, Any] = {}
    for vpc_id in vpc_ids:
        match = cluster_node_names(
            ctx.clients.aws().ec2,
            cluster=ctx.stack_config.cluster.tag_id,
            vpc_id=vpc_id,
            nodes=provider_ids,
        )
        matched.update(match.nodes)
    return node_routes(matched, pod_cidrs)


def _route_tables(ctx: HookContext, vpc_ids: list[str]) -> tuple[str, ...]:
    """The tables the route controller writes pod routes to: those tagged for the
    cluster (from ``routes``, the one node table; the VPC's other tables never get them)."""
    from automation.aws.routes import cluster_route_tables

    return cluster_route_tables(
        ctx.clients.aws().ec2, vpc_ids=vpc_ids, cluster=ctx.stack_config.cluster.tag_id
    )


def check_route_capacity(ctx: HookContext) -> HookResult:
    """Refuse (PreconditionFailed) when a route table cannot hold a route per node."""
    from automation.aws.routes import require_route_capacity

    vpc_ids = _cluster_vpcs(ctx)
    aws = ctx.clients.aws()
    report = require_route_capacity(
        aws.ec2,
        aws.service_quotas,
        route_table_ids=_route_tables(ctx, vpc_ids),
        nodes=_node_routes(ctx, vpc_ids),
    )
    return HookResult(changed=False, message=report.message())


def route_tables_complete(ctx: HookContext) -> Pending:
    """The tables tagged for the cluster hold an active route to every node's pod CIDR."""
    from automation.aws.routes import routes_pending

    vpc_ids = _cluster_vpcs(ctx)
    return routes_pending(
        ctx.clients.aws().ec2,
        route_table_ids=_route_tables(ctx, vpc_ids),
        nodes=list(_node_routes(ctx, vpc_ids)),
    )


def _instances(ctx: HookContext) -> tuple[Any, ...]:
    """Every running instance of the cluster, in each of its VPCs."""
    from automation.aws.nodes import find_cluster_instances

    cluster = ctx.stack_config.cluster.tag_id
    ec2 = ctx.clients.aws().ec2
    return tuple(
        instance
        for vpc_id in _cluster_vpcs(ctx)
        for instance in find_cluster_instances(ec2, cluster=cluster, vpc_id=vpc_id)
    )


def _switched(ctx: HookContext, to: Literal["on", "off"]) -> HookResult:
    from automation.aws.source_dest import switch_off, switch_on

    switch = switch_on if to == "on" else switch_off
    change = switch(ctx.clients.aws().ec2, _instances(ctx), dry_run=ctx.dry_run)
    return HookResult(
        changed=bool(change.switched) and not ctx.dry_run,
        message=change.message,
        details={"switched": list(change.switched)},
    )


def source_dest_check_off(ctx: HookContext) -> HookResult:
    """Switch the source/destination check off on the instances that booted with it on."""
    return _switched(ctx, "off")


def source_dest_check_on(ctx: HookContext) -> HookResult:
    """Going back to the overlay: the source/destination check on again where it is off."""
    return _switched(ctx, "on")


def source_dest_checks_off(ctx: HookContext) -> Pending:
    """Every running instance of the cluster has its source/destination check off."""
    from automation.aws.source_dest import checks_off

    return checks_off(_instances(ctx))


def source_dest_checks_on(ctx: HookContext) -> Pending:
    """Every running instance of the cluster has its source/destination check on."""
    from automation.aws.source_dest import checks_on

    return checks_on(_instances(ctx))
