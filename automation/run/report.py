"""A run told per phase: wall time, engine time, resource changes, hooks and gates.

Built from the journal alone, so it describes any run (resumed or not) after the fact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from automation.run.journal import StepRecord

ENGINE_STEPS = ("preview", "update")


@dataclass(frozen=True)
class PhaseRow:
    phase: str
    seconds: float
    engine_seconds: float
    changes: str
    steps: tuple[str, ...]  # "after:drain-workers succeeded"

    def as_dict(self) -> dict[str, object]:
        return {
            "phase": self.phase,
            "seconds": round(self.seconds, 1),
            "engine_seconds": round(self.engine_seconds, 1),
            "changes": self.changes,
            "steps": list(self.steps),
        }


def _span(records: Sequence[StepRecord]) -> float:
    starts = [r.started for r in records if r.started is not None]
    ends = [r.finished for r in records if r.finished is not None]
    return max(ends) - min(starts) if starts and ends else 0.0


def _seconds(record: StepRecord) -> float:
    if record.started is None or record.finished is None:
        return 0.0
    return max(0.0, record.finished - record.started)


def phase_rows(records: Sequence[StepRecord], order: Sequence[str]) -> list[PhaseRow]:
    """One row per phase the journal knows, in scenario order."""
    rows = []
    for phase in order:
        mine = [r for r in records if r.phase == phase]
        if not mine:
            continue
        update = next((r for r in mine if r.step == "update"), None)
        rows.append(
            PhaseRow(
                phase=phase,
                seconds=_span(mine),
                engine_seconds=sum(_seconds(r) for r in mine if r.step in ENGINE_STEPS),
                changes=update.message if update else "-",
                steps=tuple(
                    f"{r.step} {r.status.value}"
                    for r in mine
                    if r.step not in ("config", *ENGINE_STEPS)
                ),
            )
        )
    return rows


def availability_lines(records: Sequence[StepRecord]) -> list[str]:
    """What the availability probes reported: one line per probed step (the Services'
    endpoints) and per probed phase (the API's answers)."""
    return [
        f"{r.phase}/{r.step}: {r.message}"
        for r in records
        if r.step.startswith("probe:")
        or ("endpoint" in r.message and r.step not in ("config", *ENGINE_STEPS))
    ]
