#!/usr/bin/env python3
"""Benchmark: kubeshift's concurrent, budget-following drain vs a node-by-node ``kubectl drain``.

Why: the drain should approach the bound set by the PodDisruptionBudgets and the pods'
time to become Ready, where ``kubectl drain`` (serial across nodes, 429s retried every
5 s) does not. Every contender drains an identical fleet, built fresh on the same real
control plane (apiserver, controller-manager, scheduler, etcd, kwok from
``scripts/testbin``) in the same run: old nodes full of Deployments, each with a PDB and
a Service, whose pods take ``--ready-delay`` to become Ready (a kwok stage delay), and
empty new nodes. Printed: the median wall time of each contender over ``--repeats``
runs, their ratios, the lower bound the PDBs and ready time imply, API requests per
evicted pod, and the availability probe's minimum ready endpoints per Service.

**One end point for everyone: the last replacement Ready.** Each contender is timed
from its start to the moment one watch in this process (the same code for all,
:class:`EndPoint`) first sees every pod of the fleet Ready on a new node and none left
on an old one. ``kubectl drain`` and kubeshift's drain return when the last old pod is
gone, about one ready delay earlier; the ceiling (every old pod deleted at once) has no
such moment worth timing: its deletes are answered within seconds while the
replacements take much longer. A drain is over, for the workloads, when they are back
at full strength where they will stay, and the PDB bound counts exactly that (rounds
of 'replacement Ready'), so that is the end point; the moment the old nodes were empty
is printed beside it, from the same watch.

**The eviction floor: kubeshift's fair comparison.** The ceiling deletes without
budgets, so it times the control plane's replacement alone, and the PDB bound counts
only the ready delays of a budget's rounds. The floor (:func:`run_floor`) takes
kubeshift's path with the simplest evictor there is: every old pod's eviction asked for
at once through the Eviction API (policy/v1, 64 in flight: ``--floor-in-flight``),
the pods a budget refused (429) asked again 0.2 s after each sweep (``--floor-pause``),
and nothing else (no cordon: the old nodes are tainted already, as for every
contender; no node windows, no watch, no order; ``--skip-floor`` leaves it out).
Each eviction a budget lets through spends its allowance; the next waits until the
disruption controller, one worker syncing every budget, has seen the replacement Ready
and written ``disruptionsAllowed`` back into the budget's status. Those status writes
are in the floor's path as they are in kubeshift's, and in neither the bound nor the
ceiling: kubeshift over the floor (ks/floor) is what kubeshift's own logic (windows,
reading the budgets, its retries) costs, or saves when the floor's requests load the
machine. That price is shown as the floor's requests per evicted pod: a waiting pod is
asked up to five times a second, nearly always answered 429, where kubeshift reads the
budgets instead of asking.

**Repeats in rotated order, one fleet at a time.** Repeat ``r`` starts with contender
``r`` (mod their number), so over as many repeats as contenders each runs in every
position once: a control plane warming up, or its etcd growing over the run, favours
nobody. Medians are reported. A fleet's teardown (its nodes, namespaces and pods) is
waited for, with a deadline, before the next fleet is built.

**Correctness checks, every run.** Each contender's run is checked and the checks are
printed (exit 1 when one fails): its drain reported complete, every pod of the fleet
was evicted or deleted exactly once, a fresh listing agrees with the watch that every
replacement is Ready and no pod is left on an old node, the end point came after the
contender returned, the probe followed every Service; the budget-respecting
contenders left no Service without a ready endpoint, while the ceiling (deleting
without budgets) must have emptied one, or the probe is blind; the teardown finished.
A pod delete answered with anything but 404 stops the run (:mod:`benchmarks.deletes`),
and so does an eviction of the floor's answered with anything but 201, 404 or 429.
``--smoke`` runs all of that on a few pods, one repeat, every contender (CI runs it,
``tests/benchmarks/test_drain.py``); it prints no timing figures.

Run on demand for figures (CI runs only ``--smoke``):

    .venv/bin/python benchmarks/drain.py --smoke                # checks only, about a minute
    .venv/bin/python benchmarks/drain.py --old-nodes 10 --new-nodes 10 \\
        --deployments 10 --pods 250                              # a quick look, 3 repeats
    .venv/bin/python benchmarks/drain.py                        # the issue's full scale

Measured with this method, on 2 cores shared with a cold CI run and a rehearsal
sandbox (1-minute load 3.0 to 13.9, mean 10.0: the figures of a busy machine), Kubernetes
v1.36.3, kwok v0.8.0, kubectl v1.32.4; PDB maxUnavailable 1, ready delay 2 s; old nodes
tainted first, as the migration does; kubeshift with 20 nodes and 200 pods in flight;
medians of 3 repeats in rotated order (23 minutes in all). "Ceiling" is the control
plane's own replacement time in the same run: every old pod deleted at once, a request
per pod, 64 in flight, no budget.

  old+new, pods / deploys  per node  bound  ceiling  kubeshift  kubectl  k/ks   ks/best  req/pod
  10+10,   250 / 10        2.5        50 s   34.4 s    80.0 s   164.7 s  2.06x  1.60x  1.20 / 3.08
  the same, quiet machine    2.5        50 s    8.7 s    55.5 s   143.6 s  2.59x  1.11x  1.17 / 3.02

(per node: replicas of one Deployment per node holding it; k/ks: kubectl over
kubeshift; ks/best: kubeshift over max(bound, ceiling); req/pod: API requests per
evicted pod, kubeshift / kubectl; every time to the last replacement Ready.) The runs:
kubeshift 110.9, 79.6 and 80.0 s (the first at a load of 12), kubectl 179.6, 160.3 and
164.7 s, ceiling 35.7, 34.4 and 20.9 s. The old nodes were empty about 2 s (one ready
delay) before kubeshift's and kubectl's last replacement was Ready; the ceiling's
deletes were answered after 8 to 16 s. No Service lost its last ready endpoint in any
kubeshift or kubectl run (minimum 24 of 25), and every Service was emptied in every
ceiling run. The second row is the same command on this machine with nothing else
running (1-minute load 1.0 to 1.9, 15 minutes in all): kubeshift 55.5, 55.4 and 55.5 s,
kubectl 143.6, 143.7 and 138.4 s, ceiling 8.8, 8.7 and 8.6 s, every check ok. Both
rows' ks/best are over the PDB bound (50 s, above either ceiling): the load cost
kubeshift about 25 s of rounds and the control plane's own replacement four times as
long. The defaults (5000 pods on 100+100 nodes) take well over an hour with three
repeats here and have not been measured with this method.

With the eviction floor, the same command on a quiet machine (load about 1, 20 minutes
in all; medians of 3 in rotated order, every check ok):

  old+new, pods/deploys  per node  bound  ceiling  floor   ks      kubectl  k/ks   ks/best  ks/floor
  10+10, 250/10          2.6       50 s   4.7 s    68.0 s  52.9 s  198.6 s  3.76x  1.06x    0.78x

(ks: kubeshift; API requests per evicted pod: kubeshift 1.17, kubectl 3.42, floor
28.15.) The runs: kubeshift 52.8, 52.9 and 53.7 s, floor 67.8, 69.4 and 68.0 s, kubectl
204.7, 198.6 and 167.2 s (its fleet happened to be placed unevenly: up to 13 replicas of
a Deployment on one node), ceiling 4.5, 4.7 and 5.7 s. kubeshift stays one ready delay
or so over the bound; the floor, on kubeshift's eviction path but budget-blind, is
slower than kubeshift: its 28 requests per pod (7404 in 68 s, nearly all 429s) cost the
API server 40 CPU-s of the 2 cores, and each sweep over the refused pods takes about a
second (70 sweeps), so a pod its budget has just let go waits about half a sweep per
round, some 12 s over 25 rounds. The eviction path does not limit kubeshift here; the
budgets' rounds do.

Earlier tables here (up to 5000 pods on 100+100 nodes) were single runs in a fixed
order, with kubeshift and kubectl stopped when the last old pod was gone and the
ceiling and budget rounds when the last replacement was Ready, and most ceilings timed
a serial ``deletecollection`` per node instead of the replacement: they were removed,
not carried over. What they showed about the mechanism, which this method does not
change, is how a budget of maxUnavailable 1 paces a drain: every Deployment loses its
old pods one round at a time (evict, replace, schedule, ready delay, the disruption
controller's status write), rounds of different Deployments overlap, and at thousands
of pods the disruption controller, syncing every budget with one worker on saturated
cores, is the slowest step of each round (``--timeline`` splits a round into replace,
controller and reaction). ``--rounds`` measures that price: each Deployment loses an
old pod (deleted, no eviction API, no PDB status to wait for) whenever its budget would
allow, every Deployment at once. ``--namespaces N`` spreads the Deployments over N
namespaces, which shortens the controllers' per-namespace pod lists.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kubernetes import client as k8s  # noqa: E402

from automation.kube.clients import ClusterAccess, KubeClients, build_clients, list_all  # noqa: E402
from automation.kube.drain import DrainLimits, DrainOptions, drain_nodes  # noqa: E402
from automation.kube.nodes import NodeSelection, Taint, taint_nodes  # noqa: E402
from automation.kube.pods import pod_ready  # noqa: E402
from automation.kube.probe import AvailabilityProbe, ProbeReport  # noqa: E402
from automation.kube.watching import ListWatcher  # noqa: E402
from automation.sandbox.binaries import locate  # noqa: E402
from automation.sandbox.controlplane import Cluster, ClusterOptions, start_cluster  # noqa: E402
from automation.sandbox.etcd import start_etcd  # noqa: E402
from automation.sandbox.kwok import POD_READY_DELAY_ANNOTATION, parse_duration_ms  # noqa: E402
from automation.sandbox.processes import Daemon  # noqa: E402
from benchmarks.deletes import delete_at_once, delete_pod  # noqa: E402
from benchmarks.drain_timeline import Timeline  # noqa: E402
from tests.support.nodes import NodePool, NodePools, NodePoolSpec  # noqa: E402
from tests.support.workloads import PAUSE_IMAGE  # noqa: E402

GROUP_LABEL = "kubeshift.io/bench-group"
KUBECTL_REQUEST = re.compile(r"\] (GET|POST|PUT|PATCH|DELETE) https?://")
RETIRING = Taint(key="kubeshift.io/retiring", value="true", effect="NoSchedule")
KUBECTL_EVICTED = re.compile(r"^pod/\S+ evicted$", re.M)
TEARDOWN_SECONDS = 900.0
"""Deadline for one fleet's nodes, namespaces and pods to be gone (5000 pods: minutes)."""

