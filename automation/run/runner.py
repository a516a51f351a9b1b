"""The phase runner: walks a scenario's phases, one journaled step at a time.

Each phase becomes an ordered list of steps — ``config`` (set ``kubeshift:phase``),
the phase's ``before`` hooks and gates, ``preview`` (the blast-radius guard),
``update`` and the ``after`` hooks and gates. Before a step runs it is recorded as
started, after it as succeeded or failed, so a killed run resumes at the first
unfinished step and never repeats a finished one. The runner knows nothing about any
particular phase: everything phase-specific is data in ``automation.scenarios``.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import logging
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import JsonValue

from automation.core import interrupt
from automation.core.errors import (
    InterruptedRun,
    KubeshiftError,
    PreconditionFailed,
    RetryableError,
    StepFailedError,
    UserError,
    translate,
)
from automation.core.waiting import summarize, wait_until
from automation.engine.adapter import Engine, urn_name
from automation.model.context import HookContext
from automation.model.phase import (
    ChangePolicy,
    Gate,
    Hook,
    HookResult,
    Phase,
    PhaseProbe,
    Probing,
    Step,
)
from automation.run import guard
from automation.run.journal import Journal, StepStatus
from components.contract.progress import (
    Mark,
    Milestone,
    Progress,
    ProgressError,
    Record,
    Sides,
    outputs_progress,
)

if TYPE_CHECKING:
    from automation.kube.wakeups import Wakeups

CONFIG, PREVIEW, UPDATE = "config", "preview", "update"
ACTION = "action"  # the journal prefix of steps run outside the plan (replace-nodes)

Confirm = Callable[[str], bool]
ContextFactory = Callable[[Phase, dict[str, Any], bool], HookContext]
ScopeResolver = Callable[[Phase], tuple[str, ...]]
TargetResolver = Callable[[Phase], list[str]]
"""URNs a targeted phase's update is limited to (``automation.run.targets``)."""


@dataclass(frozen=True)
class PlannedStep:
    """One step of one phase as the runner will execute it."""

    phase: str
    key: str
    summary: str
    destructive: bool
    kind: str  # config | hook | gate | preview | update
    step: Step | None = None


def plan_steps(phase: Phase) -> list[PlannedStep]:
    """The steps of ``phase`` in execution order."""
    steps = [PlannedStep(phase.id, CONFIG, f"set kubeshift:phase to {phase.id}", False, "config")]
    steps += [_planned(phase.id, "before", s) for s in phase.before]
    steps.append(
        PlannedStep(phase.id, PREVIEW, f"preview ({phase.changes.summary})", False, "preview")
    )
    target_text = f" of {', '.join(phase.targets)}" if phase.targets else ""
    if phase.targeted:
        target_text = " of only what this phase changes (targeted)"
    steps.append(
        PlannedStep(phase.id, UPDATE, f"pulumi up{target_text}", phase.destructive, "update")
    )
    steps += [_planned(phase.id, "after", s) for s in phase.after]
    return steps


def _planned(phase_id: str, where: str, step: Step) -> PlannedStep:
    kind = "hook" if isinstance(step, Hook) else "gate"
    destructive = isinstance(step, Hook) and step.destructive
    return PlannedStep(phase_id, f"{where}:{step.name}", step.summary, destructive, kind, step)


@dataclass
class StepOutcome:
    phase: str
    step: str
    status: str  # succeeded | skipped | failed | would-run | unknown | done
    message: str = ""
    seconds: float = 0.0


@dataclass
class RunReport:
    outcomes: list[StepOutcome] = field(default_factory=list)
    note: str = ""  # a dry run says here what it planned from (the stack's outputs or not)

    def unknown(self) -> list[StepOutcome]:
        """Steps a dry run could not evaluate (their message says why)."""
        return [o for o in self.outcomes if o.status == "unknown"]

    def as_dicts(self) -> list[dict[str, Any]]:
        return [o.__dict__.copy() for o in self.outcomes]


