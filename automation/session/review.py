"""One function per reviewing command: ``plan``, ``render``, ``diff`` (offline) and
``preview`` (the real engine, nothing changed). Each takes a frozen request and returns
a report the command line prints, as ``run`` and ``hooks`` do."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from automation.config.project import StackInfo, load_stack
from automation.model.way_back import Reverse
from automation.run.journal import state_dir
from automation.run.kept_check import refuse_kept_for_nothing
from automation.scenarios import build_scenario

if TYPE_CHECKING:
    from automation.engine.adapter import PreviewOutcome
    from automation.model.phase import Phase
    from automation.review.diff import PhaseDiff
    from automation.review.rendered import RenderedResource
    from automation.run.guard import Violation


@dataclass(frozen=True)
class PlanRequest:
    project: Path
    stack: str


@dataclass(frozen=True)
class PlanReport:
    stack: str
    scenario: str
    phases: list[dict[str, Any]]
    """Per phase: id, summary, destructive, gates and hooks around it, changes allowed,
    targets, way back (and why a point of no return is one) and probe (the rows of
    ``plan --json``)."""


def _no_return_why(phase: Phase) -> str | None:
    no_return = phase.point_of_no_return
    return no_return.why if no_return else None


def execute_plan(request: PlanRequest) -> PlanReport:
    """The phase table of a stack, from its stack file alone."""
    from automation.model.phase import Gate, Hook
    from automation.run.steps import plan_steps

    info = load_stack(request.project, request.stack)
    refuse_kept_for_nothing(info, _render_cache(request.project))
    scenario = build_scenario(info.config)
    rows = [
        {
            "id": phase.id,
            "summary": phase.summary,
            "destructive": phase.destructive or any(s.destructive for s in plan_steps(phase)),
            "gates": [g.summary for g in phase.gates],
            "gates_before": [g.summary for g in phase.before if isinstance(g, Gate)],
            "gates_after": [g.summary for g in phase.after if isinstance(g, Gate)],
            "hooks": [h.summary for h in phase.hooks],
            "hooks_before": [h.summary for h in phase.before if isinstance(h, Hook)],
            "hooks_after": [h.summary for h in phase.after if isinstance(h, Hook)],
            "changes": phase.changes.summary,
            "delete_first": list(phase.changes.delete_first),
            "targets": list(phase.targets),
            "targeted": phase.targeted,
            "way_back": phase.way_back.describe() if phase.way_back else None,
            "back_runs": isinstance(phase.way_back, Reverse) and phase.way_back.runs,
            "point_of_no_return": _no_return_why(phase),
            "probe": phase.probe.summary if phase.probe else None,
        }
        for phase in scenario.phases
    ]
    return PlanReport(stack=info.name, scenario=scenario.id, phases=rows)


@dataclass(frozen=True)
class RenderRequest:
    project: Path
    stack: str
    phases: tuple[str | None, ...]
    """The phases to render (None: the stack's own)."""
    config: Path | None = None
    """Another stack file to render instead."""


@dataclass(frozen=True)
class RenderReport:
    stack: str
    phases: tuple[str, ...]
    resources: tuple[list[RenderedResource], ...]
    """Per phase, every resource the program declares."""
    violations: list[str]
    """``components.contract.policy``'s refusals of the last phase's resources."""


def execute_render(request: RenderRequest) -> RenderReport:
    """The program rendered offline (under the SDK's mocks) at each phase, from the cache
    while nothing that decides a render changed."""
    from automation.review.diff import policy_violations
    from automation.review.render_cache import cached_render

    info = load_stack(request.project, request.stack, request.config)
    phases = tuple(checked_phase(info, phase) for phase in request.phases)
    cache = _render_cache(request.project)
    refuse_kept_for_nothing(info, cache)
    rendered = tuple(cached_render(info.values, phase, cache)[0] for phase in phases)
    violations = policy_violations(info.config, rendered[-1])
    return RenderReport(info.name, phases, rendered, violations)


def diff_of(report: RenderReport) -> PhaseDiff:
    """What changes from the first rendered phase to the last."""
    from automation.review.diff import diff_resources

    return diff_resources(report.resources[0], report.resources[-1])


@dataclass(frozen=True)
class PreviewRequest:
    project: Path
    stack: str
    phase: str


@dataclass(frozen=True)
class PreviewReport:
    stack: str
    phase: str
    outcome: PreviewOutcome
    violations: list[Violation]
    """The previewed changes the phase does not allow (the guard's refusals)."""


def execute_preview(request: PreviewRequest) -> PreviewReport:
    """The engine's preview of a phase, reaching what the run's would (the stack's
    ``preview_scope``), checked against the changes the phase allows; nothing changes."""
    from automation.config.settings import load_runtime_settings
    from automation.engine.adapter import PulumiEngine, require_pulumi_cli
    from automation.review.diff import scope_of
    from automation.run import guard
    from automation.run.scope import choose
    from automation.run.steps import effective_policy, resolve_targets
    from automation.run.targets import PhaseRenders, target_urns
    from automation.session.assembly import checkpoint_judge, engine_log

    info = load_stack(request.project, request.stack)
    scenario = build_scenario(info.config)
    chosen = scenario.phase(request.phase)
    mode = load_runtime_settings(info.values).preview_scope
    require_pulumi_cli()
    sink = engine_log(request.project, info.name)
    sink.announce()
    engine = PulumiEngine(request.project, info.name, create=True, on_output=sink)
    engine.set_phase(chosen.id)
    renders = PhaseRenders(info.values, scenario.ids(), _render_cache(request.project))

    def declared() -> list[str]:
        if chosen.targeted:
            return target_urns(renders, chosen.id, engine.resource_urns())
        return resolve_targets(engine, chosen)

    verdict = checkpoint_judge(info.values, engine)(chosen) if mode != "full" else None
    scope = choose(chosen, mode, verdict, declared)
    outcome = engine.preview(scope.targets, dependents=scope.dependents)
    scope.check(chosen.id, outcome)
    policy = effective_policy(chosen, lambda p: scope_of(renders.entering(p.id)))
    return PreviewReport(info.name, chosen.id, outcome, guard.violations(outcome, policy))


def checked_phase(info: StackInfo, phase: str | None) -> str:
    """``phase`` (or the stack's own) once the scenario knows it; else one sentence
    naming the known phases."""
    scenario = build_scenario(info.config)
    chosen = info.phase if phase is None else phase
    scenario.phase(chosen)
    return chosen


def _render_cache(project: Path) -> Path:
    return state_dir(project) / "render-cache"