# The contenders, in the order of the first repeat.
KUBESHIFT, KUBECTL, FLOOR, CEILING, ROUNDS = "kubeshift", "kubectl", "floor", "ceiling", "rounds"
BUDGETED = (KUBESHIFT, KUBECTL, FLOOR, ROUNDS)
"""Contenders that respect the budgets: no Service may lose its last ready endpoint."""
EVICTING = (KUBESHIFT, KUBECTL, FLOOR)
"""Contenders that evict through the Eviction API: they report completeness and requests."""

EVICTORS = 64
"""The floor's evictions in flight; the client's connection pool (128) holds as many."""
RETRY_PAUSE = 0.2
"""Seconds between the floor's sweeps over the pods its budgets refused (see :func:`run_floor`)."""
EVICTED, GONE = 201, 404
"""The answers an eviction may get and still count: evicted, or already gone."""
REFUSED = 429
"""A budget's 'not now': the pod is asked again in the next sweep."""

SMOKE = {
    "old_nodes": 2, "new_nodes": 2, "deployments": 2, "pods": 4, "namespaces": 2,
    "ready_delay": "1s", "repeats": 1, "rounds": True, "timeline": True,
    "skip_kubectl": False, "skip_floor": False, "skip_ceiling": False,
}  # fmt: skip
"""``--smoke``: every contender and every check on a few pods, once; sizes overridden."""


@dataclass(frozen=True)
class Check:
    """One correctness check of one contender's run: what, whether it held, the evidence."""

    name: str
    passed: bool
    detail: str


@dataclass
class Outcome:
    """One contender's run: ``seconds`` from its start to the end point (last
    replacement Ready), ``emptied_seconds`` to the last old pod gone, ``own_seconds``
    until the contender itself returned."""

    name: str
    repeat: int = 0
    position: int = 0
    seconds: float = 0.0
    emptied_seconds: float = 0.0
    own_seconds: float = 0.0
    evicted: int = 0
    requests: int = 0
    complete: bool = False
    min_ready: int | None = None
    zero_intervals: int = 0
    cpu_seconds: dict[str, float] = field(default_factory=dict)
    detail: dict[str, Any] = field(default_factory=dict)
    checks: list[Check] = field(default_factory=list)

    @property
    def requests_per_pod(self) -> float:
        return self.requests / self.evicted if self.evicted else float("nan")

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]


@dataclass(frozen=True)
class Topology:
    """Replicas of one Deployment on one node, for every (Deployment, node) pair in use."""

    per_node: tuple[int, ...]

    @property
    def mean(self) -> float:
        return sum(self.per_node) / len(self.per_node) if self.per_node else 0.0

    def describe(self) -> str:
        packed = sum(1 for n in self.per_node if n > 1)
        return (
            f"replicas of a Deployment per node holding it: mean {self.mean:.2f}, "
            f"max {max(self.per_node, default=0)}; {packed}/{len(self.per_node)} "
            f"(Deployment, node) pairs hold more than one"
        )


