"""Node-level steps: find the old and new workers, taint, drain, and wait on them.

Old-VPC nodes are found the seed's way — EC2 instances carrying the cluster tag in the
source VPC — then mapped to Kubernetes node names through ``providerID``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from automation.core.waiting import Pending
from automation.model.context import HookContext
from automation.model.phase import HookResult
from automation.steps import outputs
from automation.steps.availability import watched
from components.contract.scenarios.vpc_move import Side, VpcMoveOutputs

if TYPE_CHECKING:
    from automation.kube.clients import KubeClients

CONTROL_PLANE_ROLES = ("node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master")


def is_control_plane(node: dict[str, Any]) -> bool:
    """A listed Node (as the API serves it) carries a control-plane role label."""
    labels = node["metadata"].get("labels") or {}
    return any(role in labels for role in CONTROL_PLANE_ROLES)


def workers_in_vpc(ctx: HookContext, side: Side, *, quiet: bool = False) -> list[str]:
    """Names of the cluster's worker nodes whose instances run in ``side``'s VPC (how a
    side's workers are known whatever labels the tool whose boot script they run gave
    them: an adopted kops cluster's new workers boot kops's nodeup, labelled as their
    instance group is). ``quiet``: no warning for instances without a node yet.

    Control-plane members are left out: the seed tainted and drained the old worker
    groups only, and each member moves in its own phase while etcd keeps quorum.
    """
    from automation.aws.nodes import cluster_node_names
    from automation.kube.clients import list_all

    kube = ctx.clients.kube("primary")
    out = ctx.read_outputs(VpcMoveOutputs)
    vpc_id = outputs.need(getattr(out, f"{side}_vpc_id"), f"{side}_vpc_id", ctx.phase)
    listed = list_all(kube.core.list_node, action="list nodes")["items"]
    members = {n["metadata"]["name"] for n in listed if is_control_plane(n)}
    provider_ids = {n["metadata"]["name"]: (n.get("spec") or {}).get("providerID") for n in listed}
    match = cluster_node_names(
        ctx.clients.aws().ec2,
        cluster=ctx.stack_config.cluster.tag_id,
        vpc_id=vpc_id,
        nodes=provider_ids,
    )
    if match.unmatched and not quiet:
        ctx.log.warning(
            "%d instance(s) in %s have no Kubernetes node yet: %s",
            len(match.unmatched),
            vpc_id,
            ", ".join(sorted(i.instance_id for i in match.unmatched)[:5]),
        )
    return [name for name in match.names if name not in members]


def _mark_side(ctx: HookContext, action: Callable[..., Any], side: Side = "source") -> HookResult:
    """Apply a node change (``action(core, selection, dry_run=…)``: taint, untaint,
    uncordon) to ``side``'s workers."""
    from automation.kube.nodes import NodeSelection

    names = workers_in_vpc(ctx, side)
    if not names:
        return HookResult(changed=False, message=f"no nodes in the {side} VPC")
    core = ctx.clients.kube("primary").core
    change = action(core, NodeSelection(names=names), dry_run=ctx.dry_run)
    return HookResult(changed=bool(change.changed) and not ctx.dry_run, message=change.message)


def _retiring_taint(
    ctx: HookContext, action: Callable[..., Any], side: Side = "source"
) -> HookResult:
    """Apply ``taint_nodes``/``untaint_nodes`` with the retiring taint to ``side``'s workers."""
    taint = ctx.settings.retiring_taint
    return _mark_side(ctx, lambda core, nodes, **kw: action(core, nodes, taint, **kw), side)


def taint_retiring_nodes(ctx: HookContext) -> HookResult:
    """Taint every source-VPC node NoSchedule so rescheduled pods land on new workers."""
    from automation.kube.nodes import taint_nodes

    return _retiring_taint(ctx, taint_nodes)


def untaint_retiring_nodes(ctx: HookContext) -> HookResult:
    """The way back of the taint: make source-VPC nodes schedulable for new pods again."""
    from automation.kube.nodes import untaint_nodes

    return _retiring_taint(ctx, untaint_nodes)


def taint_target_workers(ctx: HookContext) -> HookResult:
    """Going back: taint the target VPC's workers NoSchedule, so what their drain evicts
    lands on the source VPC's nodes again."""
    from automation.kube.nodes import taint_nodes

    return _retiring_taint(ctx, taint_nodes, "target")


def uncordon_retiring_nodes(ctx: HookContext) -> HookResult:
    """Going back from the drain: source-VPC nodes schedulable again (their retiring
    taint stays, as it was before the drain)."""
    from automation.kube.nodes import uncordon_nodes

    return _mark_side(ctx, uncordon_nodes)


