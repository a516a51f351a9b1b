"""``kubeshift back --to PHASE``: take a stack back to an earlier phase, phase by phase.

The walk (``automation.run.going_back``) is decided before the engine changes
anything: a point of no return or a way back kubeshift does not run refuses it in one
sentence. Then, under the run lock, each undo phase runs as ``run`` runs a phase —
journalled, resumed after a crash without repeating a finished step, its update
previewed (judged against the checkpoint as ``preview_scope`` says, the program
rendered at the phase it applies) and guarded by what undoing may change — and the
stack's record and the journal move back with it, so a later ``run`` does the undone
phases again.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from automation.config.clients import LazyClients
from automation.config.project import load_stack
from automation.config.settings import load_runtime_settings
from automation.core.errors import UserError
from automation.core.progress import NullReporter
from automation.core.secrets import secret_strings
from automation.model.context import ClientSet
from automation.model.phase import Phase
from automation.review.diff import undo_scope_of
from automation.run.going_back import finished_before, walk_back
from automation.run.journal import Journal, check_state_dir, check_state_dir_writable, state_dir
from automation.run.planner import Planner
from automation.run.runner import Runner
from automation.run.steps import RunReport
from automation.run.targets import PhaseRenders
from automation.scenarios import build_scenario
from automation.session.assembly import (
    EngineFactory,
    checkpoint_judge,
    confirmer,
    context_factory,
    holding,
    journal_place,
    pulumi_engine,
    reporter_for,
)
from components.contract.progress import ProgressError, outputs_progress


@dataclass(frozen=True)
class BackRequest:
    project: Path
    stack: str
    to: str
    yes: bool = False
    dry_run: bool = False
    interactive: bool = False
    json: bool = False


def execute_back(
    request: BackRequest,
    *,
    console: Any = None,
    confirm: Callable[[str], bool] | None = None,
    engine_factory: EngineFactory = pulumi_engine,
    clients: ClientSet | None = None,
) -> RunReport:
    """Take the stack back to ``request.to`` (or say, in a dry run, what that would do)."""
    info = load_stack(request.project, request.stack)
    scenario = build_scenario(info.config)
    scenario.phase(request.to)
    settings = load_runtime_settings(info.values)
    clients = clients or LazyClients(settings)
    place = journal_place(request.project, request.stack)
    check_state_dir(state_dir(request.project))
    journal = Journal(place.journal, request.stack, scenario=info.scenario)
    run_id = uuid.uuid4().hex
    engine = engine_factory(request.project, request.stack, run_id)
    outputs = engine.outputs()
    try:
        progress = outputs_progress(outputs)
    except ProgressError as exc:
        raise UserError(f"{exc}; kubeshift cannot tell where the stack is.") from None
    undo = walk_back(scenario, progress, request.to, journal.done_phases())
    if request.dry_run:
        factory = context_factory(info, settings, clients, NullReporter())
        planner = Planner(journal, factory, order=scenario.phases, outputs=outputs)
        return planner.dry_run(undo)

    check_state_dir_writable(state_dir(request.project))
    render_cache = state_dir(request.project) / "render-cache"
    chooser = confirmer(request.yes, request.interactive, confirm)
    reporter = reporter_for(console, request.json)
    with holding(request.project, request.stack, run_id, reporter, settings.run_lock):
        secrets = secret_strings(info.values, engine.secret_config())
        journal = Journal(place.journal, request.stack, secrets, scenario=info.scenario)
        journal.undo(finished_before(journal, undo), "an earlier way back; going back again")
        runner = Runner(
            engine,
            journal,
            context_factory(info, settings, clients, reporter),
            confirm=chooser,
            order=scenario.phases,
            scope=_undo_scope(PhaseRenders(info.values, scenario.ids(), render_cache)),
            actor=f"kubeshift back {run_id}",
            trust_stack_progress=False,
            judge=checkpoint_judge(info.values, engine),
            preview_scope=settings.preview_scope,
        )
        return runner.run(undo)


def _undo_scope(renders: PhaseRenders) -> Callable[[Phase], tuple[str, ...]]:
    """What an undo phase's update may touch when its policy asks for the program's
    scope: what the program adds, removes or changes from the phase it takes back to
    the one it applies."""

    def scope(phase: Phase) -> tuple[str, ...]:
        (undone,) = phase.undoes
        return undo_scope_of(renders.leaving(undone, phase.applies))

    return scope
