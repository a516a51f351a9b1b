"""Where a budget's round goes: one watch of the fleet's pods and budgets, split per round.

A Deployment under a PodDisruptionBudget of maxUnavailable 1 loses its old pods one
round at a time: an old pod leaves (evicted or deleted), its replacement becomes Ready,
the disruption controller writes ``disruptionsAllowed`` 1 back into the budget's status,
and the drain sends the next eviction. Watching pods and budgets from one process puts
every step on one clock, so each round splits into

- **replace**: old pod leaves → its replacement is Ready (ReplicaSet controller,
  scheduler, kwok, the ready delay);
- **controller**: replacement Ready → the budget allows again (disruption controller);
- **reaction**: the budget allows → the next old pod leaves (the drain itself; for a
  contender that does not wait for the budget, replacement Ready → next old pod leaves).

Medians and 90th percentiles over every round of every Deployment are printed.

``benchmarks/drain.py --timeline`` splits its contenders' rounds with :class:`Timeline`.
On its own, after ``scripts/testbin``, this module drains a small fleet with kubeshift's
drain on one real control plane and splits its rounds:

    .venv/bin/python benchmarks/drain_timeline.py [--deployments 4] [--replicas 10]
    .venv/bin/python benchmarks/drain_timeline.py --smoke   # 2 x 3 pods: the checks (CI)

Checked (``ok``/``FAIL`` lines, exit 1 on a failure): the drain completed, every old pod
was seen leaving once, every round between two of a Deployment's leaves was split into
replace and reaction with no negative step, and the budgets' allowances were seen (the
controller step has rounds).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kubernetes import client as k8s

from automation.kube.clients import KubeClients
from automation.kube.drain import DrainLimits, drain_nodes
from automation.kube.nodes import NodeSelection, Taint, taint_nodes
from automation.kube.pods import pod_ready
from automation.kube.watching import ListWatcher
from automation.sandbox.binaries import MissingBinaries, locate
from automation.sandbox.controlplane import ClusterOptions, start_cluster
from automation.sandbox.etcd import start_etcd
from automation.sandbox.kwok import POD_READY_DELAY_ANNOTATION
from tests.support.nodes import NodePools, NodePoolSpec
from tests.support.waiting import eventually
from tests.support.workloads import deployment

LEAVE, READY, ALLOW = "leave", "ready", "allow"


@dataclass
class Step:
    """Seconds per round of one step, over every Deployment."""

    name: str
    seconds: list[float] = field(default_factory=list)

    def describe(self) -> str:
        if not self.seconds:
            return f"{self.name}: no rounds"
        ordered = sorted(self.seconds)
        p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
        return (
            f"{self.name} median {statistics.median(ordered):.2f}s, p90 {p90:.2f}s "
            f"({len(ordered)} rounds)"
        )


class Timeline:
    """Per Deployment, the moments old pods left, replacements became Ready and the
    budget allowed again, from two watches in the benchmark's own process."""

    def __init__(
        self, kube: KubeClients, selector: str, old_nodes: set[str], *, budgets: bool = True
    ) -> None:
        """Follows the pods and budgets labelled ``selector`` in every namespace;
        ``budgets=False`` for a contender that does not wait for them (no controller step)."""
        self.kube, self.selector, self.old_nodes = kube, selector, old_nodes
        self.budgets = budgets
        self.events: dict[str, list[tuple[float, str]]] = defaultdict(list)
        self._lock = threading.Lock()
        self._left: set[str] = set()
        self._ready: set[str] = set()
        self._allowed: dict[str, int] = {}
        self._watchers: list[ListWatcher] = []

    def __enter__(self) -> Timeline:
        self._watchers = [
            ListWatcher(
                self.kube.core.list_pod_for_all_namespaces,
                name="timeline pods",
                label_selector=self.selector,
                on_sync=self._pods,
                on_event=self._pod,
            ).start()
        ]
        if self.budgets:
            self._watchers.append(
                ListWatcher(
                    self.kube.policy.list_pod_disruption_budget_for_all_namespaces,
                    name="timeline budgets",
                    label_selector=self.selector,
                    on_sync=self._budgets,
                    on_event=lambda kind, pdb: self._budget(pdb),
                ).start()
            )
        return self

    def __exit__(self, *exc: object) -> None:
        for watcher in self._watchers:
            watcher.stop()

    def _pods(self, pods: list[dict[str, Any]]) -> None:
        for pod in pods:
            self._pod("ADDED", pod)

    def _budgets(self, budgets: list[dict[str, Any]]) -> None:
        for budget in budgets:
            self._budget(budget)

    def _pod(self, kind: str, pod: dict[str, Any]) -> None:
        meta, now = pod["metadata"], time.monotonic()
        uid, app = meta["uid"], meta["labels"]["app"]
        with self._lock:
            if (pod.get("spec") or {}).get("nodeName") in self.old_nodes:
                leaving = kind == "DELETED" or meta.get("deletionTimestamp")
                if leaving and uid not in self._left:
                    self._left.add(uid)
                    self.events[app].append((now, LEAVE))
            elif pod_ready(pod) and uid not in self._ready:
                self._ready.add(uid)
                self.events[app].append((now, READY))

    def seen(self, kind: str) -> int:
        """How many events of ``kind`` the watches have recorded so far."""
        with self._lock:
            return sum(k == kind for events in self.events.values() for _, k in events)

    def _budget(self, pdb: dict[str, Any]) -> None:
        app, now = pdb["metadata"]["name"], time.monotonic()
        allowed = int((pdb.get("status") or {}).get("disruptionsAllowed", 0))
        with self._lock:
            if allowed > 0 and self._allowed.get(app, allowed) <= 0:
                self.events[app].append((now, ALLOW))
            self._allowed[app] = allowed

    def steps(self) -> list[Step]:
        """Replace, controller and reaction seconds of every complete round."""
        replace, controller, reaction = Step("replace"), Step("controller"), Step("reaction")
        with self._lock:
            timelines = {app: sorted(events) for app, events in self.events.items()}
        for events in timelines.values():
            leaves = [t for t, kind in events if kind == LEAVE]
            readies = [t for t, kind in events if kind == READY]
            allows = [t for t, kind in events if kind == ALLOW]
            for left, next_left in pairwise(leaves):
                ready = next((t for t in readies if left < t <= next_left), None)
                if ready is None:
                    continue
                replace.seconds.append(ready - left)
                allow = next((t for t in allows if ready <= t <= next_left), None)
                if allow is None:
                    reaction.seconds.append(next_left - ready)
                    continue
                controller.seconds.append(allow - ready)
                reaction.seconds.append(next_left - allow)
        return [replace, controller, reaction]