class CpuMeter:
    """CPU seconds used by this process and each daemon while a contender drains.

    The control plane and the drain share the machine's cores: a drain that burns CPU
    slows the replacements it waits for. Daemons are read from ``/proc/<pid>/stat``.
    """

    def __init__(self, daemons: list[Daemon]) -> None:
        self.daemons = [d for d in daemons if d.process is not None]
        self.start: dict[str, float] = {}

    @staticmethod
    def _proc_seconds(pid: int) -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def sample(self) -> dict[str, float]:
        seconds = {"this process": time.process_time()}
        for daemon in self.daemons:
            assert daemon.process is not None
            with contextlib.suppress(OSError):
                seconds[daemon.name] = self._proc_seconds(daemon.process.pid)
        return seconds

    def __enter__(self) -> CpuMeter:
        self.start = self.sample()
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def used(self) -> dict[str, float]:
        end = self.sample()
        return {name: end[name] - self.start[name] for name in self.start if name in end}


# --- the end point ------------------------------------------------------------------------


class FleetState:
    """Where a fleet's pods are, kept per event: pods on old nodes (terminating ones
    included: they have not left) and Ready pods elsewhere. Counted, not recomputed,
    so that thousands of pods cost one update per event."""

    def __init__(self, old_nodes: Iterable[str], want: int) -> None:
        self.old_nodes, self.want = frozenset(old_nodes), want
        self._pods: dict[str, tuple[bool, bool]] = {}  # uid -> (on an old node, Ready elsewhere)
        self.on_old = 0
        self.ready_elsewhere = 0

    def _classify(self, pod: Mapping[str, Any]) -> tuple[bool, bool]:
        on_old = (pod.get("spec") or {}).get("nodeName") in self.old_nodes
        return on_old, not on_old and pod_ready(pod)

    def _forget(self, uid: str) -> None:
        on_old, ready = self._pods.pop(uid, (False, False))
        self.on_old -= on_old
        self.ready_elsewhere -= ready

    def _keep(self, uid: str, state: tuple[bool, bool]) -> None:
        self._forget(uid)
        self._pods[uid] = state
        self.on_old += state[0]
        self.ready_elsewhere += state[1]

    def sync(self, pods: Iterable[Mapping[str, Any]]) -> None:
        """Start over from a full listing."""
        self._pods.clear()
        self.on_old = self.ready_elsewhere = 0
        for pod in pods:
            self._keep(pod["metadata"]["uid"], self._classify(pod))

    def apply(self, kind: str, pod: Mapping[str, Any]) -> None:
        """One watch event."""
        uid = pod["metadata"]["uid"]
        if kind == "DELETED":
            self._forget(uid)
        else:
            self._keep(uid, self._classify(pod))

    @property
    def emptied(self) -> bool:
        """No pod of the fleet is left on an old node."""
        return self.on_old == 0

    @property
    def replaced(self) -> bool:
        """The end point: no pod left on an old node and every replica Ready on a new one."""
        return self.emptied and self.ready_elsewhere >= self.want


class EndPointMissed(RuntimeError):
    """The fleet was not replaced before the deadline."""


