"""``benchmarks/render_phases.py``: its smoke run makes every check, and each check fails
on what it must catch."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.render_phases import PhaseRun, checks
from tests.benchmarks.smoke import checks_printed, report, run_smoke

CHECKS = [
    "every phase rendered resources and worker groups",
    "the second render was served by the cache",
    "a whole kubeshift render was served by the cache",
    "every kubeshift render exited 0",
]


def test_the_smoke_run_makes_every_check(tmp_path: Path) -> None:
    done = run_smoke("render_phases.py", tmp_path, "local")
    assert done.returncode == 0, report(done)
    assert checks_printed(done) == dict.fromkeys(CHECKS, True), report(done)


def _row(**changes: Any) -> PhaseRun:
    return replace(PhaseRun("baseline", 72, (5, 0), [1.0], 0.01, True, [2.0], [0]), **changes)


def _failed(rows: list[PhaseRun], command_served: bool = True) -> list[str]:
    return [name for name, ok in checks(rows, command_served).items() if not ok]


def test_each_check_fails_on_what_it_must_catch() -> None:
    assert _failed([_row()]) == []
    assert _failed([_row(), _row(resources=0)]) == [CHECKS[0]]
    assert _failed([_row(worker_groups=(0, 0))]) == [CHECKS[0]]
    assert _failed([_row(hit=False)]) == [CHECKS[1]]
    assert _failed([_row()], command_served=False) == [CHECKS[2]]
    assert _failed([_row(exits=[0, 1])]) == [CHECKS[3]]
    assert _failed([], command_served=False) == CHECKS  # nothing rendered proves nothing