# --- on its own: a small fleet drained by kubeshift, its rounds split ----------------------

NAMESPACE = "timeline"
RETIRING = Taint(key="kubeshift.io/retiring", value="true", effect="NoSchedule")


def checks(steps: list[Step], left: int, pods: int, rounds: int, complete: bool) -> dict[str, bool]:
    """What must hold for the split to describe the drain: it completed, every old pod
    was seen leaving once, each of the ``rounds`` (a Deployment's leaves, less one per
    Deployment) was split, and the budgets' allowances were seen between them."""
    replace, controller, reaction = steps
    return {
        "the drain completed": complete,
        f"all {pods} old pods seen leaving once": left == pods > 0,
        f"all {rounds} rounds split into replace and reaction": len(replace.seconds)
        == len(reaction.seconds)
        == rounds
        > 0,
        "no step took negative time": all(s >= 0 for step in steps for s in step.seconds),
        "the budgets' allowances were seen": bool(controller.seconds),
    }


def _fleet(kube: KubeClients, pools: NodePools, args: argparse.Namespace) -> list[str]:
    """Deployments on the old nodes, each under a budget of maxUnavailable 1, Ready; the
    old nodes tainted and new ones beside them. Returns the old nodes' names."""
    kube.core.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=NAMESPACE)))
    eventually(
        "the namespace's default ServiceAccount",
        lambda: kube.core.read_namespaced_service_account("default", NAMESPACE),
    )
    old = pools.create(NodePoolSpec("old", count=2, labels={"pool": "timeline"}))
    delay = {POD_READY_DELAY_ANNOTATION: args.ready_delay}
    for i in range(args.deployments):
        app = f"timeline-{i}"
        body = deployment(app, args.replicas, node_selector={"pool": "timeline"}, annotations=delay)
        kube.apps.create_namespaced_deployment(NAMESPACE, body)
        budget = k8s.V1PodDisruptionBudget(
            metadata=k8s.V1ObjectMeta(name=app, labels={"app": app}),
            spec=k8s.V1PodDisruptionBudgetSpec(
                max_unavailable=1, selector=k8s.V1LabelSelector(match_labels={"app": app})
            ),
        )
        kube.policy.create_namespaced_pod_disruption_budget(NAMESPACE, budget)
    want = args.deployments * args.replicas
    eventually(
        f"{want} pods Ready with their budgets allowing one disruption",
        lambda: _settled(kube),
        until=lambda n: n == want,
        timeout=180,
        interval=0.5,
    )
    pools.create(NodePoolSpec("new", count=2, labels={"pool": "timeline"}))
    taint_nodes(kube.core, NodeSelection(names=list(old.node_names)), RETIRING)
    return list(old.node_names)


