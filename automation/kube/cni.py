"""Gates and the one action of the CNI swap on the primary (seed 000, "Switching CNIs").

While traffic runs on the mirror the primary swaps its overlay: the new CNI's
DaemonSet (``kube-system/calico-node``) is installed, the old one
(``kube-system/weave-net``) is deleted — which breaks the network until nodes roll —
and the nodes are doubled and the old ones scaled in. The swap is done only when every
node runs a Ready pod of the new CNI and nothing of the old one is left; these gates
say exactly which nodes are still missing, so "rolling the cluster once more" can be
aimed at them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubernetes import client

from automation.core.errors import PreconditionFailed, from_api_exception
from automation.core.waiting import Pending, summarize
from automation.kube.clients import KubeClients, list_all, raw
from automation.kube.pods import pod_ready
from automation.kube.selectors import matches


def _get_daemonset(clients: KubeClients, namespace: str, name: str) -> dict[str, Any] | None:
    try:
        response: Any = clients.apps.read_namespaced_daemon_set(
            name, namespace, _preload_content=False
        )
    except client.ApiException as exc:
        if exc.status == 404:
            return None
        raise from_api_exception(exc, f"read DaemonSet {namespace}/{name}") from exc
    return json.loads(response.data or b"{}")  # type: ignore[no-any-return]


def _owned_by(pod: Mapping[str, Any], uid: str) -> bool:
    return any(
        r.get("uid") == uid for r in (pod.get("metadata") or {}).get("ownerReferences") or []
    )


def _tolerates(pod_spec: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    for tol in pod_spec.get("tolerations") or []:
        effect_ok = not tol.get("effect") or tol.get("effect") == taint.get("effect")
        if tol.get("operator") == "Exists":
            if (not tol.get("key") or tol.get("key") == taint.get("key")) and effect_ok:
                return True
        elif (
            tol.get("key") == taint.get("key")
            and tol.get("value", "") == taint.get("value", "")
            and effect_ok
        ):
            return True
    return False


def should_run_on(pod_spec: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    """Whether the DaemonSet's pod template belongs on ``node``.

    Node selector and NoSchedule/NoExecute taints, as the DaemonSet controller decides;
    a CNI normally tolerates everything, so this only excludes nodes on purpose.
    """
    labels = (node.get("metadata") or {}).get("labels") or {}
    selector = pod_spec.get("nodeSelector") or {}
    if not matches({"matchLabels": selector}, labels):
        return False
    for taint in (node.get("spec") or {}).get("taints") or []:
        if taint.get("effect") in {"NoSchedule", "NoExecute"} and not _tolerates(pod_spec, taint):
            return False
    return True


@dataclass(frozen=True)
class NodeCoverage:
    """Which nodes run a Ready pod of a DaemonSet, and which do not (with why)."""

    covered: tuple[str, ...]
    missing: tuple[str, ...]  # "node ip-...: no calico-node pod" etc.
    excluded: tuple[str, ...]  # nodes the DaemonSet does not target


def daemonset_coverage(
    clients: KubeClients, namespace: str, name: str, node_selector: str | None = None
) -> NodeCoverage | None:
    """Per-node coverage of DaemonSet ``namespace/name``; None when it does not exist."""
    ds = _get_daemonset(clients, namespace, name)
    if ds is None:
        return None
    kwargs: dict[str, Any] = {"label_selector": node_selector} if node_selector else {}
    nodes = list_all(clients.core.list_node, action="list nodes", **kwargs)["items"]
    pod_spec = ((ds.get("spec") or {}).get("template") or {}).get("spec") or {}
    uid = ds["metadata"]["uid"]
    pods = [
        p
        for p in list_all(
            clients.core.list_namespaced_pod, namespace, action=f"list pods of {namespace}/{name}"
        )["items"]
        if _owned_by(p, uid)
    ]
    by_node: dict[str, list[dict[str, Any]]] = {}
    for pod in pods:
        by_node.setdefault((pod.get("spec") or {}).get("nodeName") or "", []).append(pod)
    covered, missing, excluded = [], [], []
    for node in nodes:
        node_name = node["metadata"]["name"]
        if not should_run_on(pod_spec, node):
            excluded.append(node_name)
            continue
        on_node = by_node.get(node_name, [])
        if any(pod_ready(p) for p in on_node):
            covered.append(node_name)
        elif not on_node:
            missing.append(f"node {node_name}: no {name} pod")
        else:
            states = ", ".join(
                f"{p['metadata']['name']} {(p.get('status') or {}).get('phase', 'Unknown')}"
                for p in on_node
            )
            missing.append(f"node {node_name}: {name} pod not Ready ({states})")
    return NodeCoverage(tuple(sorted(covered)), tuple(sorted(missing)), tuple(sorted(excluded)))


def cni_ready_on_all_nodes(
    clients: KubeClients, namespace: str, name: str, node_selector: str | None = None
) -> Pending:
    """Gate: the CNI DaemonSet has a Ready pod on every node it targets."""
    coverage = daemonset_coverage(clients, namespace, name, node_selector)
    if coverage is None:
        return Pending.of([f"daemonset {namespace}/{name}: not installed"])
    total = len(coverage.covered) + len(coverage.missing)
    items = list(coverage.missing)
    if total == 0:
        items.append(f"daemonset {namespace}/{name}: no node to run on")
    detail = f"{len(coverage.covered)}/{total} nodes have a Ready {name} pod"
    if coverage.excluded:
        detail += f"; not targeted: {summarize(coverage.excluded, 3)}"
    return Pending.of(items, detail)


def cni_gone(
    clients: KubeClients, namespace: str, name: str, pod_selector: str | None = None
) -> Pending:
    """Gate: the old CNI's DaemonSet is deleted and none of its pods is left.

    ``pod_selector`` finds leftover pods (default ``name=<name>``, weave-net's label);
    a pod still terminating counts as left: its veths and routes are still there.
    """
    items = []
    if _get_daemonset(clients, namespace, name) is not None:
        items.append(f"daemonset {namespace}/{name}: still installed")
    selector = pod_selector or f"name={name}"
    pods = list_all(
        clients.core.list_namespaced_pod,
        namespace,
        action=f"list pods of {namespace}/{name}",
        label_selector=selector,
    )["items"]
    for pod in pods:
        node = (pod.get("spec") or {}).get("nodeName") or "unscheduled"
        items.append(f"pod {namespace}/{pod['metadata']['name']} on {node}: still present")
    return Pending.of(items, f"{len(pods)} pod(s) of {name} left")


@dataclass(frozen=True)
class Removal:
    changed: bool
    message: str


def require_daemonset(clients: KubeClients, namespace: str, name: str, why: str) -> None:
    """Refuse (one sentence) unless DaemonSet ``namespace/name`` exists."""
    if _get_daemonset(clients, namespace, name) is None:
        raise PreconditionFailed(f"DaemonSet {namespace}/{name} does not exist; {why}")


def remove_daemonset(
    clients: KubeClients, namespace: str, name: str, *, dry_run: bool = False
) -> Removal:
    """Delete DaemonSet ``namespace/name`` and (in the background) its pods. Idempotent."""
    what = f"DaemonSet {namespace}/{name}"
    if _get_daemonset(clients, namespace, name) is None:
        return Removal(False, f"{what} is already gone")
    if dry_run:
        return Removal(False, f"dry-run: would delete {what} and its pods")
    try:
        raw(
            clients.apps.delete_namespaced_daemon_set,
            name,
            namespace,
            action=f"delete {what}",
            propagation_policy="Background",
        )
    except PreconditionFailed:  # 404: deleted concurrently, which is what we wanted
        return Removal(False, f"{what} is already gone")
    return Removal(True, f"deleted {what}; its pods are being removed")