class EndPoint:
    """One watch of the fleet's pods, the same for every contender: the moments (on
    ``clock``) the old nodes were empty and every replacement was Ready. The fleet is
    the pods ``label_selector`` and ``field_selector`` pick in every namespace;
    ``benchmarks/example_at_scale.py`` times its ceiling and kubeshift's drain to the
    same end point with it."""

    def __init__(
        self,
        core: k8s.CoreV1Api,
        old_nodes: Iterable[str],
        want: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> None:
        self.state = FleetState(old_nodes, want)
        self.clock = clock
        self.emptied_at: float | None = None
        self.replaced_at: float | None = None
        self._changed = threading.Condition()
        selectors: dict[str, Any] = {
            "label_selector": label_selector,
            "field_selector": field_selector,
        }
        self._watcher = ListWatcher(
            core.list_pod_for_all_namespaces,
            name="end point pods",
            on_sync=self._sync,
            on_event=self._event,
            **{k: v for k, v in selectors.items() if v is not None},
        )

    def __enter__(self) -> EndPoint:
        self._watcher.start()
        if self.emptied_at is not None:
            self._watcher.stop()
            raise EndPointMissed("the old nodes hold no pod of the fleet before the drain")
        return self

    def __exit__(self, *exc: object) -> None:
        self._watcher.stop()

    def _sync(self, pods: list[dict[str, Any]]) -> None:
        with self._changed:
            self.state.sync(pods)
            self._note()

    def _event(self, kind: str, pod: dict[str, Any]) -> None:
        with self._changed:
            self.state.apply(kind, pod)
            self._note()

    def _note(self) -> None:
        now = self.clock()
        if self.emptied_at is None and self.state.emptied:
            self.emptied_at = now
        if self.replaced_at is None and self.state.replaced:
            self.replaced_at = now
        self._changed.notify_all()

    def wait(self, deadline: float) -> float:
        """The moment every replacement was Ready; raises at ``deadline`` (on ``clock``)."""
        with self._changed:
            while self.replaced_at is None:
                left = deadline - self.clock()
                if left <= 0:
                    raise EndPointMissed(
                        f"not replaced by the deadline: {self.state.on_old} pod(s) still on "
                        f"old nodes, {self.state.ready_elsewhere}/{self.state.want} Ready "
                        f"on new ones"
                    )
                self._changed.wait(min(left, 5.0))
            return self.replaced_at


# --- the fleet ----------------------------------------------------------------------------


def log(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


def split(total: int, parts: int) -> list[int]:
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def lower_bound(replicas: list[int], max_unavailable: int, ready_seconds: float) -> float:
    """Every Deployment can lose at most ``max_unavailable`` pods per 'replacement Ready'
    round, and rounds of different Deployments overlap: the slowest one bounds the drain."""
    rounds = max(math.ceil(r / max_unavailable) for r in replicas)
    return rounds * ready_seconds


class Fleet:
    """One contender's identical world: its namespaces, old and new pools, workloads.

    Deployment ``i`` lives in namespace ``i % --namespaces``; every pod, budget, Service
    and node carries :data:`GROUP_LABEL` = the fleet's name, which is how the fleet is
    listed and watched across its namespaces, and how its teardown is seen to finish."""

    def __init__(self, kube: KubeClients, name: str, args: argparse.Namespace) -> None:
        self.kube, self.name, self.args = kube, name, args
        count = max(args.namespaces, 1)
        self.namespaces = (
            [f"bench-{name}"] if count == 1 else [f"bench-{name}-{k:02d}" for k in range(count)]
        )
        self.selector = f"{GROUP_LABEL}={name}"
        self.pools = NodePools(kube.api_client)
        self.old: NodePool | None = None
        self.new: NodePool | None = None
        self.replicas = split(args.pods, args.deployments)
        self.topology = Topology(())

    def build(self) -> None:
        core, labels = self.kube.core, {GROUP_LABEL: self.name}
        for namespace in self.namespaces:
            core.create_namespace(
                k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=namespace, labels=labels))
            )
        self.old = self.pools.create(
            NodePoolSpec(f"{self.name}-old", count=self.args.old_nodes, labels=labels)
        )
        for i, count in enumerate(self.replicas):
            self._workload(f"app{i:03d}", self.namespace_of(i), count, labels)
        self.wait_ready("all pods Ready on the old nodes")
        self.wait_budgets()
        self.topology = self.replicas_per_node()
        log(f"{self.name}: {self.topology.describe()}")
        self.new = self.pools.create(
            NodePoolSpec(f"{self.name}-new", count=self.args.new_nodes, labels=labels)
        )
        # the seed's order: taint the old nodes first, so replacements land on new ones
        taint_nodes(self.kube.core, NodeSelection(names=list(self.old.node_names)), RETIRING)

    def _workload(self, app: str, namespace: str, replicas: int, labels: dict[str, str]) -> None:
        """A Deployment of ``replicas`` pause pods on the fleet's nodes, its budget and
        its Service."""
        match = {"app": app}
        self.kube.apps.create_namespaced_deployment(
            namespace,
            k8s.V1Deployment(
                metadata=k8s.V1ObjectMeta(name=app),
                spec=k8s.V1DeploymentSpec(
                    replicas=replicas,
                    selector=k8s.V1LabelSelector(match_labels=match),
                    template=k8s.V1PodTemplateSpec(
                        metadata=k8s.V1ObjectMeta(
                            labels={**match, **labels},
                            annotations={POD_READY_DELAY_ANNOTATION: self.args.ready_delay},
                        ),
                        spec=k8s.V1PodSpec(
                            containers=[k8s.V1Container(name="app", image=PAUSE_IMAGE)],
                            node_selector=labels,
                            termination_grace_period_seconds=0,
                        ),
                    ),
                ),
            ),
        )
        self.kube.policy.create_namespaced_pod_disruption_budget(
            namespace,
            k8s.V1PodDisruptionBudget(
                metadata=k8s.V1ObjectMeta(name=app, labels=labels),
                spec=k8s.V1PodDisruptionBudgetSpec(
                    max_unavailable=self.args.max_unavailable,
                    selector=k8s.V1LabelSelector(match_labels=match),
                ),
            ),
        )
        self.kube.core.create_namespaced_service(
            namespace,
            k8s.V1Service(
                metadata=k8s.V1ObjectMeta(name=app, labels=labels),
                spec=k8s.V1ServiceSpec(selector=match, ports=[k8s.V1ServicePort(port=80)]),
            ),
        )

    def namespace_of(self, index: int) -> str:
        """The namespace of Deployment ``index``."""
        return self.namespaces[index % len(self.namespaces)]

    def pods(self) -> list[dict[str, Any]]:
        """The fleet's pods, in all its namespaces."""
        listing = list_all(
            self.kube.core.list_pod_for_all_namespaces,
            label_selector=self.selector,
            action="list pods",
        )
        return list(listing["items"])

    def replicas_per_node(self) -> Topology:
        """How the scheduler placed the fleet: replicas of one Deployment per node."""
        pods = self.pods()
        counts = Counter((p["metadata"]["labels"]["app"], p["spec"].get("nodeName")) for p in pods)
        return Topology(tuple(counts.values()))

    def ready_pods(self) -> int:
        return sum(1 for p in self.pods() if pod_ready(p))

    def wait_ready(self, what: str, timeout: float = 1800) -> None:
        started = time.monotonic()
        while (ready := self.ready_pods()) < self.args.pods:
            if time.monotonic() - started > timeout:
                raise SystemExit(f"timed out waiting for {what}: {ready}/{self.args.pods}")
            time.sleep(2)
        log(f"{self.name}: {what} ({self.args.pods}) after {time.monotonic() - started:.0f}s")

    def wait_budgets(self, timeout: float = 600) -> None:
        started = time.monotonic()
        while True:
            pdbs = list_all(
                self.kube.policy.list_pod_disruption_budget_for_all_namespaces,
                label_selector=self.selector,
                action="list PDBs",
            )["items"]
            ok = [
                p
                for p in pdbs
                if (p.get("status") or {}).get("observedGeneration") == p["metadata"]["generation"]
                and (p["status"].get("currentHealthy") == p["status"].get("expectedPods"))
            ]
            if len(ok) == self.args.deployments:
                return
            if time.monotonic() - started > timeout:
                raise SystemExit(f"PDBs not observed: {len(ok)}/{self.args.deployments}")
            time.sleep(1)

    def services(self) -> list[str]:
        return [f"{self.namespace_of(i)}/app{i:03d}" for i in range(self.args.deployments)]

    def teardown(self, timeout: float = TEARDOWN_SECONDS) -> float:
        """Delete the fleet's namespaces and nodes, then wait until they and its pods are
        gone, so that the next fleet is not built (and timed) beside this one's
        deletion; returns the seconds it took."""
        started = time.monotonic()
        for namespace in self.namespaces:
            try:
                self.kube.core.delete_namespace(namespace, propagation_policy="Background")
            except k8s.ApiException as exc:
                if exc.status != 404:
                    raise
        self.pools.cleanup()
        while left := self.leftovers():
            if time.monotonic() - started > timeout:
                raise SystemExit(f"{self.name}: not torn down after {timeout:.0f}s: {left}")
            time.sleep(1)
        return time.monotonic() - started

    def leftovers(self) -> str:
        """What of the fleet is still there ('' when nothing)."""
        listed = self.kube.core.list_namespace(label_selector=self.selector).items
        namespaces = {n.metadata.name for n in listed if n.metadata is not None}
        left = {
            "namespace(s)": len(namespaces & set(self.namespaces)),
            "node(s)": len(self.kube.core.list_node(label_selector=self.selector).items),
            "pod(s)": len(self.pods()),
        }
        return ", ".join(f"{n} {what}" for what, n in left.items() if n)


# --- the contenders -----------------------------------------------------------------------


def run_kubeshift(kube: KubeClients, fleet: Fleet, args: argparse.Namespace) -> Outcome:
    assert fleet.old is not None, "the fleet is built before it is drained"
    summary = drain_nodes(
        kube,
        fleet.old.node_names,
        options=DrainOptions(),
        limits=DrainLimits(
            max_nodes_in_flight=args.max_nodes_in_flight,
            max_pods_in_flight=args.max_pods_in_flight,
            timeout=args.timeout,
        ),
    )
    log(summary.message())
    return Outcome(
        KUBESHIFT,
        evicted=len(summary.evicted),
        requests=summary.requests,
        complete=summary.complete,
        detail={
            "max_pods_in_flight": summary.max_pods_in_flight,
            "max_nodes_in_flight": summary.max_nodes_in_flight,
            "requests_by": summary.requests_by,
        },
    )


