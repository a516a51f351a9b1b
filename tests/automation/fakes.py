"""A recording fake at kubeshift's own engine boundary, and a small scenario to drive it."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from automation.core.waiting import DONE, Pending
from automation.engine.adapter import (
    Checkpoint,
    PendingCreate,
    PreviewOutcome,
    ResourceChange,
    UpdateOutcome,
)
from automation.model.context import HookContext
from automation.model.phase import CREATES_ONLY, Gate, Hook, HookResult, Phase, Scenario, deletes_in
from components.contract.progress import Mark, Progress, Record


class Killed(BaseException):
    """Stands in for SIGKILL: not an Exception, so nothing in the runner catches it."""


@dataclass
class FakeEngine:
    """Records every call; previews answer from ``plans``; ``kill_on`` simulates a crash."""

    plans: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    urns: list[str] = field(default_factory=list)
    kill_on: str | None = None
    calls: list[tuple[str, Any]] = field(default_factory=list)
    phase: str | None = None
    pending: list[str] = field(default_factory=list)
    secrets: dict[str, str] = field(default_factory=dict)
    plans_applied: list[Path | None] = field(default_factory=list)
    progress: Progress = field(default_factory=Progress)
    carried: Record | None = None
    dependents: list[bool] = field(default_factory=list)
    deployment: dict[str, Any] = field(default_factory=dict)

    def _maybe_die(self, what: str) -> None:
        if self.kill_on == what:
            self.kill_on = None
            raise Killed(what)

    def set_phase(self, phase: str) -> None:
        self.calls.append(("set_phase", phase))
        self._maybe_die(f"set_phase:{phase}")
        self.phase = phase

    def preview(
        self, targets: Sequence[str] = (), plan: Path | None = None, *, dependents: bool = True
    ) -> PreviewOutcome:
        self.calls.append(("preview", (self.phase, tuple(targets))))
        self.dependents.append(dependents)
        if plan is not None:
            plan.write_text(json.dumps({"phase": self.phase}))
        self._maybe_die(f"preview:{self.phase}")
        changes = tuple(
            ResourceChange(op=op, urn=f"urn:pulumi:s::p::{t}::{n}", type=t, name=n)
            for op, t, n in self.plans.get(self.phase or "", [])
        )
        summary: dict[str, int] = {}
        for change in changes:
            summary[change.op] = summary.get(change.op, 0) + 1
        return PreviewOutcome(changes=changes, summary=summary)

    def up(
        self, targets: Sequence[str] = (), plan: Path | None = None, *, dependents: bool = True
    ) -> UpdateOutcome:
        self.calls.append(("up", (self.phase, tuple(targets))))
        self.dependents.append(dependents)
        if plan is not None:
            assert json.loads(plan.read_text()) == {"phase": self.phase}, "a stale plan"
        self.plans_applied.append(plan)
        self._maybe_die(f"up:{self.phase}")
        # As the program does: carried marks and the update's own, in the outputs.
        done = Mark(phase=self.phase or "", milestone="update", by="fake")
        self.progress = self.progress.with_record(self.carried or Record()).with_marks([done])
        return UpdateOutcome(summary={"create": 1}, outputs=self.outputs())

    def carry(self, record: Record | None) -> None:
        self.carried = record

    def record(self, record: Record) -> dict[str, Any]:
        self.calls.append(("record", tuple(f"{m.milestone} {m.phase}" for m in record.marks)))
        self.progress = self.progress.with_record(record)
        return self.outputs()

    def outputs(self) -> dict[str, Any]:
        return {"phase": self.phase, "progress": self.progress.as_output()}

    def resource_urns(self) -> list[str]:
        return list(self.urns)

    def pending_operations(self) -> list[str]:
        return list(self.pending)

    def pending_creates(self) -> list[PendingCreate]:
        return [
            PendingCreate(urn=p.removeprefix("creating "), type="fake:Thing", inputs={})
            for p in self.pending
            if p.startswith("creating ")
        ]

    def take_pending_creates(self, taken: Mapping[str, str]) -> None:
        self.calls.append(("take", tuple(sorted(taken.items()))))
        if taken:
            self.pending = []  # as `pulumi stack import` drops them

    def refresh(self, *, clear_pending_creates: bool = False) -> dict[str, int]:
        self.calls.append(("refresh", clear_pending_creates))
        if clear_pending_creates:
            self.pending = [p for p in self.pending if not p.startswith("creating ")]
        return {"same": len(self.urns)}

    def cancel(self) -> None:
        self.calls.append(("cancel", None))

    def secret_config(self) -> dict[str, str]:
        return dict(self.secrets)

    def checkpoint(self) -> Checkpoint:
        return Checkpoint(dict(self.deployment), {})

    def ups(self) -> list[str]:
        return [args[0] for name, args in self.calls if name == "up"]


@dataclass
class Counter:
    """Counts hook runs per name; optionally dies inside one run."""

    runs: dict[str, int] = field(default_factory=dict)
    kill_in: str | None = None

    def hook(self, name: str, *, destructive: bool = False) -> Hook:
        def run(ctx: HookContext) -> HookResult:
            self.runs[name] = self.runs.get(name, 0) + 1
            if self.kill_in == name:
                self.kill_in = None
                raise Killed(name)
            return HookResult(changed=True, message=f"{name} done in {ctx.phase}")

        return Hook(name=name, summary=f"run {name}", run=run, destructive=destructive)


def gate(name: str, answers: Callable[[], Pending] = lambda: DONE) -> Gate:
    return Gate(name=name, summary=f"{name} holds", check=lambda _ctx: answers(), interval=0.01)


def small_scenario(counter: Counter) -> Scenario:
    """Three phases shaped like vpc-move's: network, workers (+taint), drain (destructive)."""
    return Scenario(
        id="test",
        summary="test scenario",
        phases=(
            Phase(id="network", summary="new network", changes=CREATES_ONLY),
            Phase(
                id="workers",
                summary="new workers",
                after=(gate("nodes-ready"), counter.hook("taint")),
                changes=CREATES_ONLY,
            ),
            Phase(
                id="drain",
                summary="drain old workers",
                before=(counter.hook("drain", destructive=True),),
                after=(gate("no-pods-left"),),
                changes=deletes_in("aws:autoscaling/group:Group::old-*"),
                destructive=True,
            ),
        ),
    )
