"""What a run, a side of hooks or an action would do, said without doing it.

The planner reads the journal as it is (none yet: nothing done) and the stack's
outputs; hooks run in dry-run mode and gates are checked once, so nothing is written
and no engine runs. ``kubeshift run --dry-run``, ``hooks --dry-run`` and
``replace-nodes --dry-run`` are the planner's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from automation.core.errors import KubeshiftError
from automation.model.context import HookContext
from automation.model.phase import Hook, Phase, Step
from automation.run.contexts import StepContexts
from automation.run.journal import Journal
from automation.run.recorder import recorded_progress
from automation.run.steps import (
    ACTION,
    ContextFactory,
    PlannedStep,
    RunReport,
    StepOutcome,
    plan_steps,
    planned_step,
)
from components.contract.progress import Progress


class Planner:
    """Describes steps against the journal (read only) and the stack's outputs."""

    def __init__(
        self,
        journal: Journal | None,
        context_factory: ContextFactory,
        *,
        order: Sequence[Phase] = (),
        outputs: Mapping[str, Any] | None = None,
    ) -> None:
        self.journal = journal
        self.contexts = StepContexts(context_factory, journal, order)
        self.contexts.use_outputs(outputs or {})

    def progress(self) -> Progress:
        """The progress recorded with the stack, as its outputs say."""
        return recorded_progress(self.contexts)

    def dry_run(self, phases: Sequence[Phase]) -> RunReport:
        """Say what a run would do; hooks run in dry-run mode, nothing is written."""
        report = RunReport()
        for phase in phases:
            context: HookContext | None = None
            for step in plan_steps(phase):
                if self._done(step):
                    report.outcomes.append(StepOutcome(phase.id, step.key, "done"))
                    continue
                if step.step is None:
                    outcome = StepOutcome(phase.id, step.key, "would-run", step.summary)
                else:
                    context = context or self.contexts.for_phase(phase, dry_run=True)
                    outcome = describe(step.step, context)
                    outcome.step = step.key
                report.outcomes.append(outcome)
        return report

    def describe_steps(self, phase: Phase, where: Literal["before", "after"]) -> RunReport:
        """What running one side of ``phase``'s hooks and gates would do now."""
        side = [s for s in plan_steps(phase) if s.key.startswith(f"{where}:")]
        steps = [s for s in side if s.step is not None]
        return self._describe_all(phase, steps)

    def describe_action(self, phase: Phase, hooks: Sequence[Hook]) -> RunReport:
        """What running ``hooks`` as actions of ``phase`` (``replace-nodes``) would do."""
        return self._describe_all(phase, [planned_step(phase.id, ACTION, h) for h in hooks])

    def _describe_all(self, phase: Phase, steps: Sequence[PlannedStep]) -> RunReport:
        report = RunReport()
        context = self.contexts.for_phase(phase, dry_run=True)
        for step in steps:
            if self._done(step):
                report.outcomes.append(StepOutcome(phase.id, step.key, "done"))
                continue
            assert step.step is not None
            outcome = describe(step.step, context)
            outcome.step = step.key
            report.outcomes.append(outcome)
        return report

    def _done(self, step: PlannedStep) -> bool:
        return self.journal is not None and self.journal.is_done(step.phase, step.key)


def describe(step: Step, context: HookContext) -> StepOutcome:
    """What ``step`` would do now, or ``unknown`` with the reason it cannot tell."""
    outcome = StepOutcome(context.phase, "", "would-run")  # the caller names the step
    try:
        if isinstance(step, Hook):
            outcome.message = step.run(context).message
            return outcome
        status = step.check(context)
    except KubeshiftError as exc:
        outcome.status, outcome.message = "unknown", f"{step.summary}: could not evaluate: {exc}"
        return outcome
    if status.done:
        outcome.message = f"{step.summary}: already satisfied"
    else:
        pending = ", ".join(status.items[:5])
        outcome.message = (
            f"would wait up to {step.timeout:.0f}s for {step.summary}; pending now: {pending}"
        )
    return outcome
