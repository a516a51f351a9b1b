"""Moving the ingress controller: evict its pods onto new nodes.

Seed 001: before new workers exist the ingress Service is bridged (any node forwards
its node ports: ``automation.kube.service_bridge``); after the old nodes are tainted
its pods are evicted so they reschedule onto the new nodes; then the bridge closes.
The move goes a batch at a time and waits for replacements to be Ready on the target
nodes before the next batch, so the Service never runs dry. Evictions go through the
drain's evictor: same filters, budgets, limits and back-off.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from automation.core import interrupt
from automation.core.errors import GateTimeoutError, StepFailedError
from automation.core.progress import NullReporter, Reporter
from automation.core.waiting import Deadline, Pending, summarize, wait_until
from automation.kube.clients import KubeClients, list_all
from automation.kube.drain.evictor import DrainLimits, Evictor
from automation.kube.drain.filters import DrainOptions, PodVerdict, Verdict, plan_pods, verdict_for
from automation.kube.nodes import NodeSelection, select_nodes
from automation.kube.pods import pod_ready

log = logging.getLogger("kubeshift.ingress")


class PodMove(BaseModel):
    """Which pods to move and where they must land."""

    namespace: str
    pod_selector: str = Field(description="Label selector of the pods, e.g. 'app=ingress'.")
    target: NodeSelection = Field(description="Nodes the pods must end up on.")
    batch_size: int = Field(default=1, ge=1, description="Pods evicted before waiting.")
    timeout: float = Field(default=600.0, gt=0, description="Deadline of the whole move (s).")
    interval: float = Field(default=1.0, gt=0, description="Poll interval while waiting (s).")
    retry_max: float = Field(
        default=5.0, gt=0, description="Longest wait between 429 retries when no limits given."
    )

    def describe(self) -> str:
        return f"{self.namespace} pods '{self.pod_selector}'"


@dataclass
class MoveResult:
    moved: list[str] = field(default_factory=list)  # evicted pods (namespace/name)
    already_in_place: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # left off target: pod -> reason
    refused: dict[str, str] = field(default_factory=dict)  # the drain would refuse: pod -> why
    ready_on_target: int = 0
    dry_run: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.moved) and not self.dry_run

    @property
    def message(self) -> str:
        all_ = "" if self.skipped else "All "  # skipped pods stay off the target nodes
        if self.dry_run and self.refused:
            text = f"dry-run: would refuse to move, {self.refusals()}"
        elif self.dry_run and self.moved:
            text = f"dry-run: would evict {len(self.moved)} pod(s): {summarize(self.moved)}"
        elif self.dry_run:
            text = "dry-run: nothing to move" + (
                "" if all_ else "; every pod is on the target nodes"
            )
        elif not self.moved:
            text = f"{all_}{len(self.already_in_place)} pod(s) already on the target nodes"
        else:
            text = (
                f"Moved {len(self.moved)} pod(s) ({summarize(self.moved)}); "
                f"{self.ready_on_target} Ready on the target nodes"
            )
        if self.skipped:
            items = [f"{k} ({v})" for k, v in self.skipped.items()]
            text += f"; left {len(items)} where they are: {summarize(items, 3)}"
        return text + "."

    def refusals(self) -> str:
        items = [f"{k} ({v})" for k, v in self.refused.items()]
        return f"{len(items)} pod(s) cannot be evicted: {summarize(items, 3)}"


def _key(pod: Mapping[str, Any]) -> str:
    return f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"


def move_pods(
    clients: KubeClients,
    move: PodMove,
    *,
    options: DrainOptions | None = None,
    limits: DrainLimits | None = None,
    reporter: Reporter | None = None,
    dry_run: bool = False,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> MoveResult:
    """Evict the selected pods that are off ``move.target`` and wait for Ready replacements there.

    Evictions go through the drain's ``Evictor`` with ``options`` and ``limits`` (budgets,
    in-flight limit, back-off; ``move.timeout`` is the one deadline). Pods the drain
    skips are left and reported; if it would refuse one, nothing is evicted
    (``StepFailedError``). Idempotent: pods already on target nodes are left alone; a
    re-run after a crash only evicts what is still elsewhere.
    """
    reporter = reporter or NullReporter()
    # the move's selector picks the pods; the drain's own pod_selector does not apply
    options = (options or DrainOptions()).model_copy(update={"pod_selector": {}})
    limits = limits or DrainLimits(retry_max=move.retry_max)
    deadline = Deadline(move.timeout, clock)
    targets = {n["metadata"]["name"] for n in select_nodes(clients.core, move.target)[0]}
    if not targets:
        raise StepFailedError(
            f"No target node matches {move.target.describe()}; cannot move {move.describe()}."
        )

    def pods() -> list[dict[str, Any]]:
        return list_all(
            clients.core.list_namespaced_pod,
            move.namespace,
            action=f"list pods '{move.pod_selector}' in {move.namespace}",
            label_selector=move.pod_selector,
        )["items"]

    def counted(pod: Mapping[str, Any]) -> bool:  # pods the drain skips never move
        return verdict_for(pod, options)[0] is not Verdict.SKIP

    current = [p for p in pods() if not (p["metadata"].get("deletionTimestamp"))]
    wanted = sum(1 for p in current if counted(p))
    plan = plan_pods(
        (p for p in current if (p.get("spec") or {}).get("nodeName") not in targets), options
    )
    to_move = [v for v in plan if v.verdict is Verdict.EVICT]
    result = MoveResult(
        already_in_place=sorted(
            _key(p) for p in current if (p.get("spec") or {}).get("nodeName") in targets
        ),
        skipped={v.key: v.reason for v in plan if v.verdict is Verdict.SKIP},
        refused={v.key: v.reason for v in plan if v.verdict is Verdict.REFUSE},
        dry_run=dry_run,
    )
    if dry_run:
        result.moved = [v.key for v in to_move]
        log.info("%s", result.message)
        return result
    if result.refused:  # like a drain's node: do not start what cannot be finished
        raise StepFailedError(
            f"Cannot move {move.describe()}: {result.refusals()}; nothing was evicted."
        )

    def placed() -> Pending:
        now = [p for p in pods() if counted(p)]
        ready_on = [p for p in now if pod_ready(p) and p["spec"].get("nodeName") in targets]
        elsewhere = [
            f"{_key(p)} on {p['spec'].get('nodeName') or 'no node'}"
            for p in now
            if p["spec"].get("nodeName") not in targets
        ]
        result.ready_on_target = len(ready_on)
        missing = [f"{wanted - len(ready_on)} Ready replica(s)"] if len(ready_on) < wanted else []
        return Pending.of([*elsewhere, *missing], f"{len(ready_on)}/{wanted} Ready on targets")

    def replaced() -> Pending:
        gap = wanted - sum(1 for p in pods() if pod_ready(p) and counted(p))
        return Pending.of([f"{gap} replacement(s) not Ready"] if gap > 0 else [])

    def wait(what: str, poll: Callable[[], Pending]) -> None:
        wait_until(
            what,
            poll,
            timeout=max(deadline.remaining, 0.01),
            interval=move.interval,
            on_progress=reporter.on_wait,
            clock=clock,
            sleep=sleep,
        )

    with reporter.task(f"moving {move.describe()}", len(to_move)) as task:
        if to_move:
            with Evictor(clients, options, limits, deadline=deadline, clock=clock) as evictor:
                evictor.task = task
                for start in range(0, len(to_move), move.batch_size):
                    batch = to_move[start : start + move.batch_size]
                    _evict_batch(evictor, move, batch, result)
                    wait(f"replacements of {move.describe()} Ready", replaced)
        wait(f"{move.describe()} Ready on the target nodes", placed)
    log.info("%s", result.message)
    return result


def _evict_batch(
    evictor: Evictor, move: PodMove, batch: list[PodVerdict], result: MoveResult
) -> None:
    """Evict ``batch`` through ``evictor`` and await its pods' deletion."""
    uids = {v.uid for v in batch}
    with evictor.follow(
        f"{move.describe()} being moved",
        evictor.clients.core.list_namespaced_pod,
        move.namespace,
        want=lambda pod: (pod.get("metadata") or {}).get("uid") in uids,
        label_selector=move.pod_selector,
    ) as pods:
        done = evictor.evict(pods)
    summary = evictor.summary
    with evictor.lock:
        result.skipped.update(
            {v.key: summary.skipped[v.key] for v in batch if v.key in summary.skipped}
        )
        result.moved.extend(v.key for v in batch if v.key not in summary.skipped | summary.failed)
        leftovers = "; ".join(summary.leftovers())
    if summary.failed:
        raise StepFailedError(f"Moving {move.describe()} failed: {leftovers}.")
    if not done:
        interrupt.check(f"moving {move.describe()}")
        raise GateTimeoutError(
            f"Timed out after {move.timeout:.0f}s moving {move.describe()}: {leftovers}."
        )
