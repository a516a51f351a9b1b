"""The phase runner: walks a scenario's phases, one journaled step at a time.

Before a step runs it is recorded as started, after it as succeeded or failed, so a
killed run resumes at the first unfinished step and never repeats a finished one. The
runner knows nothing about any particular phase: everything phase-specific is data in
``automation.scenarios``. Its steps are planned in ``run.steps``; what a run would do
is the planner's (``run.planner``); the stack's record of progress is kept by
``run.recorder``.
"""

from __future__ import annotations

import dataclasses
import logging
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

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
from automation.engine.adapter import Engine, PreviewOutcome
from automation.model.context import HookContext
from automation.model.phase import Gate, Hook, HookResult, Phase, PhaseProbe, Probing
from automation.run import guard
from automation.run.contexts import StepContexts
from automation.run.journal import Journal, StepStatus
from automation.run.recorder import ProgressRecorder
from automation.run.scope import EngineScope, PreviewScope
from automation.run.scope import choose as choose_scope
from automation.run.steps import (
    ACTION,
    CONFIG,
    PREVIEW,
    UPDATE,
    Confirm,
    ContextFactory,
    PlannedStep,
    RunReport,
    ScopeResolver,
    StepOutcome,
    TargetResolver,
    effective_policy,
    json_safe,
    plan_steps,
    planned_step,
    resolve_targets,
)
from components.contract.progress import Progress

if TYPE_CHECKING:
    from automation.kube.wakeups import Wakeups
    from automation.review.checkpoint import Verdict

Judge = Callable[[Phase], "Verdict"]
"""What a phase's program would change on the stack, told without the engine."""


