"""Drain many nodes at once without breaking a PodDisruptionBudget: plan, then act.

Unlike ``kubectl drain`` (one node at a time, blocked evictions retried every 5 s), this
drains up to ``max_nodes_in_flight`` nodes concurrently with at most
``max_pods_in_flight`` pods evicted-but-not-yet-gone cluster-wide. Each node is cordoned
right before it is drained (never all first: capacity stays until it is needed). The
evicting itself is ``evictor.Evictor``'s (shared with the ingress move): pod deletions
are awaited by a watch on the node's pods; budgets are followed by watch, so an
eviction is sent when its budget allows it and retried as soon as it does again. One
deadline bounds the whole run; what is left is reported, not hidden.

Re-running after a crash finishes the job without double work: state is read from the
cluster (cordoned nodes, pods already terminating are awaited, not evicted again).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from automation.core import interrupt
from automation.core.errors import KubeshiftError
from automation.core.progress import NullReporter, Reporter
from automation.core.waiting import summarize
from automation.kube.clients import KubeClients, list_all
from automation.kube.drain.evictor import DrainLimits, Evictor, PodSet
from automation.kube.drain.filters import DrainOptions, PodVerdict, Verdict, plan_pods
from automation.kube.drain.summary import DrainSummary
from automation.kube.nodes import cordon

log = logging.getLogger("kubeshift.drain")

__all__ = [
    "DrainLimits",
    "DrainPlan",
    "DrainSummary",
    "NodePlan",
    "drain_nodes",
    "plan_drain",
]


# --- plan --------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodePlan:
    node: str
    pods: tuple[PodVerdict, ...]
    cordoned: bool = False

    def with_verdict(self, *verdicts: Verdict) -> list[PodVerdict]:
        return [p for p in self.pods if p.verdict in verdicts]


@dataclass(frozen=True)
class DrainPlan:
    nodes: tuple[NodePlan, ...]
    missing: tuple[str, ...] = ()

    def describe(self) -> str:
        """What acting on this plan would do, for dry-run output."""
        lines = []
        for plan in self.nodes:
            evict = [p.key for p in plan.with_verdict(Verdict.EVICT)]
            wait = [p.key for p in plan.with_verdict(Verdict.WAIT)]
            skip = [f"{p.key} ({p.reason})" for p in plan.with_verdict(Verdict.SKIP)]
            refuse = [f"{p.key} ({p.reason})" for p in plan.with_verdict(Verdict.REFUSE)]
            head = "drain" if not refuse else "refuse to drain"
            line = f"{head} node {plan.node}"
            if not plan.cordoned and not refuse:
                line = f"cordon and {line}"
            parts = []
            if evict:
                parts.append(f"evict {len(evict)}: {summarize(evict)}")
            if wait:
                parts.append(f"wait for {len(wait)} terminating: {summarize(wait)}")
            if skip:
                parts.append(f"skip {len(skip)}: {summarize(skip, 3)}")
            if refuse:
                parts.append(f"blocking {len(refuse)}: {summarize(refuse, 3)}")
            lines.append(line + (" — " + "; ".join(parts) if parts else " — nothing to evict"))
        if self.missing:
            lines.append(f"not found (already gone): {summarize(list(self.missing))}")
        return "\n".join(lines)


def plan_drain(clients: KubeClients, nodes: Iterable[str], options: DrainOptions) -> DrainPlan:
    """Read the nodes and their pods and decide per pod; changes nothing."""
    wanted = sorted(set(nodes))
    node_items = list_all(clients.core.list_node, action="list nodes")["items"]
    known = {n["metadata"]["name"]: n for n in node_items}
    pods_by_node: dict[str, list[dict]] = {n: [] for n in wanted}
    if wanted:
        pods = list_all(clients.core.list_pod_for_all_namespaces, action="list pods")["items"]
        for pod in pods:
            node = (pod.get("spec") or {}).get("nodeName")
            if node in pods_by_node:
                pods_by_node[node].append(pod)
    plans = tuple(
        NodePlan(
            node=n,
            pods=tuple(plan_pods(pods_by_node[n], options)),
            cordoned=bool((known[n].get("spec") or {}).get("unschedulable")),
        )
        for n in wanted
        if n in known
    )
    return DrainPlan(plans, tuple(n for n in wanted if n not in known))


# --- act ---------------------------------------------------------------------------------


class _Run:
    """One drain run: node workers sharing one ``Evictor`` (its lock guards all)."""

    def __init__(self, evictor: Evictor) -> None:
        self.evictor = evictor
        self.lock = evictor.lock
        self.summary = evictor.summary
        self.nodes_in_flight = 0
        self.max_nodes_seen = 0
        self.nodes_task: Any = None

    def drain_node(self, node: str, schedulable: bool) -> None:
        with self.lock:
            self.nodes_in_flight += 1
            self.max_nodes_seen = max(self.max_nodes_seen, self.nodes_in_flight)
        try:
            self._drain_node(node, schedulable)
        except KubeshiftError as exc:
            with self.lock:
                self.summary.failed[f"node/{node}"] = str(exc)
                self.summary.incomplete_nodes.append(node)
        finally:
            with self.lock:
                self.nodes_in_flight -= 1

    def _drain_node(self, node: str, schedulable: bool) -> None:
        evictor = self.evictor
        if evictor.deadline.expired or interrupt.stop_requested():
            with self.lock:
                self.summary.incomplete_nodes.append(node)
                self.summary.pending[f"node/{node}"] = "not started before the deadline"
            return
        with evictor.follow(
            f"pods on {node}",
            evictor.clients.core.list_pod_for_all_namespaces,
            field_selector=f"spec.nodeName={node}",
        ) as pods:
            with self.lock:
                refused = pods.with_verdict(Verdict.REFUSE)
            if refused:  # kubectl's behaviour: do not touch a node it cannot empty
                with self.lock:
                    self.summary.incomplete_nodes.append(node)
                return
            if schedulable:
                cordon(evictor.clients.core, node)
            done = evictor.evict(pods)
            self._finish(node, pods, done)

    def _finish(self, node: str, pods: PodSet, done: bool) -> None:
        with self.lock:
            if not done or pods.failed:
                self.summary.incomplete_nodes.append(node)
            else:
                self.summary.drained_nodes.append(node)
            if done and self.nodes_task is not None:
                self.nodes_task.advance()


def drain_nodes(
    clients: KubeClients,
    nodes: Iterable[str],
    *,
    options: DrainOptions | None = None,
    limits: DrainLimits | None = None,
    reporter: Reporter | None = None,
    dry_run: bool = False,
    clock: Callable[[], float] = time.monotonic,
) -> DrainSummary:
    """Drain ``nodes`` concurrently under ``limits``; returns the summary (never hides leftovers).

    Dry-run returns the plan (which nodes would be cordoned, which pods evicted, skipped or
    blocking) without changing anything. Call ``summary.raise_for_incomplete()`` to turn an
    unfinished drain into an error.
    """
    options = options or DrainOptions()
    limits = limits or DrainLimits()
    reporter = reporter or NullReporter()
    started = clock()
    requests_before = clients.request_count
    kinds_before = clients.request_counts()
    plan = plan_drain(clients, nodes, options)
    if dry_run:
        summary = DrainSummary(dry_run=True, plan=plan.describe())
        summary.missing_nodes = list(plan.missing)
        for node_plan in plan.nodes:
            summary.incomplete_nodes.append(node_plan.node)
            for pod in node_plan.pods:
                if pod.verdict is Verdict.SKIP:
                    summary.skipped[pod.key] = pod.reason
                elif pod.verdict is Verdict.REFUSE:
                    summary.failed[pod.key] = pod.reason
                else:
                    summary.pending[pod.key] = f"would be evicted from {node_plan.node}"
        log.info("%s", summary.message())
        return summary

    evictor = Evictor(clients, options, limits, clock=clock)
    run = _Run(evictor)
    run.summary.missing_nodes = list(plan.missing)
    expected = sum(len(p.with_verdict(Verdict.EVICT)) for p in plan.nodes)
    with (
        evictor,
        reporter.task("draining nodes", total=len(plan.nodes)) as nodes_task,
        reporter.task("evicting pods", total=expected) as pods_task,
    ):
        run.nodes_task, evictor.task = nodes_task, pods_task
        with ThreadPoolExecutor(
            max_workers=limits.max_nodes_in_flight, thread_name_prefix="drain"
        ) as pool:
            futures = [pool.submit(run.drain_node, p.node, not p.cordoned) for p in plan.nodes]
            for future in futures:
                future.result()
    summary = run.summary
    summary.seconds = clock() - started
    summary.requests = clients.request_count - requests_before
    summary.requests_by = {
        k: n - kinds_before.get(k, 0)
        for k, n in clients.request_counts().items()
        if n > kinds_before.get(k, 0)
    }
    summary.drained_nodes.sort()
    summary.incomplete_nodes.sort()
    summary.evicted.sort()
    log.info("%s", summary.message())
    summary.max_pods_in_flight = evictor.max_in_flight_seen
    summary.max_nodes_in_flight = run.max_nodes_seen
    return summary
