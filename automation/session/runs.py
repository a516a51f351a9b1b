"""``kubeshift run``: stack, scenario, settings, clients, engine, journal, lock, runner.

This is the only place those pieces meet for a run, so the CLI stays thin and tests
can run the same assembly with a fake engine.
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
from automation.review.diff import scope_of
from automation.run.journal import (
    Journal,
    check_state_dir,
    check_state_dir_writable,
    load_journal,
    state_dir,
)
from automation.run.kept_check import refuse_kept_for_nothing
from automation.run.planner import Planner
from automation.run.released import release_check
from automation.run.runner import Runner
from automation.run.steps import RunReport
from automation.run.targets import PhaseRenders, target_urns
from automation.scenarios import build_scenario
from automation.session.assembly import (
    EngineFactory,
    checkpoint_judge,
    confirmer,
    context_factory,
    holding,
    journal_place,
    pulumi_engine,
    read_outputs,
    reporter_for,
)


@dataclass(frozen=True)
class RunRequest:
    project: Path
    stack: str
    start: str | None = None
    stop: str | None = None
    yes: bool = False
    dry_run: bool = False
    fresh: bool = False
    interactive: bool = False
    json: bool = False


def execute(
    request: RunRequest,
    *,
    console: Any = None,
    confirm: Callable[[str], bool] | None = None,
    engine_factory: EngineFactory = pulumi_engine,
    clients: ClientSet | None = None,
) -> RunReport:
    """Run (or dry-run) the requested phases of a stack."""
    info = load_stack(request.project, request.stack)
    scenario = build_scenario(info.config)
    phases = scenario.slice(request.start, request.stop)
    settings = load_runtime_settings(info.values)
    clients = clients or LazyClients(settings)
    place = journal_place(request.project, request.stack)
    if request.fresh and request.dry_run:
        raise UserError("--fresh cannot be combined with --dry-run: a dry run forgets nothing.")
    # A damaged or foreign journal stops here, before the engine, the lock or any write.
    check_state_dir(state_dir(request.project))
    load_journal(place.journal, request.stack, info.scenario)
    render_cache = state_dir(request.project) / "render-cache"
    refuse_kept_for_nothing(info, render_cache)

    if request.dry_run:
        existing = Journal(place.journal, request.stack, scenario=info.scenario)
        journal = existing if existing.exists else None
        factory = context_factory(info, settings, clients, NullReporter())
        outputs, note = read_outputs(request.project, request.stack)
        planner = Planner(journal, factory, order=scenario.phases, outputs=outputs)
        report = planner.dry_run(phases)
        report.note = note
        return report

    check_state_dir_writable(state_dir(request.project))
    run_id = uuid.uuid4().hex
    engine = engine_factory(request.project, request.stack, run_id)
    chooser = confirmer(request.yes, request.interactive, confirm)

    reporter = reporter_for(console, request.json)
    with holding(request.project, request.stack, run_id, reporter, settings.run_lock):
        secrets = secret_strings(info.values, engine.secret_config())
        journal = Journal(place.journal, request.stack, secrets, scenario=info.scenario)
        if request.fresh:
            journal.forget(p.id for p in phases)
        factory = context_factory(info, settings, clients, reporter)
        renders = PhaseRenders(info.values, scenario.ids(), render_cache)
        runner = Runner(
            engine,
            journal,
            factory,
            confirm=chooser,
            scope=lambda phase: scope_of(renders.entering(phase.id)),
            targets=lambda phase: target_urns(renders, phase.id, engine.resource_urns()),
            order=scenario.phases,
            actor=f"kubeshift run {run_id}",
            trust_stack_progress=not request.fresh,
            judge=checkpoint_judge(info.values, engine),
            preview_scope=settings.preview_scope,
            refuse=release_check(
                settings.terraform_state, settings.kops_state, clients, renders, engine
            ),
        )
        return runner.run(phases)