class Runner:
    """Executes phases against an engine, journaling every step and keeping the stack's
    record of progress in step with the journal."""

    def __init__(
        self,
        engine: Engine,
        journal: Journal,
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
        judge: Judge | None = None,
        preview_scope: PreviewScope = "full",
        refuse: Callable[[Phase], None] | None = None,
    ) -> None:
        self.engine = engine
        self.journal = journal
        self.confirm = confirm
        self.scope = scope
        self.targets = targets
        self.log = log or logging.getLogger("kubeshift.runner")
        self.sleep = sleep
        self.trust_stack_progress = trust_stack_progress
        self.contexts = StepContexts(context_factory, journal, order)
        self.recorder = ProgressRecorder(engine, journal, self.contexts, actor=actor, log=self.log)
        self.judge = judge
        self.preview_scope = preview_scope
        self.refuse = refuse
        """Raises, before a phase with steps left starts, when it must not (what the tool
        that built the cluster still manages: ``automation.run.released``)."""
        self._plans: Path | None = None
        self._scopes: dict[str, EngineScope] = {}  # the scope each phase's preview chose

    # -- public ------------------------------------------------------------------------

    def pending_destructive(self, phases: Sequence[Phase]) -> list[PlannedStep]:
        """Destructive steps in ``phases`` the journal does not record as finished."""
        return [
            s
            for phase in phases
            for s in plan_steps(phase)
            if s.destructive and not self.journal.is_done(s.phase, s.key)
        ]

    def run(self, phases: Sequence[Phase]) -> RunReport:
        """Run ``phases`` in order, resuming after the last finished step."""
        if self.confirm is None and self.pending_destructive(phases):
            steps = ", ".join(f"{s.phase}/{s.key}" for s in self.pending_destructive(phases)[:5])
            raise UserError(
                f"This run includes destructive steps ({steps}) and no terminal to confirm "
                "them; pass --yes to proceed non-interactively."
            )
        report = RunReport()
        self.contexts.use_outputs(self.engine.outputs())
        # Update plans live only as long as the run: preview runs again before any
        # update a later run resumes, and plan files hold the resources' inputs.
        self.contexts.order = self.contexts.order or tuple(phases)
        with tempfile.TemporaryDirectory(prefix="kubeshift-plans-") as plans:
            self._plans = Path(plans)
            for phase in phases:
                self._run_phase(phase, report)
        self.recorder.record_remaining()
        return report

    def run_steps(self, phase: Phase, where: Literal["before", "after"]) -> RunReport:
        """Run one side of ``phase``'s hooks and gates, journalled, then record it."""
        report = self._run_confirmed(phase, _side(phase, where))
        self.recorder.record_side(phase, where)
        return report

    def run_undo_steps(self, phase: Phase, where: Literal["before", "after"]) -> RunReport:
        """Run one side of an undo phase's steps around an update by hand; after its
        after-steps, record the phases it takes back as undone, with the stack and in
        the journal, as ``kubeshift back``'s update does."""
        report = self._run_confirmed(phase, _side(phase, where))
        if where == "after":
            self.recorder.record_undone(phase)
            self.journal.undo(phase.undoes, f"taken back by {self.recorder.actor}")
        return report

    def run_action(self, phase: Phase, hooks: Sequence[Hook]) -> RunReport:
        """Run hooks outside the phase's plan (``kubeshift replace-nodes``), each one
        journalled under ``phase`` as ``action:<name>`` and skipped once done; the
        phase's own progress is not touched."""
        return self._run_confirmed(phase, [planned_step(phase.id, ACTION, h) for h in hooks])

    def _run_confirmed(self, phase: Phase, steps: Sequence[PlannedStep]) -> RunReport:
        """Run ``steps``, refusing first when one left to do is destructive and nobody
        can confirm it."""
        pending = [s for s in steps if s.destructive and not self.journal.is_done(phase.id, s.key)]
        if self.confirm is None and pending:
            raise UserError(
                f"{phase.id}/{pending[0].key} is destructive and there is no terminal to "
                "confirm it; pass --yes to proceed non-interactively."
            )
        report = RunReport()
        self._run_steps(phase, steps, report)
        return report

    def outputs_from_stack(self) -> None:
        """Read the stack's current outputs (hooks plan from them)."""
        self.contexts.use_outputs(self.engine.outputs())

    def progress(self) -> Progress:
        """The progress recorded with the stack, as its outputs last said."""
        return self.recorder.progress()

    # -- phases and steps --------------------------------------------------------------

    def _run_phase(self, phase: Phase, report: RunReport) -> None:
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
        if left and self.refuse is not None:
            self.refuse(phase)
        said = phase.summary if left else "done in an earlier run"
        self.log.info("%s: %s", self._numbered(phase), said)
        began, before = time.monotonic(), len(report.outcomes)
        self._run_steps(phase, steps, report)
        if left:
            ran = [o for o in report.outcomes[before:] if o.status == "succeeded"]
            self.log.info(
                "%s done in %.0fs: %d steps run, %d done before",
                phase.id, time.monotonic() - began, len(ran), len(steps) - len(left),
            )  # fmt: skip

    def _numbered(self, phase: Phase) -> str:
        """``phase`` with its place in the scenario (``dns-cutover, phase 6 of 13``)."""
        ids = [p.id for p in self.contexts.order]
        where = f", phase {ids.index(phase.id) + 1} of {len(ids)}" if phase.id in ids else ""
        return f"{phase.id}{where}"

    def _run_steps(self, phase: Phase, steps: Sequence[PlannedStep], report: RunReport) -> None:
        """Run ``steps`` — inside the phase's probe when it has one and work is left."""
        probing = self._start_probe(phase, steps)
        if probing is None:
            self._run_each(phase, steps, report)
            return
        assert phase.probe is not None
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
        if phase.probe is None:
            return None
        if all(self.journal.is_done(phase.id, s.key) for s in steps):
            self._close_orphaned_probe(phase, phase.probe)
            return None
        try:
            return phase.probe.start(self.contexts.for_phase(phase, dry_run=False))
        except KubeshiftError:
            raise
        except Exception as exc:
            mapped = translate(exc, f"start {phase.id}'s {phase.probe.name} probe")
            raise mapped or StepFailedError(
                f"{phase.id}'s {phase.probe.name} probe did not start: {type(exc).__name__}: {exc}"
            ) from exc

    def _close_orphaned_probe(self, phase: Phase, probe: PhaseProbe) -> None:
        """A probe whose process died after the phase's last step (none reopens it)."""
        record = self.journal.get(phase.id, probe.key)
        if record is not None and record.status is StepStatus.RUNNING:
            self.journal.interrupt_probe(
                phase.id, probe.key, "its process ended before the probe reported", {}
            )

    def _run_each(self, phase: Phase, steps: Sequence[PlannedStep], report: RunReport) -> None:
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
                self.log.info(
                    "%s/%s skipped: finished in an earlier run", phase.id, planned.key,
                    extra=_event("step-skipped", phase, planned),
                )  # fmt: skip
                continue
            if interrupt.stop_requested():
                self.journal.stop_before(phase.id, planned.key)
                raise InterruptedRun(_stopped_sentence(self.journal.data.stack, phase, planned))
            if planned.destructive:
                self._confirm(phase, planned)
            if planned.step is not None and context is None:
                context = self.contexts.for_phase(phase, dry_run=False)
            started = time.monotonic()
            self.journal.start(phase.id, planned.key, destructive=planned.destructive)
            self.log.info(
                "%s/%s started: %s", phase.id, planned.key, planned.summary,
                extra=_event("step-started", phase, planned),
            )  # fmt: skip
            try:
                result = self._execute(phase, planned, context)
                message = self.journal.redact(result.message)
            except KubeshiftError as exc:
                if interrupt.stop_requested():
                    self._interrupted(phase, planned, exc)
                self.journal.fail(phase.id, planned.key, str(exc))
                self.log.error(
                    "%s/%s failed: %s", phase.id, planned.key, self.journal.redact(str(exc)),
                    extra=_event("step-failed", phase, planned),
                )  # fmt: skip
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
                self.log.error(
                    "%s/%s failed: %s", phase.id, planned.key, self.journal.redact(text),
                    extra=_event("step-failed", phase, planned),
                )  # fmt: skip
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
            elapsed = time.monotonic() - started
            self.log.info(
                "%s/%s succeeded in %.1fs: %s", phase.id, planned.key, elapsed, message,
                extra={**_event("step-succeeded", phase, planned), "seconds": round(elapsed, 1)},
            )  # fmt: skip
            report.outcomes.append(
                StepOutcome(phase.id, planned.key, "succeeded", message, elapsed)
            )
            if planned.key == UPDATE and context is not None:
                context = dataclasses.replace(context, outputs=self.contexts.outputs)

    def _interrupted(self, phase: Phase, planned: PlannedStep, cause: BaseException) -> None:
        """A step that ended because of the Ctrl-C (a wait, pulumi's own graceful stop)."""
        self.journal.interrupt(phase.id, planned.key, f"stopped on Ctrl-C: {cause}")
        self.log.warning(
            "%s/%s stopped on Ctrl-C", phase.id, planned.key,
            extra=_event("step-stopped", phase, planned),
        )  # fmt: skip
        stack = self.journal.data.stack
        raise InterruptedRun(_stopped_sentence(stack, phase, planned, during=True)) from cause

    def _confirm(self, phase: Phase, planned: PlannedStep) -> None:
        """Ask before a destructive step; a point of no return says so, and why."""
        assert self.confirm is not None
        no_return = phase.point_of_no_return
        crossing = f" {phase.id} is a point of no return: {no_return.why}." if no_return else ""
        question = f"{planned.phase}/{planned.key}: {planned.summary}.{crossing} Proceed?"
        if not self.confirm(question):
            raise UserError(
                f"Step {planned.phase}/{planned.key} was not confirmed; nothing changed."
            )

    def _execute(
        self, phase: Phase, planned: PlannedStep, context: HookContext | None
    ) -> HookResult:
        if planned.kind == "config":
            self.engine.set_phase(phase.applies)
            return HookResult(True, f"kubeshift:phase = {phase.applies}")
        if planned.kind == "preview":
            self.recorder.carry_for_preview(phase)
            scope = self._choose_scope(phase)
            outcome = self._preview(phase, scope)
            scope.check(phase.id, outcome)
            guard.check(phase.id, outcome, effective_policy(phase, self.scope))
            changed = [f"{c.op} {c.name}" for c in outcome.changed()]
            details = {
                "guard": "accepted",
                "summary": dict(outcome.summary),
                "changes": changed,
                "seconds": outcome.seconds,
            }
            return HookResult(
                False, _summary_text(outcome.summary) + scope.note(), details | scope.details()
            )
        if planned.kind == "update":
            self._refuse_pending_operations(phase)
            # The update applies exactly the plan the guard accepted, or stops at the
            # first step that departs from it (drift, an edited config, a provider).
            plan = self._plan_file(phase)
            self.recorder.carry_for_update(phase)
            chosen = self._scopes.get(phase.id) or self._choose_scope(phase, judge=False)
            result = self.engine.up(
                chosen.targets,
                plan=plan if plan and plan.is_file() else None,
                dependents=chosen.dependents,
            )
            self.contexts.use_outputs(result.outputs)
            if phase.undoes:  # the stack no longer records them: neither does the journal
                self.journal.undo(phase.undoes, f"taken back by {self.recorder.actor}")
            changed_any = any(n for op, n in result.summary.items() if op != "same")
            details = {"summary": dict(result.summary), "seconds": result.seconds}
            return HookResult(changed_any, _summary_text(result.summary), details)
        assert context is not None and planned.step is not None
        if isinstance(planned.step, Hook):
            return self._run_hook(planned.step, context)
        return HookResult(False, self._run_gate(planned.step, context))

    def _choose_scope(self, phase: Phase, *, judge: bool = True) -> EngineScope:
        """What ``phase``'s preview, and then its update, target (``run.scope``): judged
        against the checkpoint again at every preview, a resumed one included."""
        verdict, judging = None, None
        if judge and self.judge is not None and self.preview_scope != "full":
            began = time.monotonic()
            verdict = self.judge(phase)
            judging = round(time.monotonic() - began, 2)
            self.log.info("%s: the checkpoint: %s", phase.id, verdict.summary())
        chosen = choose_scope(phase, self.preview_scope, verdict, lambda: self._targets(phase))
        chosen = dataclasses.replace(chosen, judging=judging)
        self._scopes[phase.id] = chosen
        return chosen

    def _preview(self, phase: Phase, scope: EngineScope) -> PreviewOutcome:
        """The engine's preview in ``scope``; none where the judgement found nothing to
        change (and no plan: an earlier attempt's must not bind the update)."""
        plan = self._plan_file(phase)
        if scope.previews:
            return self.engine.preview(scope.targets, plan=plan, dependents=scope.dependents)
        if plan is not None:
            plan.unlink(missing_ok=True)
        return PreviewOutcome(changes=())

    def _plan_file(self, phase: Phase) -> Path | None:
        return self._plans / f"{phase.id}.plan.json" if self._plans else None

    def _refuse_pending_operations(self, phase: Phase) -> None:
        """After an interrupted update, stop if the engine kept half-done operations.

        A create the kill interrupted may have left a real resource the state does not
        know; updating again could duplicate it. The operator checks, then clears them.
        """
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

    def _targets(self, phase: Phase) -> list[str]:
        if phase.targeted and self.targets is not None:
            return self.targets(phase)
        return resolve_targets(self.engine, phase)


def _stopped_sentence(stack: str, phase: Phase, planned: PlannedStep, during: bool = False) -> str:
    where = "during" if during else "before"
    return (
        f"Stopped on Ctrl-C {where} {phase.id}/{planned.key}; the journal says so and "
        f"`kubeshift --stack {stack} run` continues from there."
    )


def _summary_text(summary: dict[str, int]) -> str:
    parts = [f"{op} {n}" for op, n in sorted(summary.items()) if n and op != "same"]
    return ", ".join(parts) if parts else "no changes"


def _event(event: str, phase: Phase, planned: PlannedStep) -> dict[str, str]:
    """The fields a ``--json`` log line of a step carries (``core.logs.EVENT_FIELDS``)."""
    return {"event": event, "phase": phase.id, "step": planned.key}


def _side(phase: Phase, where: Literal["before", "after"]) -> list[PlannedStep]:
    """The planned steps on one side of ``phase``'s update."""
    return [s for s in plan_steps(phase) if s.key.startswith(f"{where}:")]
