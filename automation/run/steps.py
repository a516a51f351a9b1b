"""The vocabulary of a run: a phase's steps in order, what each step did, the report.

Each phase becomes an ordered list of steps — ``config`` (set ``kubeshift:phase``),
the phase's ``before`` hooks and gates, ``preview`` (the blast-radius guard),
``update`` and the ``after`` hooks and gates. The planner describes them, the runner
executes them; both read the same plan.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import JsonValue

from automation.core.errors import PreconditionFailed
from automation.engine.adapter import Engine, urn_name
from automation.model.context import HookContext
from automation.model.phase import ChangePolicy, Hook, Phase, Step
from components.contract.progress import Milestone, Sides

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
    steps = [
        PlannedStep(phase.id, CONFIG, f"set kubeshift:phase to {phase.applies}", False, "config")
    ]
    steps += [planned_step(phase.id, "before", s) for s in phase.before]
    steps.append(
        PlannedStep(phase.id, PREVIEW, f"preview ({phase.changes.summary})", False, "preview")
    )
    target_text = f" of {', '.join(phase.targets)}" if phase.targets else ""
    if phase.targeted:
        target_text = " of only what this phase changes (targeted)"
    steps.append(
        PlannedStep(phase.id, UPDATE, f"pulumi up{target_text}", phase.destructive, "update")
    )
    steps += [planned_step(phase.id, "after", s) for s in phase.after]
    return steps


def planned_step(phase_id: str, where: str, step: Step) -> PlannedStep:
    """``step`` as a planned step of ``phase_id`` on side ``where`` (or ``action``)."""
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


def json_safe(details: Mapping[str, object]) -> dict[str, JsonValue]:
    """``details`` as plain JSON (dataclasses and other objects become their text)."""
    loaded: dict[str, JsonValue] = json.loads(json.dumps(dict(details), default=str))
    return loaded
