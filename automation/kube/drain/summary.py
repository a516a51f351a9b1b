"""What a drain run did, in buckets keyed by ``namespace/pod``, and its one-line message."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from automation.core.errors import GateTimeoutError, StepFailedError
from automation.core.waiting import summarize


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
        if self.requests:
            text += f"; {self.requests} API request(s)"
        text += "".join(f"; {part}" for part in self.leftovers(limit))
        if self.incomplete_nodes:
            text += f"; nodes not drained: {summarize(self.incomplete_nodes, limit)}"
        if self.missing_nodes:
            text += f"; nodes not found: {summarize(self.missing_nodes, limit)}"
        return text + "."

    def leftovers(self, limit: int = 5) -> list[str]:
        """Pods not done: blocked (by which budgets), pending, failed; one phrase each."""
        parts = []
        if self.blocked:
            budgets = sorted(set(self.blocked.values()))
            parts.append(
                f"{len(self.blocked)} blocked by "
                f"{'; '.join(budgets[:limit])}"
                f"{f' … and {len(budgets) - limit} more' if len(budgets) > limit else ''}"
                f" (pods {summarize(list(self.blocked), limit)})"
            )
        if self.pending:
            parts.append(f"{len(self.pending)} pending: {summarize(list(self.pending), limit)}")
        if self.failed:
            items = [f"{k} ({v})" for k, v in self.failed.items()]
            parts.append(f"{len(self.failed)} failed: {summarize(items, limit)}")
        return parts

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
