"""The ingress move against a real control plane: pods land on new nodes, ports stay put.

The move evicts through the drain's evictor: budgets and the drain's filters hold.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from kubernetes.client import (
    CoreV1Api,
    V1Pod,
)

from automation.core.errors import StepFailedError
from automation.kube.clients import KubeClients
from automation.kube.drain.filters import MIRROR_ANNOTATION
from automation.kube.ingress import PodMove, move_pods
from automation.kube.nodes import NodeSelection, Taint, taint_nodes
from automation.kube.probe import AvailabilityProbe
from automation.kube.watching import ListWatcher
from tests.automation.kube.conftest import Fleet
from tests.support.waiting import eventually
from tests.support.workloads import PAUSE_IMAGE

pytestmark = pytest.mark.controlplane


def test_ingress_move_lands_pods_on_new_nodes(fleet: Fleet) -> None:
    old = fleet.pool("old", 2)
    fleet.deploy("ingress", 3, ready_delay="500ms", max_unavailable=1, with_service=True)
    fleet.wait_ready("ingress", 3)
    fleet.wait_budget("ingress")
    new = fleet.pool("new", 2)
    taint_nodes(fleet.kube.core, NodeSelection(names=list(old.node_names)), Taint(key="migration"))
    move = PodMove(
        namespace=fleet.namespace,
        pod_selector="app=ingress",
        target=NodeSelection(label_selector=new.selector),
        timeout=90,
    )

    dry = move_pods(fleet.kube, move, dry_run=True)
    assert len(dry.moved) == 3 and dry.message.startswith("dry-run: would evict 3 pod(s)")
    assert fleet.nodes_of(fleet.pods("ingress")) <= set(old.node_names)

    with AvailabilityProbe(fleet.kube.discovery, [f"{fleet.namespace}/ingress"]) as probe:
        result = move_pods(fleet.kube, move)
        report = probe.report()

    assert result.changed and len(result.moved) == 3
    assert result.ready_on_target == 3
    assert fleet.nodes_of(fleet.wait_ready("ingress", 3)) <= set(new.node_names)
    assert report.zero_downtime, report.as_dict()
    again = move_pods(fleet.kube, move)
    assert not again.changed and len(again.already_in_place) == 3


class HealthyPods:
    """Follows pods by watch (events in the API server's order) and keeps the lowest
    number that were Ready and not terminating at once."""

    def __init__(self, kube: KubeClients, namespace: str, selector: str) -> None:
        self._lock = threading.Lock()
        self._pods: dict[str, bool] = {}
        self.lowest: int | None = None
        self.history: list[int] = []
        self._watcher = ListWatcher(
            kube.core.list_namespaced_pod,
            namespace,
            name="healthy pods",
            on_sync=self._sync,
            on_event=self._event,
            label_selector=selector,
        )

    @staticmethod
    def _healthy(pod: dict[str, Any]) -> bool:
        meta, status = pod.get("metadata") or {}, pod.get("status") or {}
        return not meta.get("deletionTimestamp") and any(
            c.get("type") == "Ready" and c.get("status") == "True"
            for c in status.get("conditions") or []
        )

    def _record(self) -> None:
        count = sum(self._pods.values())
        self.history.append(count)
        self.lowest = count if self.lowest is None else min(self.lowest, count)

    def _sync(self, items: list[dict[str, Any]]) -> None:
        with self._lock:
            self._pods = {p["metadata"]["uid"]: self._healthy(p) for p in items}
            self._record()

    def _event(self, kind: str, pod: dict[str, Any]) -> None:
        with self._lock:
            if kind == "DELETED":
                self._pods.pop(pod["metadata"]["uid"], None)
            else:
                self._pods[pod["metadata"]["uid"]] = self._healthy(pod)
            self._record()

    def __enter__(self) -> HealthyPods:
        self._watcher.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._watcher.stop()


class DetailTask:
    def __init__(self) -> None:
        self.details: list[str] = []

    def advance(self, amount: int = 1) -> None:
        return None

    def update(self, *, completed: int | None = None, detail: str | None = None) -> None:
        if detail is not None:
            self.details.append(detail)

    def __enter__(self) -> DetailTask:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


class DetailReporter:
    """Keeps the details the move shows on its task."""

    def __init__(self) -> None:
        self.task_ = DetailTask()

    def task(self, description: str, total: int | None = None) -> DetailTask:
        return self.task_

    def on_wait(self, what: str, status: object, remaining: float) -> None:
        return None


def test_ingress_move_waits_for_the_budget_and_never_exceeds_it(fleet: Fleet) -> None:
    old = fleet.pool("old", 2)
    fleet.deploy("ingress", 4, ready_delay="2s", max_unavailable=1, with_service=True)
    fleet.wait_ready("ingress", 4)
    fleet.wait_budget("ingress")
    new = fleet.pool("new", 2)
    fleet.retire(old)
    move = PodMove(
        namespace=fleet.namespace,
        pod_selector="app=ingress",
        target=NodeSelection(label_selector=new.selector),
        batch_size=4,  # evicting the batch at once would break maxUnavailable 1
        timeout=120,
    )
    reporter = DetailReporter()

    with HealthyPods(fleet.kube, fleet.namespace, "app=ingress") as healthy:
        result = move_pods(fleet.kube, move, reporter=reporter)

    assert len(result.moved) == 4 and result.ready_on_target == 4, result.message
    assert fleet.nodes_of(fleet.wait_ready("ingress", 4)) <= set(new.node_names)
    assert healthy.lowest == 3, healthy.history  # one disruption at a time, never two
    assert any("waiting for disruption budgets" in d for d in reporter.task_.details)


def _pod_on(node: str, name: str, **meta: Any) -> V1Pod:
    return V1Pod.from_dict(
        {
            "metadata": {"name": name, "labels": {"app": "ingress"}, **meta},
            "spec": {
                "nodeName": node,
                "terminationGracePeriodSeconds": 0,
                "containers": [{"name": "c", "image": PAUSE_IMAGE}],
            },
        }
    )


def test_ingress_move_reports_pods_the_drain_would_not_evict(fleet: Fleet) -> None:
    old = fleet.pool("old", 1)
    (node,) = old.node_names
    fleet.deploy("ingress", 2)
    deployed = {p.metadata.name for p in fleet.wait_ready("ingress", 2)}
    core = CoreV1Api(fleet.kube.api_client)
    node_uid = core.read_node(node).metadata.uid
    owner = {"apiVersion": "v1", "kind": "Node", "name": node, "uid": node_uid, "controller": True}
    core.create_namespaced_pod(fleet.namespace, _pod_on(node, "debug"))  # no controller
    static = core.create_namespaced_pod(
        fleet.namespace,
        _pod_on(node, "static", annotations={MIRROR_ANNOTATION: "hash"}, ownerReferences=[owner]),
    )
    new = fleet.pool("new", 1)
    fleet.retire(old)
    ns = fleet.namespace
    move = PodMove(
        namespace=ns,
        pod_selector="app=ingress",
        target=NodeSelection(label_selector=new.selector),
        timeout=90,
    )
    before = {p.metadata.uid for p in fleet.pods("ingress")}
    evictions = fleet.kube.request_counts().get("POST pods/eviction", 0)

    dry = move_pods(fleet.kube, move, dry_run=True)
    assert dry.refused == {f"{ns}/debug": "not managed by a controller (set force)"}
    assert dry.skipped == {f"{ns}/static": "mirror (static) pod"}
    assert dry.message.startswith("dry-run: would refuse to move, 1 pod(s) cannot be evicted")
    with pytest.raises(StepFailedError, match=r"debug \(not managed by a controller \(set force"):
        move_pods(fleet.kube, move)
    assert fleet.kube.request_counts().get("POST pods/eviction", 0) == evictions
    assert {p.metadata.uid for p in fleet.pods("ingress")} == before

    core.delete_namespaced_pod("debug", ns, grace_period_seconds=0)
    eventually(
        "the debug pod gone",
        lambda: [p for p in fleet.pods("ingress") if p.metadata.name == "debug"],
        until=lambda left: not left,
    )
    result = move_pods(fleet.kube, move)

    assert sorted(result.moved) == sorted(f"{ns}/{name}" for name in deployed)
    assert result.skipped == {f"{ns}/static": "mirror (static) pod"}
    assert "left 1 where they are: " in result.message
    left = [p for p in fleet.pods("ingress") if p.spec.node_name == node]
    assert [(p.metadata.name, p.metadata.uid) for p in left] == [("static", static.metadata.uid)]