def _settled(kube: KubeClients) -> int:
    """Ready pods, counted only once every budget allows a disruption."""
    budgets = kube.policy.list_namespaced_pod_disruption_budget(NAMESPACE).items
    if not budgets or any((b.status.disruptions_allowed or 0) < 1 for b in budgets if b.status):
        return 0
    pods = kube.core.list_namespaced_pod(NAMESPACE).items
    return sum(
        any(c.type == "Ready" and c.status == "True" for c in (p.status.conditions or []))
        for p in pods
        if p.status
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deployments", type=int, default=4)
    parser.add_argument("--replicas", type=int, default=10)
    parser.add_argument("--ready-delay", default="1s", help="kwok's delay before Ready")
    parser.add_argument("--smoke", action="store_true", help="2 Deployments of 3: the checks")
    args = parser.parse_args()
    if args.smoke:
        args.deployments, args.replicas = 2, 3
    try:
        bins = locate()
    except MissingBinaries as exc:
        print(f"drain_timeline: {exc}", file=sys.stderr)
        return 2
    pods = args.deployments * args.replicas
    with tempfile.TemporaryDirectory(prefix="kubeshift-timeline-") as tmp:
        etcd = start_etcd(bins.etcd, Path(tmp))
        cluster = start_cluster(bins, etcd.url, Path(tmp) / "cp", ClusterOptions(name="timeline"))
        try:
            with cluster.api_client() as api:
                kube, pools = KubeClients(api, name="timeline"), NodePools(api)
                try:
                    old = _fleet(kube, pools, args)
                    apps = ",".join(f"timeline-{i}" for i in range(args.deployments))
                    with Timeline(kube, f"app in ({apps})", set(old)) as timeline:
                        summary = drain_nodes(kube, old, limits=DrainLimits(timeout=300))
                        eventually(  # the drain returns before the watch sees the last Ready
                            "every replacement Ready in the timeline",
                            lambda: timeline.seen(READY),
                            until=lambda ready: ready >= pods,
                        )
                finally:
                    pools.cleanup()
        finally:
            cluster.stop()
            etcd.stop()
    steps = timeline.steps()
    left = timeline.seen(LEAVE)
    verdict = checks(steps, left, pods, pods - args.deployments, summary.complete)
    for name, ok in verdict.items():
        print(f"{'ok ' if ok else 'FAIL'} {name}")
    if not args.smoke:
        print(summary.message())
        for step in steps:
            print(f"  {step.describe()}")
    return 0 if all(verdict.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
