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
"""

from __future__ import annotations

import statistics
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from automation.kube.clients import KubeClients
from automation.kube.pods import pod_ready
from automation.kube.watching import ListWatcher

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
                on_sync=lambda items: [self._pod("ADDED", p) for p in items],
                on_event=self._pod,
            ).start()
        ]
        if self.budgets:
            self._watchers.append(
                ListWatcher(
                    self.kube.policy.list_pod_disruption_budget_for_all_namespaces,
                    name="timeline budgets",
                    label_selector=self.selector,
                    on_sync=lambda items: [self._budget(b) for b in items],
                    on_event=lambda kind, pdb: self._budget(pdb),
                ).start()
            )
        return self

    def __exit__(self, *exc: object) -> None:
        for watcher in self._watchers:
            watcher.stop()

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
