#!/usr/bin/env python3
"""Benchmark: kubeshift's concurrent, budget-following drain vs a node-by-node ``kubectl drain``.

Why: the drain should approach the bound set by the PodDisruptionBudgets and the pods'
time to become Ready, where ``kubectl drain`` (serial across nodes, 429s retried every
5 s) does not. Both contenders drain an identical fleet, built fresh on the same real
control plane (apiserver, controller-manager, scheduler, etcd, kwok from
``scripts/testbin``) in the same run: old nodes full of Deployments, each with a PDB and
a Service, whose pods take ``--ready-delay`` to become Ready (a kwok stage delay), and
empty new nodes. Printed: wall time of each, their ratio, the lower bound the PDBs and
ready time imply, API requests per evicted pod, and the availability probe's minimum
ready endpoints per Service.

Run on demand (not in CI's timed path):

    .venv/bin/python benchmarks/drain.py                       # the issue's full scale
    .venv/bin/python benchmarks/drain.py --old-nodes 10 --new-nodes 10 \\
        --deployments 10 --pods 250                              # a quick look

Measured here (2 shared cores, Kubernetes v1.36.3, kwok v0.8.0, kubectl v1.32.4; PDB
maxUnavailable 1, ready delay 2 s; old nodes tainted first, as the migration does;
kubeshift with 20 nodes and 200 pods in flight). "Ceiling" is the control plane's own
replacement time, measured in the same run: every old pod deleted at once, no budget.

  old+new, pods / deploys  per node  bound  ceiling  kubeshift  kubectl  k/ks   ks/best  req/pod
  10+10,   250 / 10        2.5         50 s   10.4 s    50.6 s   190.5 s  3.77x  1.01x  1.18 / 3.11
  25+25,   250 / 10        1.0         50 s   14.9 s    52.1 s   135.3 s  2.60x  1.04x  1.37 / 3.37
  40+40,  1200 / 40        1.0         60 s   89.3 s   127.5 s   223.9 s  1.76x  1.43x  1.15 / 2.23
  100+100, 5000 / 100                 100 s    -       604.2 s   883.3 s  1.46x   -     1.14 / 2.13
  100+100, 5000 / 100      1.0        100 s  484.8 s   853.8 s      -       -    1.76x  1.17 / -
  100+100, 5000 / 100 ns20 1.0        100 s  209.1 s   620.6 s      -       -    2.97x  1.15 / -

(k/ks: kubectl over kubeshift; ks/best: kubeshift over max(bound, ceiling); req/pod:
API requests per evicted pod, kubeshift / kubectl; ns20: the Deployments spread over 20
namespaces, ``--namespaces 20``.) Every ceiling above the last row was measured with a
``deletecollection`` per node, which the API server works through one pod at a time
(``--delete-collection-workers`` is 1): it timed that serial deletion, not the
replacement, and was too slow, most at 5000 pods: a 20-namespace run measured that way
took 584.5 s, 576 s of it deleting (every replacement was Ready 8 s after the last
delete). The ceiling now deletes a pod per request, 64 in flight
(:mod:`benchmarks.deletes`); the last row is the first measured so.

"Per node" is what the scheduler did (printed per run): replicas of one Deployment per
node holding it. Packed (several per node) is where a node-by-node ``kubectl drain`` is
held back by the budgets; spread is where it is not. The 25+25 row is after budgets
serve the node that entered first (``Evictor.evict``); before that change the same fleet
took 59.3 s (1.19x), the nodes in flight all finishing together. The first 5000-pod row
predates the ceiling's measurement and the placement's report; the second (kubeshift
alone on a quiet machine, ceiling and rounds from a run of their own on the same fleet)
has rounds at 572.1 s, so kubeshift / rounds is 1.49x there, and the evictor from before
the node-that-entered-first change took 768.2 s on it. At 1200 pods (30 replicas per
Deployment) the ceiling pipelines every replacement, 13.4 pods/s, while a budget of
maxUnavailable 1 replaces each Deployment's pods one after another: 30 rounds of 4.2 s
each (evict, replace, schedule, 2 s ready, PDB status) against the bound's 2 s, which is
the whole gap. ``--rounds`` measures that price in the same run: each Deployment loses
an old pod (deleted, no eviction API, no PDB status to wait for) whenever its budget
would allow, every Deployment at once. On the same 1200-pod fleet: rounds 119.1 s,
kubeshift 124.2 s (1.04x), ceiling 77.3 s, bound 60 s. The probe saw no zero-endpoint
interval in any kubeshift or kubectl run; the ceiling, deleting without budgets, empties
every Service for a while, which is why nobody drains that way.

At 5000 pods the drain is bound by the control plane, not by kubeshift. ``--timeline``
splits every round of every budget (4900 rounds, kubeshift at 766.4 s): the replacement
Ready 2.42 s after the old pod left (median), the disruption controller's status allowing
again 12.62 s after that, kubeshift's next eviction 0.25 s after that (p90 0.71 s).
50 rounds of 15.3 s are the whole drain. The controller syncs budgets with one worker,
each sync a status write, 100 budgets in turn on 2 saturated cores (kube-apiserver,
controller-manager and etcd used 1.6 of the 2 cores, 1.8 with the scheduler and kwok):
every eviction-based drain, kubectl included, waits for it. Callers woken only by the
events that concern them took the drain's own CPU from 190.7 to 88.9 s (782.9 s to
750.5 s wall, single runs each). With budget rounds deleting a pass's pods at once
(reaction 0.43 s median), a second run gave rounds 368.7 s against kubeshift 786.9 s
(controller 13.22 s, kubeshift 0.23 s per round): 2.13x, all of it the controller's.
Deleting directly cost the control plane 502 CPU s (apiserver, controller-manager,
etcd) against 1,250 s for evictions, whose budget status writes the controller repeats.

Namespaces matter to the control plane, not to kubeshift: the disruption, ReplicaSet
and EndpointSlice controllers list a namespace's pods on every sync. Spread over 20
namespaces (two runs), controller-manager used 207-245 CPU s instead of about 470, the
controller's step fell to 7.18-9.27 s, and kubeshift took 511.9 and 620.6 s against
budget rounds of 306.0 and 328.9 s (1.67x, 1.89x) and a ceiling, deletes in flight, of
209.1 s (23.9 pods/s; the 5000 deletes themselves took 95.7 s). Between the two runs
kubeshift's time moved 21 %, all of it in the controller's step.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kubernetes import client as k8s  # noqa: E402

from automation.kube.clients import ClusterAccess, KubeClients, build_clients, list_all  # noqa: E402
from automation.kube.drain import DrainLimits, DrainOptions, drain_nodes  # noqa: E402
from automation.kube.nodes import NodeSelection, Taint, taint_nodes  # noqa: E402
from automation.kube.pods import pod_ready  # noqa: E402
from automation.kube.probe import AvailabilityProbe  # noqa: E402
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


@dataclass
class Outcome:
    name: str
    seconds: float = 0.0
    evicted: int = 0
    requests: int = 0
    complete: bool = False
    min_ready: int | None = None
    zero_intervals: int = 0
    cpu_seconds: dict[str, float] = field(default_factory=dict)
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def requests_per_pod(self) -> float:
        return self.requests / self.evicted if self.evicted else float("nan")


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

    Deployment ``i`` lives in namespace ``i % --namespaces``; every pod, budget and
    Service carries :data:`GROUP_LABEL` = the contender's name, which is how the fleet
    is listed and watched across its namespaces."""

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
        core, apps = self.kube.core, self.kube.apps
        for namespace in self.namespaces:
            core.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=namespace)))
        labels = {GROUP_LABEL: self.name}
        self.old = self.pools.create(
            NodePoolSpec(f"{self.name}-old", count=self.args.old_nodes, labels=labels)
        )
        for i, count in enumerate(self.replicas):
            app, namespace = f"app{i:03d}", self.namespace_of(i)
            match = {"app": app}
            apps.create_namespaced_deployment(
                namespace,
                k8s.V1Deployment(
                    metadata=k8s.V1ObjectMeta(name=app),
                    spec=k8s.V1DeploymentSpec(
                        replicas=count,
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
            core.create_namespaced_service(
                namespace,
                k8s.V1Service(
                    metadata=k8s.V1ObjectMeta(name=app, labels=labels),
                    spec=k8s.V1ServiceSpec(selector=match, ports=[k8s.V1ServicePort(port=80)]),
                ),
            )
        self.wait_ready("all pods Ready on the old nodes")
        self.wait_budgets()
        self.topology = self.replicas_per_node()
        log(f"{self.name}: {self.topology.describe()}")
        self.new = self.pools.create(
            NodePoolSpec(f"{self.name}-new", count=self.args.new_nodes, labels=labels)
        )
        # the seed's order: taint the old nodes first, so replacements land on new ones
        taint_nodes(self.kube.core, NodeSelection(names=list(self.old.node_names)), RETIRING)

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

    def teardown(self) -> None:
        self.pools.cleanup()
        for namespace in self.namespaces:
            with contextlib.suppress(k8s.ApiException):
                self.kube.core.delete_namespace(namespace, propagation_policy="Background")


def run_kubeshift(kube: KubeClients, fleet: Fleet, args: argparse.Namespace) -> Outcome:
    assert fleet.old is not None
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
        "kubeshift",
        seconds=summary.seconds,
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
    assert fleet.old is not None
    outcome = Outcome("kubectl")
    started = time.monotonic()
    complete = True
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
        )
        outcome.requests += len(KUBECTL_REQUEST.findall(proc.stderr))
        outcome.evicted += len(KUBECTL_EVICTED.findall(proc.stdout))
        if proc.returncode != 0:
            complete = False
            log(f"kubectl drain {node} failed: {proc.stderr.strip().splitlines()[-1:]}")
    outcome.seconds = time.monotonic() - started
    outcome.complete = complete
    return outcome


def run_ceiling(kube: KubeClients, fleet: Fleet) -> Outcome:
    """What the control plane can replace at most: every old pod deleted at once
    (:func:`benchmarks.deletes.delete_at_once`), no budget, no eviction API; the time
    until every replacement is Ready (on new nodes)."""
    assert fleet.old is not None, "the fleet is built before it is replaced"
    pods = [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in fleet.pods()]
    started = time.monotonic()
    deleting = delete_at_once(kube.core, pods)
    log(f"ceiling: {len(pods)} deletes sent and answered in {deleting:.1f}s")
    fleet.wait_ready("every replacement Ready after deleting them all")
    outcome = Outcome("ceiling", time.monotonic() - started, evicted=len(pods), complete=True)
    outcome.detail["deletes_seconds"] = deleting
    return outcome


def run_rounds(kube: KubeClients, fleet: Fleet, max_unavailable: int) -> Outcome:
    """The budgets' own price on this control plane: each Deployment loses an old pod
    (deleted, grace 0) whenever it is back to ``replicas - max_unavailable`` Ready ones,
    as its budget allows, every Deployment at once; followed by one watch. No eviction
    API and no PDB status to wait for: what any budget-respecting drain cannot beat."""
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
    deleters = ThreadPoolExecutor(max_workers=32, thread_name_prefix="rounds")

    started = time.monotonic()
    watcher.start()
    try:
        while True:
            with changed:
                left = [n for n, p in pods.items() if p["spec"].get("nodeName") in old_nodes]
                if not left:
                    break
                ready = Counter(
                    p["metadata"]["labels"]["app"] for p in pods.values() if pod_ready(p)
                )
                going = Counter(pods[n]["metadata"]["labels"]["app"] for n in deleted if n in pods)
                on_old: dict[str, list[str]] = {}
                for n in left:
                    if n not in deleted:
                        on_old.setdefault(pods[n]["metadata"]["labels"]["app"], []).append(n)
                victims = []
                for i, replicas in enumerate(fleet.replicas):
                    app = f"app{i:03d}"
                    allowed = ready[app] - going[app] - (replicas - max_unavailable)
                    victims += on_old.get(app, [])[: max(allowed, 0)]
                if not victims:
                    changed.wait(timeout=1.0)
                    continue
                deleted.update(victims)
                doomed = [(pods[n]["metadata"]["namespace"], n) for n in victims]
            # at once, as the budgets allow them
            list(deleters.map(lambda pod: delete_pod(kube.core, pod), doomed))
        fleet.wait_ready("every replacement Ready, budget by budget")
    finally:
        deleters.shutdown()
        watcher.stop()
    return Outcome("rounds", time.monotonic() - started, evicted=len(deleted), complete=True)


def contend(
    name: str, cluster: Cluster, kube: KubeClients, args: argparse.Namespace, daemons: list[Daemon]
) -> Outcome:
    fleet = Fleet(kube, name, args)
    log(f"{name}: building {args.old_nodes}+{args.new_nodes} nodes, {args.pods} pods")
    fleet.build()
    log(f"{name}: draining {args.old_nodes} old nodes")
    assert fleet.old is not None
    timeline = (
        Timeline(kube, fleet.selector, set(fleet.old.node_names), budgets=name != "rounds")
        if args.timeline and name != "ceiling"
        else contextlib.nullcontext()
    )
    with (
        AvailabilityProbe(kube.discovery, fleet.services()) as probe,
        timeline,
        CpuMeter(daemons) as cpu,
    ):
        if name == "kubeshift":
            outcome = run_kubeshift(kube, fleet, args)
        elif name == "ceiling":
            outcome = run_ceiling(kube, fleet)
        elif name == "rounds":
            outcome = run_rounds(kube, fleet, args.max_unavailable)
        else:
            outcome = run_kubectl(cluster, fleet, args)
        outcome.cpu_seconds = cpu.used()
        fleet.wait_ready("all pods Ready again")
        report = probe.report()
    outcome.min_ready = report.min_ready
    outcome.detail["topology"] = fleet.topology.describe()
    outcome.zero_intervals = sum(len(s.zero_intervals) for s in report.services.values())
    log(f"{name}: {outcome.seconds:.1f}s, probe: {report.message()}")
    if isinstance(timeline, Timeline):
        outcome.detail["rounds"] = [step.describe() for step in timeline.steps()]
        log(f"{name}: per budget round: " + "; ".join(outcome.detail["rounds"]))
    log(f"{name}: CPU s: " + ", ".join(f"{k} {v:.1f}" for k, v in outcome.cpu_seconds.items()))
    fleet.teardown()
    return outcome


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
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
    parser.add_argument("--kubectl", default=shutil.which("kubectl") or "/usr/bin/kubectl")
    parser.add_argument("--skip-kubectl", action="store_true")
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
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    bins = locate()
    workdir = Path(tempfile.mkdtemp(prefix="kubeshift-bench-"))
    etcd = start_etcd(bins.etcd, workdir)
    cluster = start_cluster(
        bins,
        etcd.url,
        workdir / "bench",
        ClusterOptions(name="bench", api_qps=2000, api_burst=4000, max_requests_inflight=2000),
    )
    log(f"control plane up in {cluster.startup_seconds:.1f}s ({bins.versions})")
    if not args.skip_kubectl:
        version = subprocess.run(
            [args.kubectl, "version", "--client"], capture_output=True, text=True, check=True
        ).stdout.splitlines()[0]
        log(f"kubectl: {args.kubectl} ({version})")
    kube = build_clients(
        ClusterAccess(kubeconfig=cluster.kubeconfig_path, context=cluster.context, pool_size=128)
    )
    daemons = [etcd.daemon, *cluster.daemons]
    outcomes: list[Outcome] = []
    try:
        outcomes.append(contend("kubeshift", cluster, kube, args, daemons))
        if not args.skip_kubectl:
            outcomes.append(contend("kubectl", cluster, kube, args, daemons))
        ceiling = None if args.skip_ceiling else contend("ceiling", cluster, kube, args, daemons)
        rounds = contend("rounds", cluster, kube, args, daemons) if args.rounds else None
    finally:
        kube.close()
        cluster.stop()
        etcd.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    ready_s = parse_duration_ms(args.ready_delay) / 1000
    bound = lower_bound(split(args.pods, args.deployments), args.max_unavailable, ready_s)
    print()
    print(
        f"fleet: {args.old_nodes} old + {args.new_nodes} new nodes, {args.pods} pods in "
        f"{args.deployments} Deployments in {args.namespaces} namespace(s) "
        f"(PDB maxUnavailable {args.max_unavailable}), "
        f"pods Ready after {args.ready_delay}"
    )
    for o in outcomes:
        print(f"placement for {o.name}: {o.detail['topology']}")
    print(f"lower bound from PDBs and ready time: {bound:.1f}s")
    if ceiling is not None:
        print(
            f"control plane's ceiling: {ceiling.evicted} pods deleted at once (answered in "
            f"{ceiling.detail['deletes_seconds']:.1f}s), all replaced and Ready after "
            f"{ceiling.seconds:.1f}s ({ceiling.evicted / ceiling.seconds:.1f} pods/s)"
        )
    header = ("contender", "wall s", "evicted", "req/pod", "min ready", "zero")
    print("{:<10} {:>8} {:>8} {:>8} {:>10} {:>5}".format(*header))
    for o in outcomes:
        print(
            f"{o.name:<10} {o.seconds:>8.1f} {o.evicted:>8} {o.requests_per_pod:>8.2f} "
            f"{o.min_ready!s:>10} {o.zero_intervals:>5}{'' if o.complete else '  INCOMPLETE'}"
        )
    figures: dict[str, Any] = {
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "lower_bound_seconds": bound,
        "outcomes": [{**o.__dict__, "requests_per_pod": o.requests_per_pod} for o in outcomes],
    }
    for o in outcomes:
        if o.detail.get("requests_by"):
            kinds = ", ".join(f"{k} {n}" for k, n in sorted(o.detail["requests_by"].items()))
            print(f"{o.name} requests: {kinds}")
    if len(outcomes) == 2 and outcomes[0].seconds:
        ratio = outcomes[1].seconds / outcomes[0].seconds
        figures["kubectl_over_kubeshift"] = ratio
        print(f"kubectl / kubeshift wall time: {ratio:.2f}x")
    if outcomes and bound:
        print(f"kubeshift / lower bound: {outcomes[0].seconds / bound:.2f}x")
    if outcomes and ceiling is not None:
        best = max(bound, ceiling.seconds)
        figures["ceiling_seconds"] = ceiling.seconds
        figures["kubeshift_over_best_possible"] = outcomes[0].seconds / best
        print(
            f"kubeshift / max(PDB bound, ceiling) = {outcomes[0].seconds:.1f} / {best:.1f}s: "
            f"{outcomes[0].seconds / best:.2f}x"
        )
    if outcomes and rounds is not None:
        figures["rounds_seconds"] = rounds.seconds
        figures["kubeshift_over_rounds"] = outcomes[0].seconds / rounds.seconds
        ratio = outcomes[0].seconds / rounds.seconds
        print(
            f"budget rounds (deleted as each budget allows, no eviction API): "
            f"{rounds.seconds:.1f}s; kubeshift / rounds: {ratio:.2f}x"
        )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, default=str))
    return 0 if all(o.complete for o in outcomes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
