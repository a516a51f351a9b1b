"""``benchmarks/harness_scale.py``: its smoke run (4 nodes, 20 pods) makes every check,
and each check fails on what it must catch."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.harness_scale import checks
from tests.benchmarks.smoke import checks_printed, report, run_smoke

CHECKS = ["all 4 nodes Ready", "all 20 pods Running", "the pods spread over more than one node"]


@pytest.mark.controlplane
def test_the_smoke_run_makes_every_check(tmp_path: Path) -> None:
    done = run_smoke("harness_scale.py", tmp_path)
    assert done.returncode == 0, report(done)
    assert checks_printed(done) == dict.fromkeys(CHECKS, True), report(done)


def _failed(ready_nodes: int, running: int, spread: int) -> list[str]:
    return [name for name, ok in checks(4, 20, ready_nodes, running, spread).items() if not ok]


def test_each_check_fails_on_what_it_must_catch() -> None:
    assert _failed(4, 20, 4) == []
    assert _failed(3, 20, 3) == [CHECKS[0]]
    assert _failed(4, 19, 4) == [CHECKS[1]]
    assert _failed(4, 20, 1) == [CHECKS[2]]
