"""Ctrl-C during a run: the run stops at a safe point, says where, and resumes there."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from automation.core.errors import EXIT_CODES, ErrorKind, InterruptedRun
from automation.core.interrupt import stop_at_safe_points
from automation.core.waiting import Pending
from automation.model.phase import Hook, HookResult, Phase
from automation.run.journal import Journal, StepStatus
from tests.automation.fakes import FakeEngine, gate
from tests.automation.run.test_runner import make_runner


def _ctrl_c() -> None:
    os.kill(os.getpid(), signal.SIGINT)


def _phases(on_hook, on_gate) -> tuple[Phase, ...]:
    hook = Hook("taint", "taint old workers", lambda _ctx: on_hook(), destructive=True)
    return (Phase(id="workers", summary="w", before=(hook,), after=(gate("ready", on_gate),)),)


def test_ctrl_c_during_a_gate_stops_the_wait_and_resume_continues_there(tmp_path: Path) -> None:
    path = tmp_path / "j.json"
    polls: list[int] = []

    def poll() -> Pending:
        polls.append(1)
        if len(polls) == 1:
            _ctrl_c()
        return Pending.of(["ip-10-1-0-7"])

    taints: list[int] = []

    def taint() -> HookResult:
        taints.append(1)
        return HookResult(True, "tainted")

    notices: list[str] = []
    before = signal.getsignal(signal.SIGINT)  # ignored when pytest was started with `&`
    with stop_at_safe_points(notices.append), pytest.raises(InterruptedRun) as stopped:
        make_runner(FakeEngine(), Journal(path, "s")).run(_phases(taint, poll))

    assert stopped.value.exit_code == EXIT_CODES[ErrorKind.INTERRUPTED] == 130
    assert "workers/after:ready" in str(stopped.value) and "run" in str(stopped.value)
    assert notices, "the operator is told the run will stop"
    journal = Journal(path, "s")
    assert journal.data.stopped_at == "workers/after:ready"
    record = journal.get("workers", "after:ready")
    assert record is not None and record.status is StepStatus.INTERRUPTED
    assert signal.getsignal(signal.SIGINT) is before, "handler restored"

    make_runner(FakeEngine(), Journal(path, "s")).run(_phases(taint, lambda: Pending()))

    assert taints == [1], "the finished destructive hook did not run again"
    assert Journal(path, "s").is_done("workers", "after:ready")


def test_ctrl_c_during_a_hook_lets_it_finish_and_stops_before_the_next_step(
    tmp_path: Path,
) -> None:
    path = tmp_path / "j.json"

    def taint() -> HookResult:
        _ctrl_c()  # arrives mid-step; the step still completes
        return HookResult(True, "tainted")

    engine = FakeEngine()
    with stop_at_safe_points(lambda _n: None), pytest.raises(InterruptedRun, match="before"):
        make_runner(engine, Journal(path, "s")).run(_phases(taint, lambda: Pending()))

    journal = Journal(path, "s")
    assert journal.is_done("workers", "before:taint")
    assert journal.data.stopped_at == "workers/preview"
    assert engine.ups() == [], "nothing after the safe point ran"


def test_a_second_ctrl_c_stops_at_once(tmp_path: Path) -> None:
    def poll() -> Pending:
        _ctrl_c()
        _ctrl_c()
        return Pending.of(["x"])

    with stop_at_safe_points(lambda _n: None), pytest.raises(KeyboardInterrupt):
        make_runner(FakeEngine(), Journal(tmp_path / "j.json", "s")).run(
            _phases(lambda: HookResult(True, "ok"), poll)
        )
    record = Journal(tmp_path / "j.json", "s").get("workers", "after:ready")
    assert record is not None and record.status is StepStatus.INTERRUPTED