def run_kubectl(cluster: Cluster, fleet: Fleet, args: argparse.Namespace) -> Outcome:
    """``kubectl drain`` node after node, as an operator's loop would."""
    assert fleet.old is not None, "the fleet is built before it is drained"
    outcome = Outcome(KUBECTL, complete=True)
    for node in fleet.old.node_names:
        proc = subprocess.run(
            [
                args.kubectl,
                f"--kubeconfig={cluster.kubeconfig_path}",
                f"--context={cluster.context}",
                "drain",
                node,
                "--ignore-daemonsets",
                "--delete-emptydir-data",
                f"--timeout={int(args.timeout)}s",
                "-v=6",
            ],
            capture_output=True,
            text=True,
            check=False,
            timeout=args.timeout + 60,  # kubectl's own timeout, and then some
        )
        outcome.requests += len(KUBECTL_REQUEST.findall(proc.stderr))
        outcome.evicted += len(KUBECTL_EVICTED.findall(proc.stdout))
        if proc.returncode != 0:
            outcome.complete = False
            log(f"kubectl drain {node} failed: {proc.stderr.strip().splitlines()[-1:]}")
    return outcome


def run_ceiling(kube: KubeClients, fleet: Fleet) -> Outcome:
    """What the control plane can replace at most: every old pod deleted at once
    (:func:`benchmarks.deletes.delete_at_once`), no budget, no eviction API."""
    assert fleet.old is not None, "the fleet is built before it is replaced"
    pods = [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in fleet.pods()]
    deleted = delete_at_once(kube.core, pods)
    log(f"ceiling: {len(pods)} deletes sent and answered in {deleted.seconds:.1f}s")
    outcome = Outcome(CEILING, evicted=deleted.deleted, complete=True)
    outcome.detail["deletes_seconds"] = deleted.seconds
    return outcome


def run_floor(
    kube: KubeClients,
    fleet: Fleet,
    timeout: float,
    *,
    workers: int = EVICTORS,
    pause: float = RETRY_PAUSE,
) -> Outcome:
    """The control plane's eviction floor with the budgets in place: every old pod's
    eviction asked for at once (:func:`evict_in_sweeps`), those a budget refused asked
    again ``pause`` after each sweep, until none is left or ``timeout`` has passed. No
    cordon (the fleet's old nodes are tainted already), no windows, no watch, no order:
    nothing of kubeshift's, only the Eviction API and the disruption controller.

    ``pause`` is 0.2 s so that the retry interval does not pace the floor: a budget round
    is at least a ready delay (2 s) and the controller's status write, and a pod the
    budget has just let go waits half a pause on average for its next ask, a twentieth
    of such a round (``kubectl drain`` waits 5 s). Its price is requests: a refused pod
    is asked up to five times a second (less once a sweep takes longer than the pause),
    so a pod that waits ``w`` seconds for its turn costs up to ``5 w`` requests, nearly
    all answered 429; the floor's requests per pod show it, and they load the cores the
    control plane runs on. Only eviction requests are counted (not the one listing)."""
    assert fleet.old is not None, "the fleet is built before it is drained"
    old_nodes = set(fleet.old.node_names)
    pods = [
        (p["metadata"]["namespace"], p["metadata"]["name"])
        for p in fleet.pods()
        if (p.get("spec") or {}).get("nodeName") in old_nodes
    ]
    done = evict_in_sweeps(
        kube.core, pods, deadline=time.monotonic() + timeout, workers=workers, pause=pause
    )
    log(
        f"floor: {done.evicted} evicted, {done.gone} gone already, {done.refused} still "
        f"refused; {done.requests} eviction requests in {done.sweeps} sweep(s)"
    )
    return Outcome(
        FLOOR,
        evicted=done.evicted,
        requests=done.requests,
        complete=done.refused == 0,
        detail={"gone": done.gone, "refused": done.refused, "sweeps": done.sweeps},
    )


@dataclass(frozen=True)
class Evictions:
    """What :func:`evict_in_sweeps` did: pods evicted (201), found gone (404) and still
    refused at the deadline (429); the eviction requests and sweeps it took."""

    evicted: int
    gone: int
    refused: int
    requests: int
    sweeps: int


def evict_in_sweeps(
    core: k8s.CoreV1Api,
    pods: Iterable[tuple[str, str]],
    *,
    deadline: float,
    workers: int = EVICTORS,
    pause: float = RETRY_PAUSE,
) -> Evictions:
    """Ask for the eviction of every ``(namespace, name)``, ``workers`` requests in
    flight; ``pause`` after the sweep's last answer, ask again for those a budget
    refused; stop when none is left or at ``deadline`` (monotonic). A refused pod waits
    for the next sweep, not in a worker: a worker held by a waiting pod would leave the
    pods behind it (listed Deployment by Deployment) unasked, and time the in-flight
    limit instead of the control plane. Any answer but 201, 404 or 429 is raised, once
    the sweep's requests already sent are answered."""
    left, answers, sweeps = list(pods), Counter[int](), 0
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="floor") as pool:
        while left:
            sweep = list(pool.map(lambda pod: evict_once(core, pod), left))
            sweeps += 1
            answers.update(sweep)
            left = [pod for pod, answer in zip(left, sweep, strict=True) if answer == REFUSED]
            if not left or time.monotonic() + pause > deadline:
                break
            time.sleep(pause)
    return Evictions(answers[EVICTED], answers[GONE], len(left), answers.total(), sweeps)


def evict_once(core: k8s.CoreV1Api, pod: tuple[str, str]) -> int:
    """Ask the Eviction API (policy/v1) to evict ``(namespace, name)``; return its
    answer: 201 evicted, 404 gone already, 429 refused by a budget. Any other API error
    is raised, naming the pod."""
    namespace, name = pod
    body = k8s.V1Eviction(metadata=k8s.V1ObjectMeta(name=name, namespace=namespace))
    try:
        core.create_namespaced_pod_eviction(name, namespace, body)
    except k8s.ApiException as exc:
        if exc.status in (GONE, REFUSED):
            return int(exc.status)
        raise EvictionRefused(namespace, name, exc) from exc
    return EVICTED


class EvictionRefused(RuntimeError):
    """An eviction answered with something other than 201, 404 or a budget's 429."""

    def __init__(self, namespace: str, name: str, cause: k8s.ApiException) -> None:
        super().__init__(
            f"eviction of pod {namespace}/{name} failed: {cause.status} {cause.reason}"
        )
        self.status = cause.status


