"""``benchmarks/rehearsal.py``'s check of the journal its figures come from, shown able to
fail, with no sandbox; it passes on the shared rehearsal's journal
(``tests/rehearsal/test_benchmark_checks.py``)."""

from __future__ import annotations

from typing import Any

from benchmarks.rehearsal import PhaseFigures, journal_problems, phase_figures

PHASES = ["baseline", "target-network", "shared-resources"]


def _record(phase: str, step: str, began: float, status: str = "succeeded") -> dict[str, Any]:
    return {
        "phase": phase, "step": step, "status": status, "message": f"{step} of {phase}",
        "started": began, "finished": began + 2.0,
    }  # fmt: skip


def _journal() -> list[dict[str, Any]]:
    """An adopted stack run through: baseline adopted, then each phase's engine steps."""
    records = [_record("baseline", "adopt", 0.0)]
    for n, phase in enumerate(PHASES[1:], 1):
        records += [_record(phase, step, 10.0 * n + i) for i, step in enumerate(
            ("config", "preview", "update", "after:routes-ready"))]  # fmt: skip
    return records


def test_a_whole_run_has_no_problem_and_gives_every_phase_its_figures() -> None:
    records = _journal()
    assert journal_problems(records, PHASES[1:]) == []
    figures: dict[str, PhaseFigures] = {}
    phase_figures(records, figures)
    assert sorted(figures) == sorted(PHASES)
    row = figures["target-network"]
    assert (row.engine, row.hooks, row.wall) == (4.0, 2.0, 5.0)


def test_a_step_that_did_not_succeed_is_a_problem() -> None:
    records = _journal()
    records[-1] = _record("shared-resources", "after:routes-ready", 23.0, status="failed")
    assert journal_problems(records, PHASES[1:]) == [
        "shared-resources/after:routes-ready failed: after:routes-ready of shared-resources"
    ]


def test_a_phase_that_never_updated_is_a_problem() -> None:
    """A run that stopped half-way would time half a migration against the hand-run."""
    records = [r for r in _journal() if r["phase"] != "shared-resources"]
    assert journal_problems(records, PHASES[1:]) == ["shared-resources: no update succeeded"]


def test_a_probe_spanning_the_phase_is_no_hook_time() -> None:
    """``probe:api`` runs from the phase's first step to its last: counted as a hook, the
    hooks of a control-plane phase came out longer than its wall time."""
    records = _journal()
    records.append({**_record("target-network", "probe:api", 10.0), "finished": 14.0})
    figures: dict[str, PhaseFigures] = {}
    phase_figures(records, figures)
    row = figures["target-network"]
    assert (row.engine, row.hooks) == (4.0, 2.0)  # the probe's 4 s are in neither
