"""The drain against a real control plane: budgets, endpoints, deadlines, limits, restarts."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from kubernetes.client import AppsV1Api, CoreV1Api, PolicyV1Api, V1Pod

from automation.core.errors import GateTimeoutError
from automation.core.waiting import Deadline
from automation.kube.clients import ClusterAccess, build_clients
from automation.kube.drain import DrainLimits, DrainOptions, drain_nodes
from automation.kube.drain.evictor import Evictor
from automation.kube.gates import no_evictable_pods, workloads_available
from automation.kube.probe import AvailabilityProbe
from automation.kube.watching import ListWatcher
from automation.sandbox.controlplane import Cluster
from tests.automation.kube.conftest import Fleet, is_ready
from tests.support.nodes import unique_name
from tests.support.waiting import eventually
from tests.support.workloads import PAUSE_IMAGE

pytestmark = pytest.mark.controlplane

REPO = Path(__file__).resolve().parents[3]


class RecordingTask:
    def __init__(self, total: int | None) -> None:
        self.total, self.completed, self.details = total, 0, []

    def advance(self, amount: int = 1) -> None:
        self.completed += amount

    def update(self, *, completed: int | None = None, detail: str | None = None) -> None:
        if completed is not None:
            self.completed = completed
        if detail is not None:
            self.details.append(detail)

    def __enter__(self) -> RecordingTask:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


class RecordingReporter:
    """A Reporter that keeps every task, to assert what the operator was shown."""

    def __init__(self) -> None:
        self.tasks: dict[str, RecordingTask] = {}

    def task(self, description: str, total: int | None = None) -> RecordingTask:
        self.tasks[description] = RecordingTask(total)
        return self.tasks[description]

    def on_wait(self, what: str, status: object, remaining: float) -> None:
        return None


def test_drain_honours_budgets_and_keeps_endpoints(fleet: Fleet) -> None:
    old = fleet.pool("old", 3)
    fleet.deploy("web", 4, ready_delay="1s", min_available=3, with_service=True)
    fleet.deploy("api", 4, ready_delay="1s", max_unavailable=1, with_service=True)
    fleet.wait_ready("web", 4)
    fleet.wait_ready("api", 4)
    fleet.wait_budget("web")
    fleet.wait_budget("api")
    new = fleet.pool("new", 3)
    fleet.retire(old)
    services = [f"{fleet.namespace}/web", f"{fleet.namespace}/api"]

    reporter = RecordingReporter()
    with AvailabilityProbe(fleet.kube.discovery, services) as probe:
        summary = drain_nodes(
            fleet.kube,
            old.node_names,
            limits=DrainLimits(max_nodes_in_flight=3, max_pods_in_flight=8, timeout=120),
            reporter=reporter,
        )
        fleet.wait_ready("web", 4)
        fleet.wait_ready("api", 4)
        report = probe.report()

    assert summary.complete, summary.message()
    assert sorted(summary.drained_nodes) == sorted(old.node_names)
    assert len(summary.evicted) == 8
    assert fleet.nodes_of(fleet.pods()) <= set(new.node_names)
    assert report.zero_downtime, report.as_dict()
    assert report.services[services[0]].min_ready >= 1
    assert no_evictable_pods(fleet.kube, old.node_names).done
    assert reporter.tasks["draining nodes"].completed == 3
    assert reporter.tasks["evicting pods"].completed == 8
    assert any(
        "waiting for disruption budgets" in d for d in reporter.tasks["evicting pods"].details
    )
    gate = eventually(
        "workloads available again",
        lambda: workloads_available(fleet.kube, [fleet.namespace]),
        until=lambda p: p.done,
    )
    assert gate.done


def test_budget_that_never_allows_ends_at_deadline_naming_it(fleet: Fleet) -> None:
    """Each node holds one of the budget's pods (room for one pod a node), so two
    drains wait on the one budget: the younger waits behind the older, and both pods
    are reported blocked by it, whichever node's drain came first."""
    one_pod = {"cpu": "4", "memory": "16Gi", "pods": "1"}
    old = fleet.pool("stuck", 2, capacity=one_pod)
    fleet.deploy("db", 2, min_available=2)
    fleet.wait_ready("db", 2)
    fleet.wait_budget("db")
    assert {p.spec.node_name for p in fleet.pods("db")} == set(old.node_names)
    fleet.pool("spare", 2)

    started = time.monotonic()
    summary = drain_nodes(fleet.kube, old.node_names, limits=DrainLimits(timeout=6))
    elapsed = time.monotonic() - started

    assert 6 <= elapsed < 20
    assert not summary.complete
    assert len(summary.blocked) == 2
    budget = (
        f"{fleet.namespace}/db (minAvailable 2; currentHealthy 2, desiredHealthy 2, "
        "disruptionsAllowed 0)"
    )
    assert set(summary.blocked.values()) == {budget}
    with pytest.raises(GateTimeoutError, match=r"2 blocked by .*/db \(minAvailable 2"):
        summary.raise_for_incomplete()
    assert len(fleet.pods("db")) == 2  # nothing was evicted


