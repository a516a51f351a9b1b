"""The stack's own record of finished phases, kept in step with the local journal.

The journal says which steps finished here; the stack records milestones (before,
update, after of each phase) so a by-hand ``pulumi up``, a second operator or another
checkout sees how far the migration is (``components.contract.progress``). Milestones
the journal holds and the stack does not travel with the next preview and update, or
are recorded on their own when a run or a side of hooks ends.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime

from automation.core.errors import UserError
from automation.engine.adapter import Engine
from automation.model.phase import Phase
from automation.run.contexts import StepContexts
from automation.run.journal import Journal
from automation.run.steps import plan_steps, step_layout
from components.contract.progress import (
    Mark,
    Milestone,
    Progress,
    ProgressError,
    Record,
    Undo,
    outputs_progress,
)


def recorded_progress(contexts: StepContexts) -> Progress:
    """The progress recorded with the stack, as its outputs last said."""
    try:
        return outputs_progress(contexts.outputs)
    except ProgressError as exc:
        raise UserError(f"{exc}; the stack's record of finished phases cannot be read.") from None


class ProgressRecorder:
    """Reconciles the journal with the progress the stack records, through the engine."""

    def __init__(
        self,
        engine: Engine,
        journal: Journal,
        contexts: StepContexts,
        *,
        actor: str,
        log: logging.Logger,
    ) -> None:
        self.engine = engine
        self.journal = journal
        self.contexts = contexts
        self.actor = actor
        self.log = log
        self._carried: dict[str, Record] = {}

    def progress(self) -> Progress:
        return recorded_progress(self.contexts)

    def carry_for_preview(self, phase: Phase) -> None:
        """The marks to record with ``phase``'s preview; its update carries the same
        ones, since its plan must match the preview's outputs. A phase that takes others
        back carries their undoing instead (``Phase.undoes``)."""
        self._carried[phase.id] = self._carry(phase)
        self.engine.carry(self._carried[phase.id])

    def carry_for_update(self, phase: Phase) -> None:
        self.engine.carry(self._carried.get(phase.id) or self._carry(phase))

    def _carry(self, phase: Phase) -> Record:
        if phase.undoes:
            now = datetime.now(UTC).isoformat(timespec="seconds")
            undone = tuple(Undo(phase=p, by=self.actor, at=now) for p in phase.undoes)
            return self._with_layout([]).model_copy(update={"undone": undone})
        return self._with_layout(self.unrecorded(upto=phase))

    def record_undone(self, phase: Phase) -> None:
        """Record that ``phase`` took its phases back, once its update ran by hand
        (``kubeshift hooks --undo --after``)."""
        self._record(self._carry(phase))

    def record_side(self, phase: Phase, side: Milestone) -> None:
        """Record that one side of ``phase``'s steps ran (``kubeshift hooks``)."""
        self._record(self._with_layout([self._mark(phase.id, side)]))

    def record_remaining(self) -> None:
        """Record every milestone the journal holds and the stack does not (a run's end)."""
        self._record(self._with_layout(self.unrecorded(upto=None)))

    def unrecorded(self, upto: Phase | None) -> list[Mark]:
        """Milestones the journal holds and the stack does not, up to ``upto``'s update.

        ``upto=None``: every phase of the scenario, including the last one's after-steps.
        """
        progress = self.progress()
        marks: list[Mark] = []
        for phase in self.contexts.order:
            steps = plan_steps(phase)
            head = [s for s in steps if s.kind in {"config", "hook", "gate"} and not
                    s.key.startswith("after:")]  # fmt: skip
            began = all(self.journal.is_done(phase.id, s.key) for s in head)
            if began and not progress.has(phase.id, "before"):
                marks.append(self._mark(phase.id, "before"))
            if upto is not None and phase.id == upto.id:
                break
            finished = all(self.journal.is_done(phase.id, s.key) for s in steps)
            if finished and not progress.has(phase.id, "after"):
                marks.append(self._mark(phase.id, "after"))
        return marks

    def _mark(self, phase: str, milestone: Milestone) -> Mark:
        now = datetime.now(UTC).isoformat(timespec="seconds")
        return Mark(phase=phase, milestone=milestone, by=self.actor, at=now)

    def _with_layout(self, marks: Sequence[Mark]) -> Record:
        """``marks`` and which sides of each phase have steps (the program's check needs both)."""
        return Record(marks=tuple(marks), steps=step_layout(self.contexts.order) or None)

    def _record(self, record: Record) -> None:
        fresh_layout = record.steps is not None and record.steps != self.progress().steps
        if record.marks or record.undone or fresh_layout:
            said = (
                ", ".join(
                    [f"{m.milestone} {m.phase}" for m in record.marks]
                    + [f"{u.phase} taken back" for u in record.undone]
                )
                or "step layout"
            )
            self.log.info("recording with the stack: %s", said)
            self.contexts.use_outputs(self.engine.record(record))