def run_rounds(kube: KubeClients, fleet: Fleet, max_unavailable: int, timeout: float) -> Outcome:
    """The budgets' own price on this control plane: each Deployment loses an old pod
    (deleted, grace 0) whenever it is back to ``replicas - max_unavailable`` Ready ones,
    as its budget allows, every Deployment at once; followed by one watch. No eviction
    API and no PDB status to wait for: what any budget-respecting drain cannot beat.
    Returns when the watch sees no pod left on an old node."""
    assert fleet.old is not None, "the fleet is built before it is replaced"
    old_nodes = set(fleet.old.node_names)
    changed = threading.Condition()
    pods: dict[str, dict[str, Any]] = {}

    def on_sync(items: list[dict[str, Any]]) -> None:
        with changed:
            pods.clear()
            pods.update({p["metadata"]["name"]: p for p in items})
            changed.notify_all()

    def on_event(kind: str, pod: dict[str, Any]) -> None:
        with changed:
            name = pod["metadata"]["name"]
            if kind == "DELETED":
                pods.pop(name, None)
            else:
                pods[name] = pod
            changed.notify_all()

    watcher = ListWatcher(
        kube.core.list_pod_for_all_namespaces, name="pods", label_selector=fleet.selector,
        on_sync=on_sync, on_event=on_event,
    )  # fmt: skip
    deleted: set[str] = set()  # sent; until the watch sees them go
    removed = 0  # deletes the API answered with success (not 'already gone')
    deleters = ThreadPoolExecutor(max_workers=32, thread_name_prefix="rounds")
    deadline = time.monotonic() + timeout
    watcher.start()
    try:
        while True:
            with changed:
                if not any(p["spec"].get("nodeName") in old_nodes for p in pods.values()):
                    break
                victims = _round_victims(pods, deleted, old_nodes, fleet.replicas, max_unavailable)
                if not victims:
                    if time.monotonic() > deadline:
                        raise SystemExit(f"rounds: old nodes not emptied in {timeout:.0f}s")
                    changed.wait(timeout=1.0)
                    continue
                deleted.update(victims)
                doomed = [(pods[n]["metadata"]["namespace"], n) for n in victims]
            # at once, as the budgets allow them
            removed += sum(deleters.map(lambda pod: delete_pod(kube.core, pod), doomed))
    finally:
        deleters.shutdown()
        watcher.stop()
    return Outcome(ROUNDS, evicted=removed, complete=True)


def _round_victims(
    pods: Mapping[str, dict[str, Any]],
    deleted: set[str],
    old_nodes: set[str],
    replicas: list[int],
    max_unavailable: int,
) -> list[str]:
    """The old pods each Deployment's budget would let go now: as many as it has Ready
    pods above ``replicas - max_unavailable``, counting those already on their way out."""
    ready = Counter(p["metadata"]["labels"]["app"] for p in pods.values() if pod_ready(p))
    going = Counter(pods[n]["metadata"]["labels"]["app"] for n in deleted if n in pods)
    on_old: dict[str, list[str]] = {}
    for name, pod in pods.items():
        if pod["spec"].get("nodeName") in old_nodes and name not in deleted:
            on_old.setdefault(pod["metadata"]["labels"]["app"], []).append(name)
    victims: list[str] = []
    for i, count in enumerate(replicas):
        app = f"app{i:03d}"
        allowed = ready[app] - going[app] - (count - max_unavailable)
        victims += on_old.get(app, [])[: max(allowed, 0)]
    return victims


# --- checks -------------------------------------------------------------------------------


def check_outcome(outcome: Outcome, want: int) -> list[Check]:
    """What must hold after any contender's run, whatever its time."""
    checks = [
        Check(
            "every pod moved once",
            outcome.evicted == want,
            f"{outcome.evicted} evicted or deleted of {want}",
        ),
        Check(
            "end point after the contender returned",
            outcome.own_seconds <= outcome.seconds,
            f"returned at {outcome.own_seconds:.2f}s, replaced at {outcome.seconds:.2f}s",
        ),
    ]
    if outcome.name in EVICTING:
        checks += [
            Check("drain complete", outcome.complete, f"{outcome.name} reported complete"),
            Check(
                "requests counted",
                outcome.requests >= outcome.evicted > 0,
                f"{outcome.requests} API requests for {outcome.evicted} evictions",
            ),
        ]
    return checks


def check_replaced(
    pods: Iterable[Mapping[str, Any]], old: Iterable[str], new: Iterable[str], want: int
) -> Check:
    """A fresh listing, not the watch, must agree that the end point was reached: no
    pod on an old node, ``want`` Ready ones on the new nodes."""
    old_nodes, new_nodes, listed = set(old), set(new), list(pods)
    on_old = sum(1 for p in listed if (p.get("spec") or {}).get("nodeName") in old_nodes)
    ready_new = sum(
        1 for p in listed if (p.get("spec") or {}).get("nodeName") in new_nodes and pod_ready(p)
    )
    return Check(
        "fleet replaced",
        on_old == 0 and ready_new == want,
        f"{on_old} pod(s) on old nodes, {ready_new}/{want} Ready on new ones",
    )


def check_probe(name: str, report: ProbeReport, services: list[str]) -> list[Check]:
    """The probe followed every Service; a budget-respecting contender kept a ready
    endpoint in each, and the ceiling, deleting every pod at once, must have emptied
    at least one (else the probe could not see an outage at all)."""
    covered = Check(
        "probe covered every Service",
        sorted(report.services) == sorted(services),
        f"probed {len(report.services)} of {len(services)} Service(s)",
    )
    down = sorted(k for k, s in report.services.items() if s.zero_intervals)
    if name in BUDGETED:
        return [covered, Check("no zero-endpoint interval", not down, report.message())]
    return [covered, Check("probe saw the ceiling's outage", bool(down), report.message())]


# --- one contender's run ------------------------------------------------------------------


@dataclass(frozen=True)
class Bench:
    """What every contender's run shares: the control plane and the options."""

    cluster: Cluster
    kube: KubeClients
    args: argparse.Namespace
    daemons: list[Daemon]


def act(name: str, bench: Bench, fleet: Fleet) -> Outcome:
    """Run contender ``name`` on a built fleet."""
    if name == KUBESHIFT:
        return run_kubeshift(bench.kube, fleet, bench.args)
    if name == FLOOR:
        args = bench.args
        return run_floor(
            bench.kube, fleet, args.timeout, workers=args.floor_in_flight, pause=args.floor_pause
        )
    if name == CEILING:
        return run_ceiling(bench.kube, fleet)
    if name == ROUNDS:
        return run_rounds(bench.kube, fleet, bench.args.max_unavailable, bench.args.timeout)
    return run_kubectl(bench.cluster, fleet, bench.args)