def test_concurrency_limits_hold(fleet: Fleet) -> None:
    old = fleet.pool("busy", 6)
    fleet.deploy("batch", 24)
    fleet.wait_ready("batch", 24)
    fleet.pool("fresh", 6)
    fleet.retire(old)

    summary = drain_nodes(
        fleet.kube,
        old.node_names,
        limits=DrainLimits(max_nodes_in_flight=2, max_pods_in_flight=3, timeout=120),
    )

    assert summary.complete, summary.message()
    assert len(summary.evicted) == 24
    assert summary.max_nodes_in_flight == 2
    assert 1 <= summary.max_pods_in_flight <= 3


def test_budgets_serve_the_node_that_entered_first(fleet: Fleet) -> None:
    """With fewer nodes in flight than nodes to drain, every budget's next allowance goes
    to the oldest node still holding one of its pods: the nodes empty one after another
    (each then lets the next node in), so every Deployment evicts from the nodes in the
    same order, and no budget idles while the nodes in flight finish together."""
    old = fleet.pool("queue", 6)
    apps = ("alpha", "bravo", "charlie")
    for app in apps:
        fleet.deploy(app, 6, ready_delay="1s", max_unavailable=1)
    for app in apps:
        fleet.wait_ready(app, 6)
        fleet.wait_budget(app)
    fleet.pool("room", 6)
    fleet.retire(old)
    evictions: list[tuple[str, str]] = []  # (app, node) in the order pods began to go
    old_nodes, seen = set(old.node_names), set()

    def going(kind: str, pod: dict[str, Any]) -> None:
        meta, node = pod["metadata"], pod["spec"].get("nodeName")
        leaving = kind == "DELETED" or meta.get("deletionTimestamp")
        if leaving and node in old_nodes and meta["uid"] not in seen:
            seen.add(meta["uid"])
            evictions.append((meta["labels"]["app"], node))

    watcher = ListWatcher(
        fleet.kube.core.list_namespaced_pod,
        fleet.namespace,
        name="pods",
        on_sync=lambda _: None,
        on_event=going,
    ).start()
    try:
        summary = drain_nodes(
            fleet.kube,
            old.node_names,
            limits=DrainLimits(max_nodes_in_flight=3, max_pods_in_flight=50, timeout=120),
        )
        eventually("every eviction seen", lambda: len(evictions), until=lambda n: n == 18)
    finally:
        watcher.stop()

    assert summary.complete, summary.message()
    orders = {app: [node for a, node in evictions if a == app] for app in apps}
    for order in orders.values():
        for other_order in orders.values():
            shared = [n for n in dict.fromkeys(order) if n in other_order]
            assert shared == [n for n in dict.fromkeys(other_order) if n in order], orders


