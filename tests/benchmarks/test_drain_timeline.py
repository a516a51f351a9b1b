"""``benchmarks/drain_timeline.py`` on its own: its smoke run (kubeshift's drain of two
Deployments of three pods under budgets) makes every check, and each check fails on what
it must catch."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.drain_timeline import Step, checks
from tests.benchmarks.smoke import checks_printed, report, run_smoke

CHECKS = [
    "the drain completed",
    "all 6 old pods seen leaving once",
    "all 4 rounds split into replace and reaction",
    "no step took negative time",
    "the budgets' allowances were seen",
]


@pytest.mark.controlplane
def test_the_smoke_run_makes_every_check(tmp_path: Path) -> None:
    done = run_smoke("drain_timeline.py", tmp_path)
    assert done.returncode == 0, report(done)
    assert checks_printed(done) == dict.fromkeys(CHECKS, True), report(done)


def _steps(replace: list[float], controller: list[float], reaction: list[float]) -> list[Step]:
    return [Step("replace", replace), Step("controller", controller), Step("reaction", reaction)]


def _failed(steps: list[Step], left: int = 6, complete: bool = True) -> list[str]:
    return [name for name, ok in checks(steps, left, 6, 4, complete).items() if not ok]


def test_each_check_fails_on_what_it_must_catch() -> None:
    rounds = [1.0, 1.1, 1.0, 1.2]
    whole = _steps(rounds, [0.01] * 4, [0.05] * 4)
    assert _failed(whole) == []
    assert _failed(whole, complete=False) == [CHECKS[0]]
    assert _failed(whole, left=5) == [CHECKS[1]]  # a pod's leaving was missed
    assert _failed(_steps(rounds[:3], [0.01] * 3, [0.05] * 3)) == [CHECKS[2]]
    assert _failed(_steps(rounds, [0.01] * 4, [0.05, 0.05, -0.1, 0.05])) == [CHECKS[3]]
    assert _failed(_steps(rounds, [], [0.05] * 4)) == [CHECKS[4]]  # budgets never seen
