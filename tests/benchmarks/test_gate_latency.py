"""``benchmarks/gate_latency.py``: its smoke run (one control plane, two nodes, one trial
each way) makes every check, and each check fails on what it must catch."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.gate_latency import checks
from tests.benchmarks.smoke import checks_printed, report, run_smoke

CHECKS = ["every trial saw the condition hold, then the gate pass", "the watches woke the gate"]


@pytest.mark.controlplane
def test_the_smoke_run_makes_every_check(tmp_path: Path) -> None:
    done = run_smoke("gate_latency.py", tmp_path)
    assert done.returncode == 0, report(done)
    assert checks_printed(done) == dict.fromkeys(CHECKS, True), report(done)


def _failed(polled: list[float], woken: list[float], wakes: int) -> list[str]:
    return [name for name, ok in checks(polled, woken, wakes).items() if not ok]


def test_each_check_fails_on_what_it_must_catch() -> None:
    assert _failed([9.1], [0.8], 3) == []
    assert _failed([9.1], [float("nan")], 3) == [CHECKS[0]]  # never saw the condition
    assert _failed([], [], 3) == [CHECKS[0]]
    assert _failed([9.1], [0.8], 0) == [CHECKS[1]]  # the watch never woke the gate
