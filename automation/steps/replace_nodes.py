"""Replace the nodes a gate names with fresh ones (seed 000: roll the unstable nodes again).

Each named node is one journalled, destructive step (``action:replace-node <name>``):
cordon it, drain it with the one evictor (PodDisruptionBudgets respected), terminate
its instance through its Auto Scaling group — which launches a fresh instance at
once — and wait, with a deadline and a progress display, until the group is back at
its desired capacity with the fresh instance's Node Ready. A step finished in an
earlier run is skipped; a step cut short finds its instance already terminated (from
the Node's provider ID, or, once the Node is gone, from its private DNS name) and only
waits again.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from automation.aws.nodes import instance_id_from_provider_id
from automation.aws.replacement import (
    Member,
    in_service,
    member_of_group,
    terminate_for_replacement,
)
from automation.core.errors import PreconditionFailed, from_client_error
from automation.core.waiting import Pending, wait_until
from automation.kube.clients import KubeClients, list_all, raw
from automation.model.context import HookContext
from automation.model.phase import Hook, HookResult

if TYPE_CHECKING:
    from automation.aws.clients import EC2Client
    from automation.kube.drain import DrainLimits

ACTION = "replace-node"


@dataclass(frozen=True)
class Replacement:
    """How long the drain and then the fresh node may each take, and which cluster of
    the scenario to act on."""

    cluster: str = "primary"
    timeout: float = 1800.0
    interval: float = 10.0


def replace_node_hooks(nodes: Sequence[str], how: Replacement) -> tuple[Hook, ...]:
    """One destructive, journalled step per node, in the order given."""
    return tuple(
        Hook(
            name=f"{ACTION} {node}",
            summary=f"cordon and drain {node}, terminate its instance in its group, wait "
            "for the fresh node to be Ready",
            run=functools.partial(replace_node, node=node, how=how),
            destructive=True,
            retries=0,
        )
        for node in dict.fromkeys(nodes)
    )


def _node(kube: KubeClients, name: str) -> dict[str, Any] | None:
    try:
        return raw(kube.core.read_node, name, action=f"read node {name}")
    except PreconditionFailed:  # 404
        return None


def _instance_named(ec2: EC2Client, node: str) -> str | None:
    """The instance whose private DNS name is ``node`` (a terminated one stays listed
    for about an hour), for a resumed run whose Node the cloud already deleted."""
    from automation.aws.failures import ClientError

    try:
        pages = ec2.get_paginator("describe_instances").paginate(
            Filters=[{"Name": "private-dns-name", "Values": [node]}]
        )
        found = [i for p in pages for r in p["Reservations"] for i in r["Instances"]]
    except ClientError as exc:
        raise from_client_error(exc, f"find the instance of node {node}") from exc
    found.sort(key=lambda i: str(i.get("LaunchTime", "")), reverse=True)
    return found[0]["InstanceId"] if found else None


def replace_node(ctx: HookContext, node: str, how: Replacement) -> HookResult:
    """Cordon, drain, terminate in the group, wait for the fresh node (idempotent)."""
    from automation.kube.drain.run import drain_nodes
    from automation.kube.nodes import cordon

    kube = ctx.clients.kube(how.cluster)
    aws = ctx.clients.aws()
    live = _node(kube, node)
    provider_id = ((live or {}).get("spec") or {}).get("providerID")
    instance = instance_id_from_provider_id(provider_id) or _instance_named(aws.ec2, node)
    if instance is None:
        raise PreconditionFailed(
            f"Node {node} is not in the cluster and no instance is named {node}; check the "
            "name the gate gave."
        )
    member = member_of_group(aws.ec2, aws.autoscaling, instance)
    if not member.group:
        raise PreconditionFailed(
            f"{node}'s instance {instance} is gone and its group is unknown; check the group "
            "is whole by hand."
        )
    if ctx.dry_run:
        verb = "is already terminated" if member.gone else "would be drained and terminated"
        return HookResult(False, f"{node} ({instance} in {member.group or '?'}) {verb}")
    evicted = 0
    if live is not None and not member.gone:
        cordon(kube.core, node)
        summary = drain_nodes(
            kube, [node], options=ctx.settings.drain, limits=_drain_limits(ctx, how),
            reporter=ctx.progress,
        )  # fmt: skip
        summary.raise_for_incomplete()
        evicted = len(summary.evicted)
    _, before = in_service(aws.autoscaling, member.group)
    terminated = terminate_for_replacement(aws.ec2, aws.autoscaling, member)
    fresh = _wait_for_fresh_nodes(ctx, kube, member, set(before), how)
    verb = "terminated" if terminated else "found already terminated"
    return HookResult(
        terminated or bool(evicted),
        f"{node}: {evicted} pod(s) evicted, {instance} {verb} in {member.group}; "
        f"{'fresh node ' + ', '.join(fresh) if fresh else 'its nodes'} Ready",
        {"instance": instance, "group": member.group, "fresh_nodes": list(fresh)},
    )


def _drain_limits(ctx: HookContext, how: Replacement) -> DrainLimits:
    """The stack's drain limits, with a deadline no later than the replacement's own:
    a budget that never allows ends the step at ``--timeout``, not the drain's half hour."""
    limits = ctx.settings.drain_limits
    return limits.model_copy(update={"timeout": min(limits.timeout, how.timeout)})


def _wait_for_fresh_nodes(
    ctx: HookContext, kube: KubeClients, old: Member, before: set[str], how: Replacement
) -> list[str]:
    """Until the group has its desired capacity InService without the old instance and
    each member's Node is Ready; returns the Nodes of members launched since ``before``."""
    aws = ctx.clients.aws()
    fresh: list[str] = []

    def check() -> Pending:
        desired, members = in_service(aws.autoscaling, old.group)
        if old.instance_id in members or len(members) < desired:
            return Pending.of(
                [f"group {old.group}: {len(members)}/{desired} InService"],
                f"waiting for {old.group} to replace {old.instance_id}",
            )
        nodes = list_all(kube.core.list_node, action="list nodes")["items"]
        by_instance = {
            instance_id_from_provider_id((n.get("spec") or {}).get("providerID")): n for n in nodes
        }
        missing = [i for i in members if not _ready(by_instance.get(i))]
        fresh[:] = sorted(
            by_instance[i]["metadata"]["name"]
            for i in members
            if i not in before and i in by_instance
        )
        return Pending.of(
            [f"instance {i}: no Ready node yet" for i in missing],
            f"{len(members) - len(missing)}/{len(members)} nodes of {old.group} Ready",
        )

    wait_until(
        f"a fresh node in {old.group}", check, timeout=how.timeout, interval=how.interval,
        on_progress=ctx.progress.on_wait,
    )  # fmt: skip
    return fresh


def _ready(node: dict[str, Any] | None) -> bool:
    conditions = ((node or {}).get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
