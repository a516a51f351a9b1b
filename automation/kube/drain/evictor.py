"""The one evictor: pods out under budgets, an in-flight limit, back-off and one deadline.

Shared by the drain (the pods of each node) and the ingress move (one batch at a time).
A caller follows the pods it wants gone by watch (``Evictor.follow``): each is planned
with the drain's filters, so skipped and refused pods are recorded, never evicted.
``Evictor.evict`` then sends evictions when PodDisruptionBudgets (followed by
``BudgetTracker``) and ``max_pods_in_flight`` allow, backs off on refusals, awaits the
deletions and returns when every pod is gone, or records what is left at the deadline.

Callers wait on conditions of their own over the evictor's one lock, and an event wakes
only the callers it concerns: a pod's change its caller, a budget's change the callers
with pods waiting on it, a freed in-flight slot every caller. With 20 nodes in flight and
thousands of pods, waking every caller on every event cost the control plane's CPU.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from automation.core import interrupt
from automation.core.progress import TaskHandle
from automation.core.waiting import Deadline
from automation.kube.clients import KubeClients
from automation.kube.drain.budgets import BudgetTracker
from automation.kube.drain.evict import EvictStatus, evict_pod
from automation.kube.drain.filters import DrainOptions, PodVerdict, Verdict, plan_pods
from automation.kube.drain.summary import DrainSummary
from automation.kube.watching import ListWatcher

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


TODO, BLOCKED, EVICTED, GONE, FAILED = "todo", "blocked", "evicted", "gone", "failed"


@dataclass
class PodWork:
    verdict: PodVerdict
    state: str = TODO
    attempts: int = 0
    next_try: float = 0.0
    budgets: list[str] = field(default_factory=list)
    blocked_by: str = ""
    holds_slot: bool = False
    waits_on: tuple[str, ...] = ()  # the budgets it is counted under in ``Evictor._waiting``


@dataclass(eq=False)
class PodSet:
    """Pods one caller wants gone, by UID, kept current by a watch (guarded by the evictor).

    ``seniority`` is the caller's place in line while it is inside ``Evictor.evict``
    (lower is older; 0 outside); ``wakeup`` is the condition its caller waits on.
    """

    name: str
    want: Callable[[dict[str, Any]], bool]
    wakeup: threading.Condition
    work: dict[str, PodWork] = field(default_factory=dict)
    seniority: int = 0
    wakeups: int = 0  # waits a notification ended (not the poll's timeout)

    def with_verdict(self, verdict: Verdict) -> list[PodWork]:
        return [w for w in self.work.values() if w.verdict.verdict is verdict]

    @property
    def failed(self) -> bool:
        return any(w.state == FAILED for w in self.work.values())


def _uid(pod: dict[str, Any]) -> Any:
    return (pod.get("metadata") or {}).get("uid")


class Evictor:
    """State shared by every caller of one run, guarded by one lock (``lock``).

    Use as a context manager: it follows the budgets while open.
    """

    def __init__(
        self,
        clients: KubeClients,
        options: DrainOptions,
        limits: DrainLimits,
        *,
        deadline: Deadline | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.clients, self.options, self.limits, self.clock = clients, options, limits, clock
        self.lock = threading.RLock()
        self.deadline = deadline or Deadline(limits.timeout, clock)
        self.summary = DrainSummary()
        self.tracker: BudgetTracker | None = None
        self.task: TaskHandle | None = None  # advanced per eviction, told who waits for budgets
        self.in_flight = 0
        self.max_in_flight_seen = 0
        self._blocked: dict[str, int] = {}
        self._evicting: list[PodSet] = []  # callers inside evict(), oldest first
        self._arrivals = itertools.count(1)
        # budgets -> callers inside evict() with pods waiting (todo or blocked) on exactly
        # those budgets, and how many: seniority and budget wakes read it, never a scan
        self._waiting: dict[tuple[str, ...], Counter[PodSet]] = {}

    def __enter__(self) -> Evictor:
        if self.limits.follow_budgets:
            self.tracker = BudgetTracker(self.clients.policy, on_change=self._budget_changed)
            self.tracker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.tracker is not None:
            self.tracker.stop()

    # --- waking callers (lock held) ------------------------------------------------------
    def _wake_all(self) -> None:
        for pods in self._evicting:
            pods.wakeup.notify_all()

    def _budget_changed(self, key: str | None) -> None:
        """The tracker saw budget ``key`` change (None: all were listed again)."""
        with self.lock:
            if key is None:
                self._wake_all()
            else:
                self._wake_waiting_on([key])

    def _wake_waiting_on(self, keys: list[str]) -> None:
        for budgets, callers in self._waiting.items():
            if any(key in budgets for key in keys):
                for pods in callers:
                    pods.wakeup.notify_all()

    def _free_slot(self, item: PodWork) -> None:
        """Give back ``item``'s in-flight slot; callers stopped at the limit go on."""
        if not item.holds_slot:
            return
        item.holds_slot = False
        self.in_flight -= 1
        if self.in_flight == self.limits.max_pods_in_flight - 1:
            self._wake_all()

    def _reindex(self, pods: PodSet, item: PodWork) -> None:
        """Count ``item`` under the budgets it waits on, or under none (lock held).

        Called after every change of a pod's state or budgets, and when its caller
        enters or leaves ``evict``. A caller whose pod stops waiting wakes the younger
        callers waiting on the same budgets: the allowance may be theirs now.
        """
        waits_on = tuple(item.budgets) if pods.seniority and item.state in (TODO, BLOCKED) else ()
        if waits_on == item.waits_on:
            return
        if item.waits_on:
            callers = self._waiting[item.waits_on]
            callers[pods] -= 1
            if callers[pods] <= 0:
                del callers[pods]
                for other in callers:
                    if other.seniority > pods.seniority:
                        other.wakeup.notify_all()
            if not callers:
                del self._waiting[item.waits_on]
        if waits_on:
            self._waiting.setdefault(waits_on, Counter())[pods] += 1
        item.waits_on = waits_on

    def _older_caller_waits(self, pods: PodSet, budgets: tuple[str, ...]) -> bool:
        """True when a caller older than ``pods`` has a pod waiting on ``budgets``."""
        callers = self._waiting.get(budgets)
        return callers is not None and any(c.seniority < pods.seniority for c in callers)

    # --- following pods -----------------------------------------------------------------
    @contextmanager
    def follow(
        self,
        name: str,
        call: Any,
        *args: Any,
        want: Callable[[dict[str, Any]], bool] = lambda pod: True,
        **selectors: Any,
    ) -> Iterator[PodSet]:
        """Watch ``call(*args, **selectors)``; the pods ``want`` accepts join the set.

        The set is filled (and planned) when this enters; deletions mark its pods gone.
        """
        pods = PodSet(name, want, threading.Condition(self.lock))
        watcher = ListWatcher(
            call,
            *args,
            name=name,
            on_sync=lambda items: self._sync(pods, items),
            on_event=lambda kind, pod: self._event(pods, kind, pod),
            **selectors,
        )
        watcher.start()
        try:
            yield pods
        finally:
            watcher.stop()

    def _admit(self, pods: PodSet, pod: dict[str, Any]) -> None:
        if not pods.want(pod):
            return
        (verdict,) = plan_pods([pod], self.options) or (None,)
        if verdict is None or verdict.uid in pods.work:
            return
        item = PodWork(verdict)
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
        pods.work[verdict.uid] = item
        self._reindex(pods, item)

    def _sync(self, pods: PodSet, items: list[dict[str, Any]]) -> None:
        with self.lock:
            present = {_uid(p) for p in items}
            for uid, item in pods.work.items():
                if uid not in present:
                    self._gone(pods, item)
            for pod in items:
                self._admit(pods, pod)
            pods.wakeup.notify_all()

    def _event(self, pods: PodSet, kind: str, pod: dict[str, Any]) -> None:
        uid = _uid(pod)
        with self.lock:
            if kind == "DELETED":
                if uid in pods.work:
                    self._gone(pods, pods.work[uid])
            elif uid not in pods.work:
                self._admit(pods, pod)
            elif (pod.get("metadata") or {}).get("deletionTimestamp"):
                item = pods.work[uid]
                if item.state in (TODO, BLOCKED):
                    item.state = EVICTED  # someone else is deleting it: just wait
                    self._reindex(pods, item)
            pods.wakeup.notify_all()

    def _gone(self, pods: PodSet, item: PodWork) -> None:
        if item.state == GONE:
            return
        self._free_slot(item)
        item.state = GONE
        self._reindex(pods, item)

    # --- evicting -----------------------------------------------------------------------
    def evict(self, pods: PodSet) -> bool:
        """Evict ``pods`` and await their deletion.

        True when every pod is gone or failed (see ``pods.failed``); False when the
        deadline or Ctrl-C came first, with what is left recorded in the summary.

        Callers are served by seniority: a budget's next allowance goes to the caller
        that entered first and still has a pod waiting on exactly that budget. A drain
        thus empties its nodes one after another, so a node finishes (and the next one
        enters ``max_nodes_in_flight``) after one round of every budget, instead of all
        nodes in flight finishing together at the end, with the budgets idle until the
        next nodes come in.
        """
        with self.lock:
            self._evicting.append(pods)
            pods.seniority = next(self._arrivals)
            for item in pods.work.values():
                self._reindex(pods, item)
            try:
                return self._evict(pods)
            finally:
                self._evicting.remove(pods)
                pods.seniority = 0
                for item in pods.work.values():
                    self._reindex(pods, item)

    def _evict(self, pods: PodSet) -> bool:
        limits = self.limits
        while True:
            active = [w for w in pods.work.values() if w.state not in (GONE, FAILED)]
            if not active:
                self._show_blocked(pods.name, 0)
                return True
            if self.deadline.expired or interrupt.stop_requested():
                self._report_leftovers(active)  # Ctrl-C: the caller's runner says so
                return False
            now = self.clock()
            wake = now + 1.0
            for item in sorted(active, key=lambda w: w.verdict.key):
                if item.state not in (TODO, BLOCKED):
                    continue
                if self.in_flight >= limits.max_pods_in_flight:
                    break
                if item.waits_on and self._older_caller_waits(pods, item.waits_on):
                    # an older caller takes this budget's allowance first: this pod waits
                    # on the budget too, and says so (progress, and the deadline's report)
                    if item.state == TODO:
                        item.state = BLOCKED
                        item.blocked_by = item.budgets[0]
                        self._reindex(pods, item)
                    continue
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
                        self._reindex(pods, item)
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
                self._attempt(pods, item, claimed=bool(claim))
                now = self.clock()
            self._show_blocked(pods.name, sum(1 for w in active if w.state == BLOCKED))
            if pods.wakeup.wait(max(0.01, min(wake - now, self.deadline.remaining))):
                pods.wakeups += 1

    def _show_blocked(self, name: str, count: int) -> None:
        """Keep the task's detail at 'N waiting for budgets' (lock held)."""
        if self._blocked.get(name, 0) == count:
            return
        self._blocked[name] = count
        if self.task is not None:
            total = sum(self._blocked.values())
            self.task.update(detail=f"{total} waiting for disruption budgets")

    def _attempt(self, pods: PodSet, item: PodWork, claimed: bool) -> None:
        """Send one eviction (lock released during the call)."""
        pod = item.verdict
        item.holds_slot = True
        self.in_flight += 1
        self.max_in_flight_seen = max(self.max_in_flight_seen, self.in_flight)
        item.attempts += 1
        self.lock.release()
        try:
            outcome = evict_pod(
                self.clients.core,
                pod.namespace,
                pod.name,
                uid=pod.uid,
                grace_period_seconds=self.options.grace_period_seconds,
            )
        finally:
            self.lock.acquire()
        status = outcome.status
        if status is EvictStatus.EVICTED:
            if item.state != GONE:
                item.state = EVICTED
                self._reindex(pods, item)
            self.summary.evicted.append(pod.key)
            self.summary.blocked.pop(pod.key, None)
            if self.task is not None:
                self.task.advance()
            return
        self._free_slot(item)
        if claimed and self.tracker is not None:
            self.tracker.release(item.budgets)
            self._wake_waiting_on(item.budgets)  # the token is free again
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
        self._reindex(pods, item)

    def _report_leftovers(self, active: list[PodWork]) -> None:
        for item in active:
            key, node = item.verdict.key, item.verdict.node
            if item.state == BLOCKED and item.budgets and self.tracker is not None:
                self.summary.blocked[key] = self.tracker.describe(item.budgets[0])
            elif item.state == BLOCKED:
                self.summary.blocked[key] = item.blocked_by or "blocked"
            elif item.state == EVICTED:
                self.summary.pending[key] = f"evicted from {node}, not yet deleted"
            else:
                self.summary.pending[key] = f"not yet evicted from {node}"
