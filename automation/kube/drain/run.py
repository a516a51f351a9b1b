"""Drain many nodes at once without breaking a PodDisruptionBudget: plan, then act.

Unlike ``kubectl drain`` (one node at a time, blocked evictions retried every 5 s), this
drains up to ``max_nodes_in_flight`` nodes concurrently with at most
``max_pods_in_flight`` pods evicted-but-not-yet-gone cluster-wide. Each node is cordoned
right before it is drained (never all first: capacity stays until it is needed). Pod
deletions are awaited by a watch on the node's pods; budgets are followed by watch, so
an eviction is sent when its budget allows it and retried as soon as it does again.
One deadline bounds the whole run; what is left is reported, not hidden.

Re-running after a crash finishes the job without double work: state is read from the
cluster (cordoned nodes, pods already terminating are awaited, not evicted again).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from automation import interrupt
from automation.errors import GateTimeoutError, KubeshiftError, StepFailedError
from automation.kube.clients import KubeClients, list_all
from automation.kube.drain.budgets import BudgetTracker
from automation.kube.drain.evict import EvictStatus, evict_pod
from automation.kube.drain.filters import DrainOptions, PodVerdict, Verdict, plan_pods
from automation.kube.nodes import cordon
from automation.kube.watching import ListWatcher
from automation.progress import NullReporter, Reporter
from automation.waiting import Deadline, summarize

log = logging.getLogger("kubeshift.drain")


class DrainLimits(BaseModel):
    """The global disruption budget of one drain run, and its deadline."""

    model_config = ConfigDict(extra="forbid")

    max_nodes_in_flight: int = Field(default=5, ge=1, description="Nodes drained at once.")
    max_pods_in_flight: int = Field(
        default=50, ge=1, description="Pods evicted and not yet gone, across all nodes."
    )
    timeout: float = Field(default=1800.0, gt=0, description="Deadline of the whole run (s).")
    retry_initial: float = Field(default=0.5, gt=0, description="First retry of a 429 (s).")
    retry_max: float = Field(
        default=5.0, gt=0, description="Longest wait between retries (kubectl's fixed 5 s)."
    )
    follow_budgets: bool = Field(
        default=True, description="Watch PDBs to evict exactly when they allow it."
    )
    budget_fallback: float = Field(
        default=30.0,
        gt=0,
        description="Try one eviction anyway when a refusing budget's status has not "
        "changed for this long (s).",
    )


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


# --- result ------------------------------------------------------------------------------


@dataclass
class DrainSummary:
    """Buckets of a drain run, keyed by ``namespace/pod``; nodes by outcome."""

    evicted: list[str] = field(default_factory=list)
    blocked: dict[str, str] = field(default_factory=dict)  # pod -> budget description
    skipped: dict[str, str] = field(default_factory=dict)  # pod -> reason
    pending: dict[str, str] = field(default_factory=dict)  # pod -> what it waits for
    failed: dict[str, str] = field(default_factory=dict)  # pod -> error / refusal
    drained_nodes: list[str] = field(default_factory=list)
    incomplete_nodes: list[str] = field(default_factory=list)
    missing_nodes: list[str] = field(default_factory=list)
    requests: int = 0  # API requests sent by this run
    requests_by: dict[str, int] = field(default_factory=dict)  # by kind (POST pods/eviction…)
    seconds: float = 0.0
    max_pods_in_flight: int = 0  # highest concurrency observed
    max_nodes_in_flight: int = 0
    dry_run: bool = False
    plan: str = ""

    @property
    def complete(self) -> bool:
        return not (self.blocked or self.pending or self.failed or self.incomplete_nodes)

    def message(self, limit: int = 5) -> str:
        total = len(self.drained_nodes) + len(self.incomplete_nodes)
        if self.dry_run:
            return f"dry-run: would drain {total} node(s):\n{self.plan}"
        text = (
            f"Drained {len(self.drained_nodes)}/{total} node(s) in {self.seconds:.0f}s: "
            f"evicted {len(self.evicted)} pod(s), skipped {len(self.skipped)}"
        )
        if self.blocked:
            budgets = sorted(set(self.blocked.values()))
            text += (
                f"; {len(self.blocked)} blocked by "
                f"{'; '.join(budgets[:limit])}"
                f"{f' … and {len(budgets) - limit} more' if len(budgets) > limit else ''}"
                f" (pods {summarize(list(self.blocked), limit)})"
            )
        if self.pending:
            text += f"; {len(self.pending)} pending: {summarize(list(self.pending), limit)}"
        if self.failed:
            items = [f"{k} ({v})" for k, v in self.failed.items()]
            text += f"; {len(self.failed)} failed: {summarize(items, limit)}"
        if self.incomplete_nodes:
            text += f"; nodes not drained: {summarize(self.incomplete_nodes, limit)}"
        if self.missing_nodes:
            text += f"; nodes not found: {summarize(self.missing_nodes, limit)}"
        return text + "."

    def as_dict(self) -> dict[str, Any]:
        return {
            "evicted": sorted(self.evicted),
            "blocked": dict(sorted(self.blocked.items())),
            "skipped": dict(sorted(self.skipped.items())),
            "pending": dict(sorted(self.pending.items())),
            "failed": dict(sorted(self.failed.items())),
            "drained_nodes": sorted(self.drained_nodes),
            "incomplete_nodes": sorted(self.incomplete_nodes),
            "missing_nodes": sorted(self.missing_nodes),
            "requests": self.requests,
            "requests_by": dict(sorted(self.requests_by.items())),
            "max_pods_in_flight": self.max_pods_in_flight,
            "max_nodes_in_flight": self.max_nodes_in_flight,
            "seconds": round(self.seconds, 3),
            "complete": self.complete,
        }

    def raise_for_incomplete(self) -> None:
        """GateTimeoutError when pods were blocked or pending at the deadline,
        StepFailedError when pods failed or a node refused to drain."""
        if self.failed:
            raise StepFailedError(self.message())
        if not self.complete:
            raise GateTimeoutError(self.message())


# --- act ---------------------------------------------------------------------------------

TODO, BLOCKED, EVICTED, GONE, FAILED = "todo", "blocked", "evicted", "gone", "failed"


@dataclass
class _PodWork:
    verdict: PodVerdict
    state: str = TODO
    attempts: int = 0
    next_try: float = 0.0
    budgets: list[str] = field(default_factory=list)
    blocked_by: str = ""
    holds_slot: bool = False


class _Run:
    """State shared by every node worker of one drain run, guarded by one condition."""

    def __init__(
        self,
        clients: KubeClients,
        options: DrainOptions,
        limits: DrainLimits,
        reporter: Reporter,
        clock: Callable[[], float],
    ) -> None:
        self.clients, self.options, self.limits = clients, options, limits
        self.reporter = reporter
        self.clock = clock
        self.cond = threading.Condition()
        self.deadline = Deadline(limits.timeout, clock)
        self.in_flight = 0
        self.max_in_flight_seen = 0
        self.nodes_in_flight = 0
        self.max_nodes_seen = 0
        self.summary = DrainSummary()
        self.tracker: BudgetTracker | None = None
        self.pods_task: Any = None
        self.nodes_task: Any = None
        self.blocked_by_node: dict[str, int] = {}

    def notify(self) -> None:
        with self.cond:
            self.cond.notify_all()

    # --- per node ------------------------------------------------------------------
    def drain_node(self, node: str, schedulable: bool) -> None:
        with self.cond:
            self.nodes_in_flight += 1
            self.max_nodes_seen = max(self.max_nodes_seen, self.nodes_in_flight)
        try:
            self._drain_node(node, schedulable)
        except KubeshiftError as exc:
            with self.cond:
                self.summary.failed[f"node/{node}"] = str(exc)
                self.summary.incomplete_nodes.append(node)
        finally:
            with self.cond:
                self.nodes_in_flight -= 1
                self.cond.notify_all()

    def _drain_node(self, node: str, schedulable: bool) -> None:
        if self.deadline.expired or interrupt.stop_requested():
            with self.cond:
                self.summary.incomplete_nodes.append(node)
                self.summary.pending[f"node/{node}"] = "not started before the deadline"
            return
        work: dict[str, _PodWork] = {}

        def admit(pod: dict) -> None:
            (verdict,) = plan_pods([pod], self.options) or (None,)
            if verdict is None or verdict.uid in work:
                return
            item = _PodWork(verdict)
            if verdict.verdict is Verdict.WAIT:
                item.state = EVICTED
            elif verdict.verdict is Verdict.SKIP:
                item.state = GONE
                self.summary.skipped[verdict.key] = verdict.reason
            elif verdict.verdict is Verdict.REFUSE:
                item.state = FAILED
                self.summary.failed[verdict.key] = verdict.reason
            if self.tracker is not None:
                item.budgets = self.tracker.budgets_for(verdict.namespace, verdict.labels)
            work[verdict.uid] = item

        def on_sync(items: list[dict]) -> None:
            with self.cond:
                present = {(p.get("metadata") or {}).get("uid") for p in items}
                for uid, item in work.items():
                    if uid not in present:
                        self._gone(item)
                for pod in items:
                    admit(pod)
                self.cond.notify_all()

        def on_event(kind: str, pod: dict) -> None:
            uid = (pod.get("metadata") or {}).get("uid")
            with self.cond:
                if kind == "DELETED":
                    if uid in work:
                        self._gone(work[uid])
                elif uid not in work:
                    admit(pod)
                elif (pod.get("metadata") or {}).get("deletionTimestamp"):
                    item = work[uid]
                    if item.state in (TODO, BLOCKED):
                        item.state = EVICTED  # someone else is deleting it: just wait
                self.cond.notify_all()

        watcher = ListWatcher(
            self.clients.core.list_pod_for_all_namespaces,
            name=f"pods on {node}",
            on_sync=on_sync,
            on_event=on_event,
            field_selector=f"spec.nodeName={node}",
        )
        watcher.start()
        try:
            with self.cond:
                refused = [w for w in work.values() if w.verdict.verdict is Verdict.REFUSE]
            if refused:  # kubectl's behaviour: do not touch a node it cannot empty
                with self.cond:
                    self.summary.incomplete_nodes.append(node)
                return
            if schedulable:
                cordon(self.clients.core, node)
            self._evict_loop(node, work)
        finally:
            watcher.stop()

    def _gone(self, item: _PodWork) -> None:
        if item.state == GONE:
            return
        if item.holds_slot:
            item.holds_slot = False
            self.in_flight -= 1
        item.state = GONE

    def _evict_loop(self, node: str, work: dict[str, _PodWork]) -> None:
        limits = self.limits
        with self.cond:
            while True:
                active = [w for w in work.values() if w.state not in (GONE, FAILED)]
                if not active:
                    self._show_blocked(node, 0)
                    if any(w.state == FAILED for w in work.values()):
                        self.summary.incomplete_nodes.append(node)
                    else:
                        self.summary.drained_nodes.append(node)
                    if self.nodes_task is not None:
                        self.nodes_task.advance()
                    return
                if self.deadline.expired or interrupt.stop_requested():
                    self._report_leftovers(node, active)  # Ctrl-C: the runner says so
                    return
                now = self.clock()
                wake = now + 1.0
                for item in sorted(active, key=lambda w: w.verdict.key):
                    if item.state not in (TODO, BLOCKED):
                        continue
                    if self.in_flight >= limits.max_pods_in_flight:
                        break
                    claim = (
                        self.tracker.try_claim(item.budgets)
                        if self.tracker is not None and item.budgets
                        else None
                    )
                    if claim is False:
                        # the budget allows nothing now: its next status update wakes us
                        # (claim turns True). Only when it has been quiet for long (a lagging
                        # watch?) is one eviction tried anyway, and the API server decides.
                        if item.state == TODO:
                            item.state = BLOCKED
                            item.blocked_by = item.budgets[0]
                        quiet = self.tracker.quiet_for(item.budgets) if self.tracker else 0.0
                        if quiet < limits.budget_fallback:
                            wake = min(wake, now + limits.budget_fallback - quiet)
                            continue
                        if now < item.next_try:
                            wake = min(wake, item.next_try)
                            continue
                    elif claim is None and now < item.next_try:
                        wake = min(wake, item.next_try)
                        continue
                    self._attempt(item, claimed=bool(claim))
                    now = self.clock()
                self._show_blocked(node, sum(1 for w in active if w.state == BLOCKED))
                self.cond.wait(max(0.01, min(wake - now, self.deadline.remaining)))

    def _show_blocked(self, node: str, count: int) -> None:
        """Keep the pods task's detail at 'N waiting for budgets' (lock held)."""
        if self.blocked_by_node.get(node, 0) == count:
            return
        self.blocked_by_node[node] = count
        if self.pods_task is not None:
            total = sum(self.blocked_by_node.values())
            self.pods_task.update(detail=f"{total} waiting for disruption budgets")

    def _attempt(self, item: _PodWork, claimed: bool) -> None:
        """Send one eviction (lock released during the call)."""
        pod = item.verdict
        item.holds_slot = True
        self.in_flight += 1
        self.max_in_flight_seen = max(self.max_in_flight_seen, self.in_flight)
        item.attempts += 1
        self.cond.release()
        try:
            outcome = evict_pod(
                self.clients.core,
                pod.namespace,
                pod.name,
                uid=pod.uid,
                grace_period_seconds=self.options.grace_period_seconds,
            )
        finally:
            self.cond.acquire()
        status = outcome.status
        if status is EvictStatus.EVICTED:
            if item.state != GONE:
                item.state = EVICTED
            self.summary.evicted.append(pod.key)
            self.summary.blocked.pop(pod.key, None)
            if self.pods_task is not None:
                self.pods_task.advance()
            return
        if item.holds_slot:
            item.holds_slot = False
            self.in_flight -= 1
        if claimed and self.tracker is not None:
            self.tracker.release(item.budgets)
        if status is EvictStatus.GONE:
            item.state = GONE
        elif status is EvictStatus.FAILED:
            item.state = FAILED
            self.summary.failed[pod.key] = outcome.message
        else:  # BLOCKED, NAMESPACE_TERMINATING or TRANSIENT: retry with backoff
            item.state = BLOCKED
            item.blocked_by = outcome.pdb or outcome.message
            if outcome.pdb and outcome.pdb not in item.budgets:
                item.budgets = [outcome.pdb]
            limits = self.limits
            followed = self.tracker is not None and self.tracker.follows(item.budgets)
            if status is EvictStatus.BLOCKED and outcome.pdb and followed:
                delay = limits.budget_fallback  # the budget's status updates wake us first
            else:
                delay = min(limits.retry_max, limits.retry_initial * 2 ** (item.attempts - 1))
                if outcome.retry_after:
                    delay = min(max(delay, outcome.retry_after), limits.retry_max)
            item.next_try = self.clock() + delay
            log.debug("eviction of %s blocked (%s); will retry in %.1fs", pod.key, outcome, delay)

    def _report_leftovers(self, node: str, active: list[_PodWork]) -> None:
        self.summary.incomplete_nodes.append(node)
        for item in active:
            key = item.verdict.key
            if item.state == BLOCKED and item.budgets and self.tracker is not None:
                self.summary.blocked[key] = self.tracker.describe(item.budgets[0])
            elif item.state == BLOCKED:
                self.summary.blocked[key] = item.blocked_by or "blocked"
            elif item.state == EVICTED:
                self.summary.pending[key] = f"evicted from {node}, not yet deleted"
            else:
                self.summary.pending[key] = f"not yet evicted from {node}"


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

    run = _Run(clients, options, limits, reporter, clock)
    run.summary.missing_nodes = list(plan.missing)
    if limits.follow_budgets:
        run.tracker = BudgetTracker(clients.policy, on_change=run.notify).start()
    expected = sum(len(p.with_verdict(Verdict.EVICT)) for p in plan.nodes)
    try:
        with (
            reporter.task("draining nodes", total=len(plan.nodes)) as nodes_task,
            reporter.task("evicting pods", total=expected) as pods_task,
        ):
            run.nodes_task, run.pods_task = nodes_task, pods_task
            with ThreadPoolExecutor(
                max_workers=limits.max_nodes_in_flight, thread_name_prefix="drain"
            ) as pool:
                futures = [pool.submit(run.drain_node, p.node, not p.cordoned) for p in plan.nodes]
                for future in futures:
                    future.result()
    finally:
        if run.tracker is not None:
            run.tracker.stop()
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
    summary.max_pods_in_flight = run.max_in_flight_seen
    summary.max_nodes_in_flight = run.max_nodes_seen
    return summary