def measure(name: str, bench: Bench, fleet: Fleet) -> Outcome:
    """Time contender ``name`` from its start to the end point, with the probe, the CPU
    meter and (``--timeline``) the round split running beside it; then check it."""
    kube, args = bench.kube, bench.args
    assert fleet.old is not None, "the fleet is built before it is drained"
    timeline = (
        Timeline(kube, fleet.selector, set(fleet.old.node_names), budgets=name != ROUNDS)
        if args.timeline and name != CEILING
        else contextlib.nullcontext()
    )
    with (
        AvailabilityProbe(kube.discovery, fleet.services()) as probe,
        timeline,
        EndPoint(kube.core, fleet.old.node_names, args.pods, label_selector=fleet.selector) as end,
        CpuMeter(bench.daemons) as cpu,
    ):
        started = time.monotonic()
        outcome = act(name, bench, fleet)
        outcome.own_seconds = time.monotonic() - started
        outcome.seconds = end.wait(started + args.timeout) - started
        outcome.cpu_seconds = cpu.used()
        assert end.emptied_at is not None, "replaced implies emptied"
        outcome.emptied_seconds = end.emptied_at - started
        report = probe.report()
    outcome.min_ready = report.min_ready
    outcome.zero_intervals = sum(len(s.zero_intervals) for s in report.services.values())
    outcome.detail["topology"] = fleet.topology.describe()
    outcome.detail["per_node"] = fleet.topology.mean
    assert fleet.new is not None, "the fleet is built before it is drained"
    outcome.checks = [
        *check_outcome(outcome, args.pods),
        check_replaced(fleet.pods(), fleet.old.node_names, fleet.new.node_names, args.pods),
        *check_probe(name, report, fleet.services()),
    ]
    log(
        f"{name}: replaced in {outcome.seconds:.1f}s (old nodes empty at "
        f"{outcome.emptied_seconds:.1f}s, returned at {outcome.own_seconds:.1f}s); "
        f"probe: {report.message()}"
    )
    if isinstance(timeline, Timeline):
        outcome.detail["rounds"] = [step.describe() for step in timeline.steps()]
        log(f"{name}: per budget round: " + "; ".join(outcome.detail["rounds"]))
    log(f"{name}: CPU s: " + ", ".join(f"{k} {v:.1f}" for k, v in outcome.cpu_seconds.items()))
    return outcome


def contend(name: str, repeat: int, position: int, bench: Bench) -> Outcome:
    """Build a fleet for contender ``name``, measure it, tear the fleet down and wait
    until it is gone."""
    args = bench.args
    fleet = Fleet(bench.kube, f"{name}-{repeat}", args)
    log(f"{fleet.name}: building {args.old_nodes}+{args.new_nodes} nodes, {args.pods} pods")
    try:
        fleet.build()
        log(f"{fleet.name}: draining {args.old_nodes} old nodes")
        outcome = measure(name, bench, fleet)
    finally:
        gone = fleet.teardown()
    outcome.repeat, outcome.position = repeat, position
    outcome.checks.append(Check("teardown finished", True, f"fleet gone after {gone:.1f}s"))
    for check in outcome.checks:
        log(f"check {name}: {check.name}: {'ok' if check.passed else 'FAILED'} ({check.detail})")
    return outcome


def order(contenders: Sequence[str], repeat: int) -> list[str]:
    """Repeat ``repeat`` starts with contender ``repeat`` (mod their number): over as
    many repeats as contenders, each runs in every position once."""
    shift = repeat % len(contenders)
    return [*contenders[shift:], *contenders[:shift]]


def contenders(args: argparse.Namespace) -> list[str]:
    chosen = [KUBESHIFT]
    chosen += [] if args.skip_kubectl else [KUBECTL]
    chosen += [] if args.skip_floor else [FLOOR]
    chosen += [] if args.skip_ceiling else [CEILING]
    chosen += [ROUNDS] if args.rounds else []
    return chosen


def run_all(bench: Bench) -> list[Outcome]:
    """Every contender, ``--repeats`` times, in rotated order; one fleet at a time."""
    outcomes: list[Outcome] = []
    names = contenders(bench.args)
    for repeat in range(bench.args.repeats):
        sequence = order(names, repeat)
        log(f"repeat {repeat + 1}/{bench.args.repeats}: {', '.join(sequence)}")
        for position, name in enumerate(sequence):
            outcomes.append(contend(name, repeat, position, bench))
    return outcomes


# --- the report ---------------------------------------------------------------------------


def medians(outcomes: list[Outcome]) -> dict[str, dict[str, float]]:
    """Per contender: median seconds to the end point and to the old nodes empty, and
    median API requests per evicted pod."""
    by_name: dict[str, list[Outcome]] = {}
    for o in outcomes:
        by_name.setdefault(o.name, []).append(o)
    return {
        name: {
            "seconds": statistics.median(o.seconds for o in runs),
            "emptied_seconds": statistics.median(o.emptied_seconds for o in runs),
            "requests_per_pod": statistics.median(o.requests_per_pod for o in runs),
            "runs": len(runs),
        }
        for name, runs in by_name.items()
    }


def ratios(middle: Mapping[str, Mapping[str, float]], bound: float) -> dict[str, float]:
    """Ratios of medians, every one between times to the same end point."""
    ks = middle[KUBESHIFT]["seconds"]
    found: dict[str, float] = {}
    if KUBECTL in middle:
        found["kubectl_over_kubeshift"] = middle[KUBECTL]["seconds"] / ks
    if bound:
        found["kubeshift_over_bound"] = ks / bound
    if CEILING in middle:
        found["kubeshift_over_best_possible"] = ks / max(bound, middle[CEILING]["seconds"])
    if ROUNDS in middle:
        found["kubeshift_over_rounds"] = ks / middle[ROUNDS]["seconds"]
    if FLOOR in middle:
        floor = middle[FLOOR]["seconds"]
        found["kubeshift_over_floor"] = ks / floor
        if KUBECTL in middle:
            found["kubectl_over_floor"] = middle[KUBECTL]["seconds"] / floor
    return found


def figures_row(
    args: argparse.Namespace,
    middle: Mapping[str, Mapping[str, float]],
    found: Mapping[str, float],
    bound: float,
    per_node: float,
) -> dict[str, str]:
    """This run's row of the docstring's figures table, by column, with the floor's
    time and ks/floor beside them ('-' where a contender did not run)."""

    def seconds(name: str) -> str:
        return f"{middle[name]['seconds']:.1f} s" if name in middle else "-"

    def ratio(key: str) -> str:
        return f"{found[key]:.2f}x" if key in found else "-"

    def per_pod(name: str) -> str:
        return f"{middle[name]['requests_per_pod']:.2f}" if name in middle else "-"

    return {
        "old+new, pods / deploys": (
            f"{args.old_nodes}+{args.new_nodes}, {args.pods} / {args.deployments}"
        ),
        "per node": f"{per_node:.1f}",
        "bound": f"{bound:.0f} s",
        "ceiling": seconds(CEILING),
        "floor": seconds(FLOOR),
        "kubeshift": seconds(KUBESHIFT),
        "kubectl": seconds(KUBECTL),
        "k/ks": ratio("kubectl_over_kubeshift"),
        "ks/best": ratio("kubeshift_over_best_possible"),
        "ks/floor": ratio("kubeshift_over_floor"),
        "req/pod": " / ".join(per_pod(name) for name in (KUBESHIFT, KUBECTL, FLOOR)),
    }


