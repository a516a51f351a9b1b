"""The context each step receives: the stack's outputs, and what earlier steps journalled.

A hook or gate reads the stack's outputs, the details an earlier step of its phase
recorded (``ctx.recorded``) and when an earlier phase finished (``ctx.finished_at``):
the same for a dry run (the planner) and a real one (the runner).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from automation.model.context import HookContext
from automation.model.phase import Phase
from automation.run.journal import Journal
from automation.run.steps import ContextFactory, plan_steps


class StepContexts:
    """Builds each step's :class:`HookContext` over the stack's current outputs."""

    def __init__(
        self, factory: ContextFactory, journal: Journal | None, order: Sequence[Phase] = ()
    ) -> None:
        self.factory = factory
        self.journal = journal
        self.order = tuple(order)
        """The scenario's phases (``finished_at`` looks an earlier phase up by id)."""
        self.outputs: dict[str, Any] = {}
        """The stack's outputs as last read or written (hooks plan from them)."""

    def use_outputs(self, outputs: Mapping[str, Any]) -> None:
        self.outputs = dict(outputs)

    def for_phase(self, phase: Phase, *, dry_run: bool) -> HookContext:
        """The steps' context, reading earlier steps' journalled details of ``phase``."""
        context = self.factory(phase, self.outputs, dry_run)
        journal = self.journal
        if journal is None:
            return context

        def recorded(key: str) -> Mapping[str, Any] | None:
            record = journal.get(phase.id, key)
            return record.details if record is not None and record.done else None

        def finished_at(phase_id: str) -> datetime | None:
            earlier = next((p for p in self.order if p.id == phase_id), None)
            if earlier is None:
                return None
            records = [journal.get(phase_id, s.key) for s in plan_steps(earlier)]
            ends = [r.finished for r in records if r is not None and r.done and r.finished]
            if len(ends) < len(records) or not ends:
                return None
            return datetime.fromtimestamp(max(ends), UTC)

        return dataclasses.replace(context, recorded=recorded, finished_at=finished_at)
