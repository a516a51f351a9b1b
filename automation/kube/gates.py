"""Gate checks on a cluster: each returns ``core.waiting.Pending`` naming what is not there.

The runner polls them with a deadline (``wait_until``); they read, never change. Items
are short and sortable (``node ip-10-0-3-7: Ready=False (KubeletNotReady)``) so the
timeout message lists exactly what is still missing.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from automation.core.waiting import Pending
from automation.kube.clients import KubeClients, list_all
from automation.kube.drain.budgets import observed
from automation.kube.drain.filters import DrainOptions, Verdict, plan_pods


def _condition(node: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    for cond in (node.get("status") or {}).get("conditions") or []:
        if cond.get("type") == kind:
            return cond
    return None


def nodes_ready(clients: KubeClients, label_selector: str, *, expected: int) -> Pending:
    """At least ``expected`` nodes match ``label_selector``, each Ready and schedulable."""
    nodes = list_all(clients.core.list_node, action="list nodes", label_selector=label_selector)[
        "items"
    ]
    return _ready(nodes, expected, f"node(s) matching '{label_selector}'")


def named_nodes_ready(
    clients: KubeClients, names: Collection[str], *, expected: int, described: str
) -> Pending:
    """At least ``expected`` of the nodes ``names`` (``described``, for messages) exist,
    each Ready and schedulable."""
    wanted = set(names)
    listed = list_all(clients.core.list_node, action="list nodes")["items"]
    nodes = [n for n in listed if n["metadata"]["name"] in wanted]
    return _ready(nodes, expected, described)


def _ready(nodes: list[dict[str, Any]], expected: int, described: str) -> Pending:
    items = []
    for node in nodes:
        name = node["metadata"]["name"]
        ready = _condition(node, "Ready")
        if ready is None:
            items.append(f"node {name}: no Ready condition yet")
        elif ready.get("status") != "True":
            items.append(f"node {name}: Ready={ready.get('status')} ({ready.get('reason', '')})")
        elif (node.get("spec") or {}).get("unschedulable"):
            items.append(f"node {name}: cordoned")
    if len(nodes) < expected:
        items.append(f"{expected - len(nodes)} more {described}")
    return Pending.of(items, f"{len(nodes)}/{expected} nodes present")


def routes_created(clients: KubeClients, label_selector: str | None = None) -> Pending:
    """Every node has ``NetworkUnavailable=False`` with reason exactly ``RouteCreated``.

    Gardener's rule for leaving the overlay: calico-node's own ``CalicoIsUp`` does not
    prove the cloud route exists, and a node without the condition is not done either.
    """
    kwargs: dict[str, Any] = {"label_selector": label_selector} if label_selector else {}
    nodes = list_all(clients.core.list_node, action="list nodes", **kwargs)["items"]
    items = []
    for node in nodes:
        name = node["metadata"]["name"]
        cond = _condition(node, "NetworkUnavailable")
        if cond is None:
            items.append(f"node {name}: no NetworkUnavailable condition")
        elif cond.get("status") != "False" or cond.get("reason") != "RouteCreated":
            items.append(
                f"node {name}: NetworkUnavailable={cond.get('status')} ({cond.get('reason')})"
            )
    detail = f"{len(nodes) - len(items)}/{len(nodes)} nodes have RouteCreated"
    return Pending.of(items, detail)


def _deployment_gap(d: Mapping[str, Any]) -> str | None:
    meta, spec, status = d["metadata"], d.get("spec") or {}, d.get("status") or {}
    want = int(spec.get("replicas", 1))
    if int(status.get("observedGeneration", 0)) < int(meta.get("generation", 0)):
        return "rollout not observed yet"
    if int(status.get("updatedReplicas", 0)) < want:
        return f"{status.get('updatedReplicas', 0)}/{want} updated"
    if int(status.get("availableReplicas", 0)) < want:
        return f"{status.get('availableReplicas', 0)}/{want} available"
    return None


def _statefulset_gap(s: Mapping[str, Any]) -> str | None:
    meta, spec, status = s["metadata"], s.get("spec") or {}, s.get("status") or {}
    want = int(spec.get("replicas", 1))
    if int(status.get("observedGeneration", 0)) < int(meta.get("generation", 0)):
        return "rollout not observed yet"
    if int(status.get("readyReplicas", 0)) < want:
        return f"{status.get('readyReplicas', 0)}/{want} ready"
    return None


def _pdb_gap(p: Mapping[str, Any]) -> str | None:
    status = p.get("status") or {}
    if not observed(p):
        return "status not observed yet"
    healthy, desired = int(status.get("currentHealthy", 0)), int(status.get("desiredHealthy", 0))
    if healthy < desired:
        return f"{healthy}/{desired} healthy"
    return None


def workloads_available(
    clients: KubeClients,
    namespaces: Iterable[str] | None = None,
    label_selector: str | None = None,
) -> Pending:
    """Deployments and StatefulSets fully available and every PDB satisfied.

    ``namespaces`` None means all namespaces; ``label_selector`` narrows the objects.
    """
    kwargs: dict[str, Any] = {"label_selector": label_selector} if label_selector else {}
    checks: list[tuple[str, Any, Any, Any]] = [
        (
            "deployment",
            clients.apps.list_deployment_for_all_namespaces,
            clients.apps.list_namespaced_deployment,
            _deployment_gap,
        ),
        (
            "statefulset",
            clients.apps.list_stateful_set_for_all_namespaces,
            clients.apps.list_namespaced_stateful_set,
            _statefulset_gap,
        ),
        (
            "pdb",
            clients.policy.list_pod_disruption_budget_for_all_namespaces,
            clients.policy.list_namespaced_pod_disruption_budget,
            _pdb_gap,
        ),
    ]
    scope = sorted(set(namespaces)) if namespaces is not None else None
    items: list[str] = []
    total = 0
    for kind, all_ns, one_ns, gap in checks:
        if scope is None:
            objs = list_all(all_ns, action=f"list {kind}s", **kwargs)["items"]
        else:
            objs = [
                o
                for ns in scope
                for o in list_all(one_ns, ns, action=f"list {kind}s in {ns}", **kwargs)["items"]
            ]
        total += len(objs)
        for obj in objs:
            why = gap(obj)
            if why:
                meta = obj["metadata"]
                items.append(f"{kind} {meta['namespace']}/{meta['name']}: {why}")
    return Pending.of(items, f"{total - len(items)}/{total} workloads and budgets available")


def no_evictable_pods(
    clients: KubeClients, nodes: Iterable[str], options: DrainOptions | None = None
) -> Pending:
    """No pod a drain would evict (or wait for) is left on ``nodes``."""
    options = options or DrainOptions()
    wanted = set(nodes)
    pods = list_all(clients.core.list_pod_for_all_namespaces, action="list pods")["items"]
    on_nodes = [p for p in pods if (p.get("spec") or {}).get("nodeName") in wanted]
    items = [
        f"{v.key} on {v.node}"
        for v in plan_pods(on_nodes, options)
        if v.verdict in (Verdict.EVICT, Verdict.WAIT, Verdict.REFUSE)
    ]
    return Pending.of(items, f"{len(items)} pod(s) left on {len(wanted)} node(s)")
