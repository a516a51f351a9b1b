"""The progress a stack records about itself (``components.progress``), read for ``status``.

Read from the stack's outputs through the engine, so an operator with a fresh clone
and no journal sees what every other operator did. Reading never fails ``status``:
without a ``pulumi`` CLI or a stack, the note says why the record is unavailable.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from automation.errors import KubeshiftError
from components.progress import Milestone, Progress, ProgressError, outputs_progress

MILESTONES: tuple[Milestone, ...] = ("before", "update", "after")


@dataclass(frozen=True)
class Recorded:
    """The stack's progress and its phase order, or a note on why it could not be read."""

    progress: Progress | None
    order: tuple[str, ...] = ()
    note: str = ""


def read_recorded(project: Path, stack: str) -> Recorded:
    from automation.engine import PulumiEngine, require_pulumi_cli
    from automation.project import load_stack
    from automation.scenarios import build_scenario

    try:
        order = build_scenario(load_stack(project, stack)).ids()
        require_pulumi_cli()
        outputs = PulumiEngine(project, stack).outputs()
        return Recorded(outputs_progress(outputs), order)
    except (KubeshiftError, ProgressError) as exc:
        return Recorded(None, note=str(exc).rstrip("."))


def recorded_rows(recorded: Recorded) -> list[dict[str, str]]:
    """One row per phase: who finished each milestone (and when), and any override."""
    progress = recorded.progress
    if progress is None:
        return []
    rows = []
    for phase in recorded.order:
        cells = {"phase": phase}
        for milestone in MILESTONES:
            mark = progress.mark(phase, milestone)
            cells[milestone] = "" if mark is None else f"{mark.by} {mark.at or ''}".strip()
        overrides = [o for o in progress.overrides if o.phase == phase]
        cells["override"] = "; ".join(f"without {', '.join(o.missing)} ({o.by})" for o in overrides)
        rows.append(cells)
    return rows
