"""The progress a stack records about itself (``contract.progress``), read for ``status``.

Read from the stack's outputs through the engine, so an operator with a fresh clone
and no journal sees what every other operator did. Reading never fails ``status``:
without a ``pulumi`` CLI or a stack, the note says why the record is unavailable.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from automation.core.errors import KubeshiftError
from components.contract.progress import Mark, Milestone, Progress, ProgressError, outputs_progress

MILESTONES: tuple[Milestone, ...] = ("before", "update", "after")


@dataclass(frozen=True)
class Recorded:
    """The stack's progress and its phase order, or a note on why it could not be read."""

    progress: Progress | None
    order: tuple[str, ...] = ()
    note: str = ""


def read_recorded(project: Path, stack: str) -> Recorded:
    from automation.config.project import load_stack
    from automation.engine.adapter import PulumiEngine, require_pulumi_cli
    from automation.scenarios import build_scenario

    try:
        order = build_scenario(load_stack(project, stack).config).ids()
        require_pulumi_cli()
        outputs = PulumiEngine(project, stack).outputs()
        return Recorded(outputs_progress(outputs), order)
    except (KubeshiftError, ProgressError) as exc:
        return Recorded(None, note=str(exc).rstrip("."))


@dataclass(frozen=True)
class PhaseRow:
    """One phase of the record: who finished each side (and when), and any override."""

    phase: str
    before: str
    update: str
    after: str
    override: str


def recorded_rows(recorded: Recorded) -> list[PhaseRow]:
    progress = recorded.progress
    if progress is None:
        return []
    rows = []
    for phase in recorded.order:
        cells = {m: _who(progress.mark(phase, m), progress.has_steps(phase, m)) for m in MILESTONES}
        overrides = [o for o in progress.overrides if o.phase == phase]
        override = "; ".join(f"without {', '.join(o.missing)} ({o.by})" for o in overrides)
        rows.append(PhaseRow(phase, cells["before"], cells["update"], cells["after"], override))
    return rows


def _who(mark: Mark | None, has_steps: bool) -> str:
    """``run 1a2b3c4d 12:17:05`` — short enough for a table; ``-`` for a side with no steps."""
    if mark is None:
        return "" if has_steps else "-"
    by = mark.by
    for long, short in (("kubeshift run ", "run "), ("kubeshift hooks ", "hooks ")):
        if by.startswith(long):
            by = short + by[len(long) :][:8]
    when = mark.at[11:19] if mark.at and len(mark.at) >= 19 else ""
    return f"{by} {when}".strip()