class Runner:
    """Executes phases against an engine, journaling every step."""

    def __init__(
        self,
        engine: Engine | None,
        journal: Journal | None,
        context_factory: ContextFactory,
        *,
        confirm: Confirm | None = None,
        scope: ScopeResolver | None = None,
        targets: TargetResolver | None = None,
        log: logging.Logger | None = None,
        sleep: Callable[[float], None] = time.sleep,
        order: Sequence[Phase] = (),
        actor: str = "kubeshift run",
        trust_stack_progress: bool = True,
    ) -> None:
        self.engine = engine
        self.journal = journal
        self.context_factory = context_factory
        self.confirm = confirm
        self.scope = scope
        self.targets = targets
        self.log = log or logging.getLogger("kubeshift.runner")
        self.sleep = sleep
        self.order = tuple(order)
        self.actor = actor
        self.trust_stack_progress = trust_stack_progress
        self._outputs: dict[str, Any] = {}
        self._plans: Path | None = None
        self._carried: dict[str, Record] = {}

    # -- public ------------------------------------------------------------------------

    def pending_destructive(self, phases: Sequence[Phase]) -> list[PlannedStep]:
        """Destructive steps in ``phases`` the journal does not record as finished."""
        return [
            s
            for phase in phases
            for s in plan_steps(phase)
            if s.destructive and not (self.journal and self.journal.is_done(s.phase, s.key))
        ]

    def run(self, phases: Sequence[Phase]) -> RunReport:
        """Run ``phases`` in order, resuming after the last finished step."""
        if self.engine is None or self.journal is None:
            raise UserError("A run needs a Pulumi engine and a journal; use dry_run for a plan.")
        if self.confirm is None and self.pending_destructive(phases):
            steps = ", ".join(f"{s.phase}/{s.key}" for s in self.pending_destructive(phases)[:5])
            raise UserError(
                f"This run includes destructive steps ({steps}) and no terminal to confirm "
                "them; pass --yes to proceed non-interactively."
            )
        report = RunReport()
        self._outputs = self.engine.outputs()
        # Update plans live only as long as the run: preview runs again before any
        # update a later run resumes, and plan files hold the resources' inputs.
        self.order = self.order or tuple(phases)
        with tempfile.TemporaryDirectory(prefix="kubeshift-plans-") as plans:
            self._plans = Path(plans)
            for phase in phases:
                self._run_phase(phase, report)
        self._record(self._with_layout(self._unrecorded(upto=None)))
        return report

    def run_steps(self, phase: Phase, where: Literal["before", "after"]) -> RunReport:
        """Run one side of ``phase``'s hooks and gates, journalled, then record it."""
        if self.engine is None or self.journal is None:
            raise UserError("Hooks need a Pulumi engine and a journal; use --dry-run for a plan.")
        steps = [s for s in plan_steps(phase) if s.key.startswith(f"{where}:")]
        report = self._run_confirmed(phase, steps)
        self._record(self._with_layout([self._mark(phase.id, where)]))
        return report

    def run_action(self, phase: Phase, hooks: Sequence[Hook]) -> RunReport:
        """Run hooks outside the phase's plan (``kubeshift replace-nodes``), each one
        journalled under ``phase`` as ``action:<name>`` and skipped once done; the
        phase's own progress is not touched."""
        if self.engine is None or self.journal is None:
            raise UserError("Actions need a Pulumi engine and a journal; use --dry-run.")
        return self._run_confirmed(phase, [_planned(phase.id, ACTION, h) for h in hooks])

    def _run_confirmed(self, phase: Phase, steps: Sequence[PlannedStep]) -> RunReport:
        """Run ``steps``, refusing first when one left to do is destructive and nobody
        can confirm it."""
        assert self.journal is not None
        pending = [s for s in steps if s.destructive and not self.journal.is_done(phase.id, s.key)]
        if self.confirm is None and pending:
            raise UserError(
                f"{phase.id}/{pending[0].key} is destructive and there is no terminal to "
                "confirm it; pass --yes to proceed non-interactively."
            )
        report = RunReport()
        self._run_steps(phase, steps, report)
        return report

    def describe_action(self, phase: Phase, hooks: Sequence[Hook]) -> RunReport:
        """What ``run_action`` would do."""
        report = RunReport()
        context = self._context(phase, dry_run=True)
        for hook in hooks:
            planned = _planned(phase.id, ACTION, hook)
            if self.journal and self.journal.is_done(phase.id, planned.key):
                report.outcomes.append(StepOutcome(phase.id, planned.key, "done"))
                continue
            outcome = self._describe(hook, context)
            outcome.step = planned.key
            report.outcomes.append(outcome)
        return report

    def describe_steps(self, phase: Phase, where: Literal["before", "after"]) -> RunReport:
        """What ``run_steps`` would do, computed from the stack's current outputs."""
        report = RunReport()
        context = self._context(phase, dry_run=True)
        for planned in plan_steps(phase):
            if not planned.key.startswith(f"{where}:") or planned.step is None:
                continue
            if self.journal and self.journal.is_done(phase.id, planned.key):
                report.outcomes.append(StepOutcome(phase.id, planned.key, "done"))
                continue
            outcome = self._describe(planned.step, context)
            outcome.step = planned.key
            report.outcomes.append(outcome)
        return report

    def outputs_from_stack(self) -> None:
        """Read the stack's current outputs (hooks and dry-runs plan from them)."""
        if self.engine is not None:
            self._outputs = self.engine.outputs()

    def progress(self) -> Progress:
        """The progress recorded with the stack, as its outputs last said."""
        try:
            return outputs_progress(self._outputs)
        except ProgressError as exc:
            raise UserError(
                f"{exc}; the stack's record of finished phases cannot be read."
            ) from None

    def dry_run(self, phases: Sequence[Phase]) -> RunReport:
        """Say what a run would do; hooks run in dry-run mode, nothing is written."""
        report = RunReport()
        for phase in phases:
            context: HookContext | None = None
            for planned in plan_steps(phase):
                if self.journal and self.journal.is_done(phase.id, planned.key):
                    report.outcomes.append(StepOutcome(phase.id, planned.key, "done"))
                    continue
                if planned.step is None:
                    outcome = StepOutcome(phase.id, planned.key, "would-run", planned.summary)
                else:
                    context = context or self._context(phase, dry_run=True)
                    outcome = self._describe(planned.step, context)
                    outcome.step = planned.key
                report.outcomes.append(outcome)
        return report

    def _context(self, phase: Phase, *, dry_run: bool) -> HookContext:
        """The steps' context, reading earlier steps' journalled details of ``phase``."""
        context = self.context_factory(phase, self._outputs, dry_run)
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

    def use_outputs(self, outputs: Mapping[str, Any]) -> None:
        """Plan from these stack outputs (a dry run reads them without an engine run)."""
        self._outputs = dict(outputs)

    # -- phases and steps --------------------------------------------------------------

    def _run_phase(self, phase: Phase, report: RunReport) -> None:
        assert self.journal is not None
        steps = plan_steps(phase)
        left = [s for s in steps if not self.journal.is_done(phase.id, s.key)]
        recorded = self.progress().finished(phase.id)
        if left and recorded is not None and self.trust_stack_progress:
            # Finished elsewhere: another checkout, or hooks by command and an update by hand.
            report.outcomes += [
                StepOutcome(phase.id, s.key, "skipped", f"recorded with the stack by {recorded.by}")
                for s in left
            ]
            self.log.info("%s skipped: the stack records it finished (%s)", phase.id, recorded.by)
            return
        self._run_steps(phase, steps, report)

    def _run_steps(self, phase: Phase, steps: Sequence[PlannedStep], report: RunReport) -> None:
        """Run ``steps`` — inside the phase's probe when it has one and work is left."""
        probing = self._start_probe(phase, steps)
        if probing is None:
            self._run_each(phase, steps, report)
            return
        assert self.journal is not None and phase.probe is not None
        key = phase.probe.key
        earlier = self.journal.get(phase.id, key)
        earlier_details = earlier.details if earlier is not None and earlier.finished else None
        self.journal.start(phase.id, key)
        try:
            with probing:
                self._run_each(phase, steps, report)
        except BaseException:
            seen = probing.outcome(earlier_details)
            self.journal.interrupt_probe(phase.id, key, seen.message, seen.details)
            raise
        outcome = probing.outcome(earlier_details)
        if outcome.failure is None:
            self.journal.finish(phase.id, key, outcome.message, details=json_safe(outcome.details))
            self.log.info("%s/%s: %s", phase.id, key, outcome.message)
            return
        self.journal.fail(phase.id, key, outcome.failure, details=json_safe(outcome.details))
        self.log.error("%s/%s failed: %s", phase.id, key, outcome.failure)
        raise PreconditionFailed(
            f"{phase.id} finished, but {outcome.failure} Find out why before going on; "
            "the next run carries on after this phase."
        )

    def _start_probe(self, phase: Phase, steps: Sequence[PlannedStep]) -> Probing | None:
        """The phase's probe, started only when some of ``steps`` are left to run."""
        assert self.journal is not None
        if phase.probe is None:
            return None
        if all(self.journal.is_done(phase.id, s.key) for s in steps):
            self._close_orphaned_probe(phase, phase.probe)
            return None
        try:
            return phase.probe.start(self._context(phase, dry_run=False))
        except KubeshiftError:
            raise
        except Exception as exc:
            mapped = translate(exc, f"start {phase.id}'s {phase.probe.name} probe")
            raise mapped or StepFailedError(
                f"{phase.id}'s {phase.probe.name} probe did not start: {type(exc).__name__}: {exc}"
            ) from exc

    def _close_orphaned_probe(self, phase: Phase, probe: PhaseProbe) -> None:
        """A probe whose process died after the phase's last step (none reopens it)."""
        assert self.journal is not None
        record = self.journal.get(phase.id, probe.key)
        if record is not None and record.status is StepStatus.RUNNING:
            self.journal.interrupt_probe(
                phase.id, probe.key, "its process ended before the probe reported", {}
            )

    def _run_each(self, phase: Phase, steps: Sequence[PlannedStep], report: RunReport) -> None:
        assert self.journal is not None
        context: HookContext | None = None
        for planned in steps:
            # config and preview are cheap and must hold right before the update: they
            # run again on resume until the update itself has finished.
            update_done = self.journal.is_done(phase.id, UPDATE)
            always = planned.key in {CONFIG, PREVIEW} and not update_done
            if self.journal.is_done(phase.id, planned.key) and not always:
                report.outcomes.append(
                    StepOutcome(phase.id, planned.key, "skipped", "already done")
                )
                self.log.info("%s/%s skipped: finished in an earlier run", phase.id, planned.key)
                continue
            if interrupt.stop_requested():
                self.journal.stop_before(phase.id, planned.key)
                raise InterruptedRun(_stopped_sentence(self.journal.data.stack, phase, planned))
            if planned.destructive:
                self._confirm(planned)
            if planned.step is not None and context is None:
                context = self._context(phase, dry_run=False)
            started = time.monotonic()
            self.journal.start(phase.id, planned.key, destructive=planned.destructive)
            self.log.info("%s/%s started: %s", phase.id, planned.key, planned.summary)
            try:
                result = self._execute(phase, planned, context)
                message = self.journal.redact(result.message)
            except KubeshiftError as exc:
                if interrupt.stop_requested():
                    self._interrupted(phase, planned, exc)
                self.journal.fail(phase.id, planned.key, str(exc))
                self.log.error(
                    "%s/%s failed: %s", phase.id, planned.key, self.journal.redact(str(exc))
                )
                raise
            except KeyboardInterrupt:  # a second Ctrl-C: stop at once, say where
                self.journal.interrupt(phase.id, planned.key, "stopped at once on Ctrl-C")
                raise
            except Exception as exc:
                if interrupt.stop_requested():
                    self._interrupted(phase, planned, exc)
                mapped = translate(exc, f"run step {phase.id}/{planned.key}")
                text = str(mapped) if mapped else f"{type(exc).__name__}: {exc}"
                self.journal.fail(phase.id, planned.key, text)
                self.log.error("%s/%s failed: %s", phase.id, planned.key, self.journal.redact(text))
                raise mapped or StepFailedError(
                    f"Step {phase.id}/{planned.key} failed: {text}"
                ) from exc
            self.journal.finish(
                phase.id,
                planned.key,
                message,
                changed=result.changed,
                details=json_safe(result.details),
            )
            self.log.info("%s/%s succeeded: %s", phase.id, planned.key, message)
            report.outcomes.append(
                StepOutcome(phase.id, planned.key, "succeeded", message, time.monotonic() - started)
            )
            if planned.key == UPDATE and context is not None:
                context = dataclasses.replace(context, outputs=self._outputs)

    def _interrupted(self, phase: Phase, planned: PlannedStep, cause: BaseException) -> None:
        """A step that ended because of the Ctrl-C (a wait, pulumi's own graceful stop)."""
        assert self.journal is not None
        self.journal.interrupt(phase.id, planned.key, f"stopped on Ctrl-C: {cause}")
        self.log.warning("%s/%s stopped on Ctrl-C", phase.id, planned.key)
        stack = self.journal.data.stack
        raise InterruptedRun(_stopped_sentence(stack, phase, planned, during=True)) from cause

    def _confirm(self, planned: PlannedStep) -> None:
        assert self.confirm is not None
        if not self.confirm(f"{planned.phase}/{planned.key}: {planned.summary}. Proceed?"):
            raise UserError(
                f"Step {planned.phase}/{planned.key} was not confirmed; nothing changed."
            )

    def _execute(
        self, phase: Phase, planned: PlannedStep, context: HookContext | None
    ) -> HookResult:
        assert self.engine is not None
        if planned.kind == "config":
            self.engine.set_phase(phase.id)
            return HookResult(True, f"kubeshift:phase = {phase.id}")
        if planned.kind == "preview":
            # The same marks go with the update: its plan must match the preview's outputs.
            self._carried[phase.id] = self._with_layout(self._unrecorded(upto=phase))
            self.engine.carry(self._carried[phase.id])
            outcome = self.engine.preview(self._targets(phase), plan=self._plan_file(phase))
            guard.check(phase.id, outcome, effective_policy(phase, self.scope))
            changed = [f"{c.op} {c.name}" for c in outcome.changed()]
            return HookResult(
                False,
                _summary_text(outcome.summary),
                {"guard": "accepted", "summary": dict(outcome.summary), "changes": changed},
            )
        if planned.kind == "update":
            self._refuse_pending_operations(phase)
            # The update applies exactly the plan the guard accepted, or stops at the
            # first step that departs from it (drift, an edited config, a provider).
            plan = self._plan_file(phase)
            carried = self._carried.get(phase.id)
            self.engine.carry(carried or self._with_layout(self._unrecorded(upto=phase)))
            result = self.engine.up(
                self._targets(phase), plan=plan if plan and plan.is_file() else None
            )
            self._outputs = result.outputs
            changed_any = any(n for op, n in result.summary.items() if op != "same")
            return HookResult(
                changed_any, _summary_text(result.summary), {"summary": dict(result.summary)}
            )
        assert context is not None and planned.step is not None
        if isinstance(planned.step, Hook):
            return self._run_hook(planned.step, context)
        return HookResult(False, self._run_gate(planned.step, context))

    # -- progress recorded with the stack (components.contract.progress) ------------------------

    def _mark(self, phase: str, milestone: Milestone) -> Mark:
        now = datetime.now(UTC).isoformat(timespec="seconds")
        return Mark(phase=phase, milestone=milestone, by=self.actor, at=now)

    def _unrecorded(self, upto: Phase | None) -> list[Mark]:
        """Milestones the journal holds and the stack does not, up to ``upto``'s update.

        ``upto=None``: every phase of the scenario, including the last one's after-steps.
        """
        assert self.journal is not None
        progress = self.progress()
        marks: list[Mark] = []
        for phase in self.order:
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

    def _with_layout(self, marks: Sequence[Mark]) -> Record:
        """``marks`` and which sides of each phase have steps (the program's check needs both)."""
        return Record(marks=tuple(marks), steps=step_layout(self.order) or None)

    def _record(self, record: Record) -> None:
        fresh_layout = record.steps is not None and record.steps != self.progress().steps
        if (record.marks or fresh_layout) and self.engine is not None:
            said = ", ".join(f"{m.milestone} {m.phase}" for m in record.marks) or "step layout"
            self.log.info("recording with the stack: %s", said)
            self._outputs = self.engine.record(record)

    def _plan_file(self, phase: Phase) -> Path | None:
        return self._plans / f"{phase.id}.plan.json" if self._plans else None

    def _refuse_pending_operations(self, phase: Phase) -> None:
        """After an interrupted update, stop if the engine kept half-done operations.

        A create the kill interrupted may have left a real resource the state does not
        know; updating again could duplicate it. The operator checks, then clears them.
        """
        assert self.journal is not None and self.engine is not None
        record = self.journal.get(phase.id, UPDATE)
        if record is None or record.attempts <= 1:
            return
        pending = self.engine.pending_operations()
        if pending:
            stack = self.journal.data.stack
            raise PreconditionFailed(
                f"Phase '{phase.id}': the interrupted update left {len(pending)} pending "
                f"operation(s) ({summarize(pending, 3)}); run `kubeshift --stack {stack} "
                "recover` to see them, refresh the state and clear them (it also removes "
                "the killed update's stale lock), then run again."
            )

    def _run_hook(self, hook: Hook, context: HookContext) -> HookResult:
        """Run ``hook``, retrying temporary errors — foreign ones translated first, so a
        dropped connection is retried like kubeshift's own — after their own delay."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return hook.run(context)
            except RetryableError as exc:
                temporary = exc
            except KubeshiftError:
                raise
            except Exception as exc:
                mapped = translate(exc, f"run hook {hook.name}")
                if not isinstance(mapped, RetryableError):
                    raise
                temporary = mapped
            if attempt > hook.retries:
                raise temporary
            delay = temporary.delay if temporary.delay is not None else hook.retry_delay
            self.log.warning("hook %s: %s; will retry in %.0fs", hook.name, temporary, delay)
            self.sleep(delay)

    def _run_gate(self, gate: Gate, context: HookContext) -> str:
        with self._wakeups(gate, context) as wakeups:
            status = wait_until(
                gate.summary,
                lambda: gate.check(context),
                timeout=gate.timeout,
                interval=gate.interval,
                on_progress=context.progress.on_wait,
                sleep=wakeups.sleep if wakeups.watching else self.sleep,
            )
        return status.detail or f"{gate.summary}: satisfied"

    def _wakeups(self, gate: Gate, context: HookContext) -> Wakeups:
        """Watches of what ``gate`` reads (none in a dry run, or without the cluster)."""
        from automation.kube.wakeups import Wakeups

        watched = []
        if not context.dry_run:
            for watch in gate.wakes_on:
                try:
                    watched.append((context.clients.kube(watch.cluster), watch.resource))
                except Exception as exc:  # the check itself will say why
                    self.log.debug("gate %s polls: %s", gate.name, exc)
        return Wakeups(watched)

    def _describe(self, step: Step, context: HookContext) -> StepOutcome:
        """What ``step`` would do now, or ``unknown`` with the reason it cannot tell."""
        outcome = StepOutcome(context.phase, "", "would-run")  # the caller names the step
        try:
            if isinstance(step, Hook):
                outcome.message = step.run(context).message
                return outcome
            status = step.check(context)
        except KubeshiftError as exc:
            outcome.status, outcome.message = (
                "unknown",
                f"{step.summary}: could not evaluate: {exc}",
            )
            return outcome
        if status.done:
            outcome.message = f"{step.summary}: already satisfied"
        else:
            pending = ", ".join(status.items[:5])
            outcome.message = (
                f"would wait up to {step.timeout:.0f}s for {step.summary}; pending now: {pending}"
            )
        return outcome

    def _targets(self, phase: Phase) -> list[str]:
        assert self.engine is not None
        if phase.targeted and self.targets is not None:
            return self.targets(phase)
        return resolve_targets(self.engine, phase)


def step_layout(phases: Sequence[Phase]) -> Sides:
    """Per phase, the sides (before/after its update) that have hooks or gates."""
    layout: Sides = {}
    for phase in phases:
        sides: list[Milestone] = []
        if phase.before:
            sides.append("before")
        if phase.after:
            sides.append("after")
        layout[phase.id] = tuple(sides)
    return layout


def effective_policy(phase: Phase, scope: ScopeResolver | None) -> ChangePolicy:
    """The phase's change policy, widened by the program's own scope when it asks for it."""
    if phase.changes.program_scope and scope is not None:
        return phase.changes.widened(scope(phase))
    return phase.changes


def resolve_targets(engine: Engine, phase: Phase) -> list[str]:
    """URNs of the resources ``phase.targets`` names (fnmatch on logical names); [] = all."""
    if not phase.targets:
        return []
    urns = engine.resource_urns()
    chosen: set[str] = set()
    for pattern in phase.targets:
        matched = [u for u in urns if fnmatch.fnmatchcase(urn_name(u), pattern)]
        if not matched:
            raise PreconditionFailed(
                f"Phase '{phase.id}' targets '{pattern}', which matches no resource in the stack."
            )
        chosen.update(matched)
    return sorted(chosen)


def _stopped_sentence(stack: str, phase: Phase, planned: PlannedStep, during: bool = False) -> str:
    where = "during" if during else "before"
    return (
        f"Stopped on Ctrl-C {where} {phase.id}/{planned.key}; the journal says so and "
        f"`kubeshift --stack {stack} run` continues from there."
    )


def json_safe(details: Mapping[str, object]) -> dict[str, JsonValue]:
    """``details`` as plain JSON (dataclasses and other objects become their text)."""
    loaded: dict[str, JsonValue] = json.loads(json.dumps(dict(details), default=str))
    return loaded


def _summary_text(summary: dict[str, int]) -> str:
    parts = [f"{op} {n}" for op, n in sorted(summary.items()) if n and op != "same"]
    return ", ".join(parts) if parts else "no changes"