def drain(ctx: HookContext, kube: KubeClients, names: list[str]) -> HookResult:
    """Drain ``names`` concurrently, never violating a PodDisruptionBudget; raise when a
    node could not be emptied."""
    from automation.kube.drain.run import drain_nodes

    summary = drain_nodes(
        kube,
        names,
        options=ctx.settings.drain,
        limits=ctx.settings.drain_limits,
        reporter=ctx.progress,
        dry_run=ctx.dry_run,
    )
    if not ctx.dry_run:
        summary.raise_for_incomplete()
    return HookResult(changed=bool(summary.evicted) and not ctx.dry_run, message=summary.message())


def _drain_side(ctx: HookContext, side: Side) -> HookResult:
    names = workers_in_vpc(ctx, side)
    return watched(ctx, lambda: drain(ctx, ctx.clients.kube("primary"), names))


def _empty(ctx: HookContext, side: Side) -> Pending:
    from automation.kube.gates import no_evictable_pods

    names = workers_in_vpc(ctx, side)
    return no_evictable_pods(ctx.clients.kube("primary"), names, ctx.settings.drain)


def drain_retiring_nodes(ctx: HookContext) -> HookResult:
    """Drain source-VPC nodes concurrently, never violating a PodDisruptionBudget."""
    return _drain_side(ctx, "source")


def no_pods_left_on_retiring_nodes(ctx: HookContext) -> Pending:
    return _empty(ctx, "source")


def drain_target_workers(ctx: HookContext) -> HookResult:
    """Going back: drain the target VPC's workers under their budgets, the probe watching."""
    return _drain_side(ctx, "target")


def no_pods_left_on_target_workers(ctx: HookContext) -> Pending:
    return _empty(ctx, "target")


def workloads_whole(ctx: HookContext) -> Pending:
    """Going back: every Deployment and StatefulSet available and every budget met
    again, before the groups whose pods were evicted go."""
    from automation.kube.gates import workloads_available

    return workloads_available(ctx.clients.kube("primary"))


def target_workers_gone(ctx: HookContext) -> Pending:
    """Going back: every worker Node is a source-VPC instance's again — the target VPC's
    instances ended and their Nodes removed (by the cloud controller's node lifecycle)."""
    from automation.aws.nodes import find_cluster_instances
    from automation.kube.clients import list_all

    out = ctx.read_outputs(VpcMoveOutputs)
    source = outputs.need(out.source_vpc_id, "source_vpc_id", ctx.phase)
    listed = list_all(ctx.clients.kube("primary").core.list_node, action="list nodes")["items"]
    running = find_cluster_instances(
        ctx.clients.aws().ec2, cluster=ctx.stack_config.cluster.tag_id, vpc_id=source
    )
    at_home = {i.instance_id for i in running}
    left = []
    for node in listed:
        provider = (node.get("spec") or {}).get("providerID") or ""
        if is_control_plane(node) or not provider.startswith("aws://"):
            continue
        if provider.rsplit("/", 1)[-1] not in at_home:
            left.append(f"node {node['metadata']['name']} ({provider.rsplit('/', 1)[-1]})")
    return Pending.of(left, "every worker runs in the source VPC")


def expected_target_workers(ctx: HookContext) -> int:
    """Nodes the target worker pools start with: desired size x groups, over every pool."""
    cluster = ctx.stack_config.cluster
    network = ctx.stack_config.migration.target_network or cluster.network
    return sum(pool.starting_nodes(network.azs) for pool in cluster.worker_pools)


def target_workers_ready(ctx: HookContext) -> Pending:
    """Every new worker has joined and is Ready: the workers in the target VPC."""
    from automation.kube.gates import named_nodes_ready

    return named_nodes_ready(
        ctx.clients.kube("primary"),
        workers_in_vpc(ctx, "target", quiet=True),
        expected=expected_target_workers(ctx),
        described="worker(s) in the target VPC",
    )


def control_plane_ready(ctx: HookContext) -> Pending:
    """All control-plane members are Ready nodes: losing one more keeps etcd's quorum."""
    from automation.kube.gates import nodes_ready

    return nodes_ready(
        ctx.clients.kube("primary"),
        "node-role.kubernetes.io/control-plane",
        expected=ctx.stack_config.cluster.control_plane.members,
    )


def routes_created(ctx: HookContext) -> Pending:
    """Every node reports NetworkUnavailable=False with reason RouteCreated."""
    from automation.kube.gates import routes_created as created

    return created(ctx.clients.kube("primary"))