def test_daemonset_and_mirror_pods_are_left_alone(fleet: Fleet) -> None:
    old = fleet.pool("ds", 1)
    (node,) = old.node_names
    apps = AppsV1Api(fleet.kube.api_client)
    ds = {
        "metadata": {"name": "agent"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {
                    "nodeSelector": {"kubernetes.io/hostname": node},
                    "containers": [{"name": "a", "image": PAUSE_IMAGE}],
                    "tolerations": [{"operator": "Exists"}],
                },
            },
        },
    }
    apps.create_namespaced_daemon_set(fleet.namespace, ds)
    node_uid = CoreV1Api(fleet.kube.api_client).read_node(node).metadata.uid
    owner = {"apiVersion": "v1", "kind": "Node", "name": node, "uid": node_uid}
    mirror = V1Pod.from_dict(
        {
            "metadata": {
                "name": f"static-{node}",
                "annotations": {"kubernetes.io/config.mirror": "hash"},
                "ownerReferences": [{**owner, "controller": True}],
            },
            "spec": {"nodeName": node, "containers": [{"name": "s", "image": PAUSE_IMAGE}]},
        }
    )
    CoreV1Api(fleet.kube.api_client).create_namespaced_pod(fleet.namespace, mirror)
    fleet.deploy("app", 2)
    fleet.wait_ready("agent", 1)
    fleet.wait_ready("app", 2)
    fleet.pool("other", 1)

    summary = drain_nodes(fleet.kube, [node], limits=DrainLimits(timeout=60))

    assert summary.complete, summary.message()
    assert len(summary.evicted) == 2
    skipped = {k.split("/", 1)[1].split("-")[0]: v for k, v in summary.skipped.items()}
    assert "DaemonSet-managed (agent)" in skipped.values()
    assert summary.skipped[f"{fleet.namespace}/static-{node}"] == "mirror (static) pod"
    left = {p.metadata.name.split("-")[0] for p in fleet.pods() if p.spec.node_name == node}
    assert left == {"agent", "static"}


def test_dry_run_changes_nothing_and_names_pods(fleet: Fleet) -> None:
    old = fleet.pool("dry", 1)
    fleet.deploy("w", 2)
    before = {p.metadata.name for p in fleet.wait_ready("w", 2)}

    summary = drain_nodes(fleet.kube, [*old.node_names, "ip-10-255-0-1.ec2.internal"], dry_run=True)

    text = summary.message()
    assert text.startswith("dry-run: would drain 1 node(s):")
    assert f"cordon and drain node {old.node_names[0]} — evict 2:" in text
    assert all(f"{fleet.namespace}/{name}" in text for name in before)
    assert "not found (already gone): ip-10-255-0-1.ec2.internal" in text
    node = CoreV1Api(fleet.kube.api_client).read_node(old.node_names[0])
    assert not node.spec.unschedulable
    assert {p.metadata.name for p in fleet.pods("w")} == before


CRASHING_DRAIN = textwrap.dedent(
    """
    import sys
    from automation.kube.clients import ClusterAccess, build_clients
    from automation.kube.drain import DrainLimits, drain_nodes
    clients = build_clients(ClusterAccess(kubeconfig=sys.argv[1], context=sys.argv[2]))
    drain_nodes(clients, sys.argv[3:], limits=DrainLimits(max_nodes_in_flight=1, timeout=300))
    """
)


def test_rerun_after_crash_finishes_without_double_work(
    fleet: Fleet, primary_cluster: Cluster
) -> None:
    old = fleet.pool("crash", 3)
    fleet.deploy("slow", 9, ready_delay="1s", max_unavailable=1)
    fleet.wait_ready("slow", 9)
    fleet.wait_budget("slow")
    fleet.pool("after", 3)
    fleet.retire(old)
    original = {p.metadata.uid for p in fleet.pods("slow")}

    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            CRASHING_DRAIN,
            str(primary_cluster.kubeconfig_path),
            primary_cluster.context,
            *old.node_names,
        ],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        eventually(
            "the first drain to evict a few pods",
            lambda: len(original - {p.metadata.uid for p in fleet.pods("slow")}),
            until=lambda gone: gone >= 3,
            timeout=60,
            interval=0.1,
        )
    finally:
        proc.kill()  # SIGKILL: no cleanup, like a crashed operator laptop
        proc.wait()
    remaining = {
        f"{fleet.namespace}/{p.metadata.name}"
        for p in fleet.pods("slow")
        if p.spec.node_name in old.node_names and p.metadata.uid in original
    }
    assert 0 < len(remaining) < 9, "the crash should leave the drain half done"

    summary = drain_nodes(fleet.kube, old.node_names, limits=DrainLimits(timeout=120))

    assert summary.complete, summary.message()
    assert set(summary.evicted) == remaining  # nothing evicted twice, nothing missed
    assert fleet.nodes_of(fleet.pods("slow")).isdisjoint(old.node_names)