def table(row: Mapping[str, str]) -> list[str]:
    """A header and one row, each column as wide as its widest cell."""
    widths = [max(len(column), len(cell)) for column, cell in row.items()]
    return [
        "  ".join(text.ljust(width) for text, width in zip(texts, widths, strict=True)).rstrip()
        for texts in (list(row), list(row.values()))
    ]


def print_figures(
    args: argparse.Namespace, outcomes: list[Outcome], bound: float
) -> dict[str, Any]:
    """The runs, their medians and ratios; returns them for ``--json``."""
    middle, found = medians(outcomes), {}
    print(f"lower bound from PDBs and ready time: {bound:.1f}s")
    header = ("repeat", "pos", "contender", "replaced s", "emptied s", "evicted", "req/pod", "min")
    print("{:>6} {:>3} {:<10} {:>10} {:>9} {:>8} {:>8} {:>4}".format(*header))
    for o in outcomes:
        print(
            f"{o.repeat + 1:>6} {o.position + 1:>3} {o.name:<10} {o.seconds:>10.1f} "
            f"{o.emptied_seconds:>9.1f} {o.evicted:>8} {o.requests_per_pod:>8.2f} "
            f"{o.min_ready!s:>4}"
        )
    for name, m in middle.items():
        print(
            f"median of {m['runs']:.0f} {name}: replaced {m['seconds']:.1f}s, old nodes "
            f"empty {m['emptied_seconds']:.1f}s, {m['requests_per_pod']:.2f} req/pod"
        )
    if KUBESHIFT in middle:
        found = ratios(middle, bound)
        for key, value in found.items():
            print(f"{key.replace('_', ' ')} (medians): {value:.2f}x")
        per_node = statistics.median(o.detail["per_node"] for o in outcomes)
        print("as the docstring's table (req/pod: kubeshift / kubectl / floor):")
        for line in table(figures_row(args, middle, found, bound, per_node)):
            print(f"  {line}")
    return {"medians": middle, "ratios": found}


def run_control_plane(args: argparse.Namespace) -> list[Outcome]:
    """Start etcd and a control plane, run every contender, stop them."""
    bins = locate()
    workdir = Path(tempfile.mkdtemp(prefix="kubeshift-bench-"))
    etcd = start_etcd(bins.etcd, workdir)
    try:
        cluster = start_cluster(
            bins,
            etcd.url,
            workdir / "bench",
            ClusterOptions(name="bench", api_qps=2000, api_burst=4000, max_requests_inflight=2000),
        )
    except BaseException:
        etcd.stop()
        raise
    log(f"control plane up in {cluster.startup_seconds:.1f}s ({bins.versions})")
    if not args.skip_kubectl:
        version = subprocess.run(
            [args.kubectl, "version", "--client"], capture_output=True, text=True, check=True
        ).stdout.splitlines()[0]
        log(f"kubectl: {args.kubectl} ({version})")
    kube = build_clients(
        ClusterAccess(kubeconfig=cluster.kubeconfig_path, context=cluster.context, pool_size=128)
    )
    try:
        return run_all(Bench(cluster, kube, args, [etcd.daemon, *cluster.daemons]))
    finally:
        kube.close()
        cluster.stop()
        etcd.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--old-nodes", type=int, default=100)
    parser.add_argument("--new-nodes", type=int, default=100)
    parser.add_argument("--deployments", type=int, default=100)
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument(
        "--namespaces", type=int, default=1, help="spread the Deployments over this many"
    )
    parser.add_argument("--ready-delay", default="2s", help="kwok pod-ready delay (Go duration)")
    parser.add_argument("--max-unavailable", type=int, default=1, help="each PDB's maxUnavailable")
    parser.add_argument("--max-nodes-in-flight", type=int, default=20)
    parser.add_argument("--max-pods-in-flight", type=int, default=200)
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument(
        "--repeats", type=int, default=3, help="runs of each contender, in rotated order"
    )
    parser.add_argument("--kubectl", default=shutil.which("kubectl") or "/usr/bin/kubectl")
    parser.add_argument("--skip-kubectl", action="store_true")
    parser.add_argument(
        "--skip-floor",
        action="store_true",
        help="do not measure the eviction floor (every old pod evicted at once, PDBs in place)",
    )
    parser.add_argument(
        "--floor-in-flight", type=int, default=EVICTORS, help="the floor's evictions in flight"
    )
    parser.add_argument(
        "--floor-pause",
        type=float,
        default=RETRY_PAUSE,
        help="seconds before the floor asks again for the pods a budget refused",
    )
    parser.add_argument(
        "--skip-ceiling", action="store_true", help="do not measure the control plane's ceiling"
    )
    parser.add_argument(
        "--rounds",
        action="store_true",
        help="also measure the budgets' own price: pods deleted as each budget allows",
    )
    parser.add_argument(
        "--timeline",
        action="store_true",
        help="split each budget round into replace, controller and reaction (one more watch)",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="every contender and check on a few pods, once; no timing figures (overrides "
        "the sizes)",
    )
    parser.add_argument("--json", type=Path, help="also write the figures and checks here")
    args = parser.parse_args(argv)
    if args.smoke:
        for key, value in SMOKE.items():
            setattr(args, key, value)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    outcomes = run_control_plane(args)
    ready_s = parse_duration_ms(args.ready_delay) / 1000
    bound = lower_bound(split(args.pods, args.deployments), args.max_unavailable, ready_s)
    print()
    print(
        f"fleet: {args.old_nodes} old + {args.new_nodes} new nodes, {args.pods} pods in "
        f"{args.deployments} Deployments in {args.namespaces} namespace(s) "
        f"(PDB maxUnavailable {args.max_unavailable}), pods Ready after {args.ready_delay}; "
        f"{args.repeats} repeat(s); every time ends when the last replacement is Ready"
    )
    for o in outcomes:
        if o.repeat == 0:
            print(f"placement for {o.name}: {o.detail['topology']}")
    checks = [(o, c) for o in outcomes for c in o.checks]
    failed = [
        f"{o.name} (repeat {o.repeat + 1}): {c.name}: {c.detail}" for o, c in checks if not c.passed
    ]
    figures: dict[str, Any] = {
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "lower_bound_seconds": bound,
        "outcomes": [{**asdict(o), "requests_per_pod": o.requests_per_pod} for o in outcomes],
        "checks_failed": failed,
    }
    if args.smoke:
        print(f"smoke: {len(checks)} checks run, no timing figures (a few pods, one repeat)")
    else:
        figures.update(print_figures(args, outcomes, bound))
    for line in failed:
        print(f"CHECK FAILED: {line}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, default=str))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