def test_drain_carries_on_when_the_api_server_restarts_midway(
    cluster_factory, namespace_factory, node_pools_factory
) -> None:
    """The API server goes away for seconds during the drain; the drain finishes anyway."""
    cluster = cluster_factory("apirestart")
    kube = build_clients(ClusterAccess(kubeconfig=cluster.kubeconfig_path, context=cluster.context))
    fleet = Fleet(kube, node_pools_factory(cluster), namespace_factory(cluster), unique_name("g"))
    old = fleet.pool("old", 2)
    fleet.deploy("web", 6, ready_delay="2s", max_unavailable=1)
    fleet.wait_ready("web", 6)
    fleet.wait_budget("web")
    new = fleet.pool("new", 2)
    fleet.retire(old)
    outcome: dict[str, object] = {}

    def drain() -> None:
        limits = DrainLimits(max_nodes_in_flight=2, max_pods_in_flight=2, timeout=240)
        outcome["summary"] = drain_nodes(kube, old.node_names, limits=limits)

    worker = threading.Thread(target=drain, name="drain-under-restart")
    worker.start()
    try:
        eventually(
            "a first replacement pod on the new nodes",
            lambda: fleet.nodes_of(fleet.pods("web")) & set(new.node_names),
            until=bool,
            timeout=120,
        )
        cluster.stop_apiserver()
        time.sleep(5)
    finally:
        cluster.start_apiserver()
        worker.join(timeout=300)
    summary = outcome.get("summary")

    assert not worker.is_alive(), "the drain never returned"
    assert summary is not None and summary.complete, summary and summary.message()
    moved = eventually(
        "6 Ready web pods, all on the new nodes",
        lambda: [p for p in fleet.pods("web") if is_ready(p)],
        until=lambda pods: len(pods) == 6 and fleet.nodes_of(pods) <= set(new.node_names),
        timeout=120,
    )
    assert len(moved) == 6
    kube.close()


def test_a_caller_sleeps_through_budgets_it_does_not_wait_on(fleet: Fleet) -> None:
    """A budget's change wakes only the callers with pods waiting on it: with thousands of
    pods and 20 nodes in flight, waking every caller on every change cost the control
    plane's CPU. The caller here waits on ``db`` (never allows) while ``other`` changes."""
    old = fleet.pool("held", 1)
    fleet.deploy("db", 2, min_available=2)
    fleet.deploy("other", 1, min_available=0)
    fleet.wait_ready("db", 2)
    fleet.wait_budget("db")
    fleet.wait_budget("other")
    (node,) = old.node_names
    policy = PolicyV1Api(fleet.kube.api_client)
    limits = DrainLimits(timeout=120)
    with Evictor(fleet.kube, DrainOptions(), limits) as evictor:
        assert evictor.tracker is not None
        other = f"{fleet.namespace}/other"
        with evictor.follow(
            "pods of db",
            fleet.kube.core.list_namespaced_pod,
            fleet.namespace,
            label_selector="app=db",
        ) as pods:
            caller = threading.Thread(target=evictor.evict, args=(pods,), daemon=True)
            caller.start()
            eventually(
                "the caller waiting on db",
                lambda: [w.state for w in list(pods.work.values())],
                until=lambda states: states == ["blocked", "blocked"],
            )
            before = pods.wakeups
            for minimum in (1, 0, 1, 0, 1, 0):
                policy.patch_namespaced_pod_disruption_budget(
                    "other", fleet.namespace, {"spec": {"minAvailable": minimum}}
                )
            eventually(
                "the tracker seeing every change of other",
                lambda: (evictor.tracker.get(other) or {}).get("status") or {},
                until=lambda status: status.get("observedGeneration", 0) >= 7,
            )
            woken = pods.wakeups - before
            evictor.deadline = Deadline(0.0)  # let the caller go
            caller.join(timeout=30)

    assert woken == 0
    assert not caller.is_alive()
    assert evictor.summary.evicted == []
    assert node in {p.spec.node_name for p in fleet.pods("db")}
