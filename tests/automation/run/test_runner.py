"""The runner against a recording fake engine: order, guard, resume, confirmation."""

from __future__ import annotations

import dataclasses
import logging
import re
from pathlib import Path

import pytest

from automation.config.clients import StaticClients
from automation.core.errors import BlastRadiusError, GateTimeoutError, UserError
from automation.core.waiting import Pending
from automation.model.context import HookContext
from automation.model.phase import Phase
from automation.model.way_back import NoReturn
from automation.run.journal import Journal, StepStatus
from automation.run.planner import Planner
from automation.run.runner import Runner
from automation.run.steps import plan_steps
from tests.automation.fakes import Counter, FakeEngine, Killed, gate, small_scenario


def make_context(phase: Phase, outputs: dict, dry_run: bool) -> HookContext:
    return HookContext(
        stack="s",
        scenario="test",
        phase=phase.id,
        clients=StaticClients(),
        outputs=outputs,
        dry_run=dry_run,
    )


def make_runner(engine: FakeEngine, journal: Journal, confirm=lambda _q: True) -> Runner:
    return Runner(engine, journal, make_context, confirm=confirm, sleep=lambda _s: None)


@pytest.fixture
def journal_path(tmp_path: Path) -> Path:
    return tmp_path / "s.journal.json"


def test_steps_run_in_declared_order(journal_path: Path) -> None:
    counter = Counter()
    scenario = small_scenario(counter)
    engine = FakeEngine()
    report = make_runner(engine, Journal(journal_path, "s")).run(scenario.phases)

    keys = [f"{o.phase}/{o.step}" for o in report.outcomes]
    assert keys == [
        "network/config",
        "network/preview",
        "network/update",
        "workers/config",
        "workers/preview",
        "workers/update",
        "workers/after:nodes-ready",
        "workers/after:taint",
        "drain/config",
        "drain/before:drain",
        "drain/preview",
        "drain/update",
        "drain/after:no-pods-left",
    ]
    assert engine.ups() == ["network", "workers", "drain"]
    assert counter.runs == {"taint": 1, "drain": 1}


def test_plan_steps_marks_destructive_steps() -> None:
    phase = small_scenario(Counter()).phase("drain")
    destructive = [s.key for s in plan_steps(phase) if s.destructive]
    assert destructive == ["before:drain", "update"]


def _all_boundaries() -> list[str]:
    return [
        "set_phase:network",
        "preview:network",
        "up:network",
        "set_phase:workers",
        "up:workers",
        "hook:taint",
        "set_phase:drain",
        "hook:drain",
        "preview:drain",
        "up:drain",
    ]


@pytest.mark.parametrize("kill_at", _all_boundaries())
def test_killed_run_resumes_without_repeating_finished_steps(
    journal_path: Path, kill_at: str
) -> None:
    counter = Counter()
    engine = FakeEngine()
    if kill_at.startswith("hook:"):
        counter.kill_in = kill_at.removeprefix("hook:")
    else:
        engine.kill_on = kill_at
    scenario = small_scenario(counter)

    with pytest.raises(Killed):
        make_runner(engine, Journal(journal_path, "s")).run(scenario.phases)
    ups_before = engine.ups()

    # A new process: fresh journal object read from disk, same engine state.
    make_runner(engine, Journal(journal_path, "s")).run(scenario.phases)

    journal = Journal(journal_path, "s")
    assert all(r.status is StepStatus.SUCCEEDED for r in journal.records())
    # Each phase's update finished exactly once; a killed update is retried, not repeated.
    finished_ups = engine.ups()
    for phase in ("network", "workers", "drain"):
        killed_here = kill_at == f"up:{phase}"
        assert finished_ups.count(phase) == (2 if killed_here else 1), (phase, ups_before)
    # A hook killed mid-run runs again (it never finished); others ran once.
    for name in ("taint", "drain"):
        assert counter.runs.get(name) == (2 if kill_at == f"hook:{name}" else 1)


def test_second_run_after_success_repeats_nothing(journal_path: Path) -> None:
    counter = Counter()
    scenario = small_scenario(counter)
    engine = FakeEngine()
    make_runner(engine, Journal(journal_path, "s")).run(scenario.phases)
    calls = len(engine.calls)
    report = make_runner(engine, Journal(journal_path, "s")).run(scenario.phases)
    assert {o.status for o in report.outcomes} == {"skipped"}
    assert len(engine.calls) == calls
    assert counter.runs == {"taint": 1, "drain": 1}


def test_guard_stops_an_unexpected_replace_before_update(journal_path: Path) -> None:
    scenario = small_scenario(Counter())
    engine = FakeEngine(plans={"workers": [("replace", "aws:ec2/vpc:Vpc", "source-vpc")]})
    with pytest.raises(BlastRadiusError, match="replace of aws:ec2/vpc:Vpc::source-vpc"):
        make_runner(engine, Journal(journal_path, "s")).run(scenario.phases)
    assert engine.ups() == ["network"]
    assert Journal(journal_path, "s").get("workers", "preview").status is StepStatus.FAILED


def test_guard_allows_deletes_in_scope(journal_path: Path) -> None:
    scenario = small_scenario(Counter())
    engine = FakeEngine(plans={"drain": [("delete", "aws:autoscaling/group:Group", "old-a")]})
    make_runner(engine, Journal(journal_path, "s")).run(scenario.phases)
    assert engine.ups() == ["network", "workers", "drain"]


def test_non_interactive_run_refuses_destructive_steps_before_changing_anything(
    journal_path: Path,
) -> None:
    engine = FakeEngine()
    runner = Runner(engine, Journal(journal_path, "s"), make_context, confirm=None)
    with pytest.raises(UserError, match="pass --yes"):
        runner.run(small_scenario(Counter()).phases)
    assert engine.calls == []
    assert not journal_path.exists()


def test_declined_confirmation_stops_the_run(journal_path: Path) -> None:
    engine = FakeEngine()
    runner = make_runner(engine, Journal(journal_path, "s"), confirm=lambda _q: False)
    with pytest.raises(UserError, match="not confirmed"):
        runner.run(small_scenario(Counter()).phases)
    assert engine.ups() == ["network", "workers"]


def test_a_point_of_no_return_is_named_before_it_is_crossed(journal_path: Path) -> None:
    scenario = small_scenario(Counter())
    drain = scenario.phases[-1]
    crossing = dataclasses.replace(drain, way_back=NoReturn("the old nodes are gone for good"))
    asked: list[str] = []

    def answer(question: str) -> bool:
        asked.append(question)
        return "point of no return" not in question  # the operator declines to cross it

    runner = make_runner(FakeEngine(), Journal(journal_path, "s"), confirm=answer)
    with pytest.raises(UserError, match="not confirmed"):
        runner.run((*scenario.phases[:-1], crossing))

    assert asked[-1].startswith("drain/")
    assert "drain is a point of no return: the old nodes are gone for good." in asked[-1]
    assert all("point of no return" not in q for q in asked[:-1])  # only where it is one
    crossed = [
        r for r in Journal(journal_path, "s").records() if r.phase == "drain" and r.destructive
    ]
    assert crossed == []  # declined: the step never started


def test_gate_timeout_names_what_is_pending(journal_path: Path) -> None:
    scenario = small_scenario(Counter())
    phase = Phase(
        id="workers",
        summary="w",
        after=(gate("nodes-ready", lambda: Pending.of(["ip-10-1-0-7", "ip-10-1-0-9"])),),
    )
    object.__setattr__(phase.after[0], "timeout", 0.05)
    engine = FakeEngine()
    with pytest.raises(GateTimeoutError, match="ip-10-1-0-7, ip-10-1-0-9"):
        make_runner(engine, Journal(journal_path, "s")).run((scenario.phases[0], phase))
    record = Journal(journal_path, "s").get("workers", "after:nodes-ready")
    assert record is not None and record.status is StepStatus.FAILED


def test_dry_run_changes_nothing_and_runs_hooks_in_dry_run_mode(journal_path: Path) -> None:
    seen: list[bool] = []
    counter = Counter()
    scenario = small_scenario(counter)

    def context(phase: Phase, outputs: dict, dry_run: bool) -> HookContext:
        seen.append(dry_run)
        return make_context(phase, outputs, dry_run)

    report = Planner(None, context).dry_run(scenario.phases)
    assert {o.status for o in report.outcomes} == {"would-run"}
    assert seen and all(seen)
    assert not journal_path.exists()


def test_targets_resolve_to_urns_and_unknown_targets_fail(journal_path: Path) -> None:
    phase = Phase(id="cp", summary="cp", targets=("cp-1-*",))
    engine = FakeEngine(
        urns=[
            "urn:pulumi:s::p::aws:autoscaling/group:Group::cp-1-asg",
            "urn:pulumi:s::p::aws:autoscaling/group:Group::cp-2-asg",
        ]
    )
    make_runner(engine, Journal(journal_path, "s")).run((phase,))
    assert ("up", ("cp", ("urn:pulumi:s::p::aws:autoscaling/group:Group::cp-1-asg",))) in (
        engine.calls
    )
    missing = Phase(id="cp9", summary="cp", targets=("cp-9-*",))
    with pytest.raises(Exception, match="matches no resource"):
        make_runner(engine, Journal(journal_path, "s")).run((missing,))


def test_program_scope_lets_through_exactly_what_the_program_retires(journal_path: Path) -> None:
    from automation.model.phase import retires_what_the_program_retires

    phase = Phase(id="retire", summary="r", changes=retires_what_the_program_retires())
    engine = FakeEngine(
        plans={
            "retire": [
                ("delete", "aws:autoscaling/group:Group", "old-a"),
                ("delete", "aws:ec2/vpc:Vpc", "target-vpc"),
            ]
        }
    )
    scoped = Runner(
        engine,
        Journal(journal_path, "s"),
        make_context,
        confirm=lambda _q: True,
        scope=lambda _p: ("aws:autoscaling/group:Group::old-a",),
    )
    with pytest.raises(BlastRadiusError) as info:
        scoped.run((phase,))
    assert "target-vpc" in str(info.value) and "old-a" not in str(info.value)
    # Without a resolver the policy fails closed: no delete is in scope.
    unscoped = make_runner(engine, Journal(journal_path, "s"))
    with pytest.raises(BlastRadiusError, match="2 change"):
        unscoped.run((phase,))


def test_interrupted_update_with_pending_operations_stops_before_updating_again(
    journal_path: Path,
) -> None:
    from automation.core.errors import PreconditionFailed

    scenario = small_scenario(Counter())
    engine = FakeEngine(kill_on="up:workers")
    with pytest.raises(Killed):
        make_runner(engine, Journal(journal_path, "s")).run(scenario.phases)
    engine.pending = ["creating urn:pulumi:s::p::aws:autoscaling/group:Group::new-a"]
    with pytest.raises(PreconditionFailed, match="1 pending operation"):
        make_runner(engine, Journal(journal_path, "s")).run(scenario.phases)
    assert engine.ups() == ["network", "workers"]  # the killed attempt only

    engine.pending = []  # the operator checked and cleared them
    make_runner(engine, Journal(journal_path, "s")).run(scenario.phases)
    assert engine.ups() == ["network", "workers", "workers", "drain"]


def test_every_update_applies_the_plan_its_preview_saved(journal_path: Path) -> None:
    engine = FakeEngine()  # refuses an update given another phase's plan
    make_runner(engine, Journal(journal_path, "s")).run(small_scenario(Counter()).phases)

    assert len(engine.plans_applied) == 3
    assert all(plan is not None for plan in engine.plans_applied)
    assert not any(plan.exists() for plan in engine.plans_applied if plan), "plans outlive the run"


def test_a_hook_retries_a_foreign_temporary_error_after_the_errors_own_delay(
    journal_path: Path,
) -> None:
    from automation.core.errors import RetryableError
    from automation.model.phase import Hook, HookResult, Scenario

    answers: list[BaseException | None] = [
        ConnectionResetError("reset by peer"),
        RetryableError("throttled", delay=7.0),
        None,
    ]

    def flaky(_ctx: HookContext) -> HookResult:
        answer = answers.pop(0)
        if answer is not None:
            raise answer
        return HookResult(True, "done")

    hook = Hook(name="flaky", summary="a flaky hook", run=flaky, retries=2, retry_delay=1.5)
    phase = Phase(id="p", summary="p", before=(hook,))
    slept: list[float] = []
    runner = Runner(
        FakeEngine(), Journal(journal_path, "s"), make_context, confirm=lambda _q: True,
        sleep=slept.append,
    )  # fmt: skip
    runner.run(Scenario(id="t", summary="t", phases=(phase,)).phases)
    assert slept == [1.5, 7.0]  # the hook's own back-off, then the one the error asked for
    assert Journal(journal_path, "s").is_done("p", "before:flaky")


def test_a_run_tells_each_phase_with_its_place_and_each_step_with_its_time(
    journal_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The console's compact view: a line per phase (its place in the scenario and what it
    does), each step with how long it took, and how long the phase took; a phase done
    in an earlier run is one line."""
    scenario = small_scenario(Counter())
    with caplog.at_level(logging.INFO, logger="kubeshift.runner"):
        make_runner(FakeEngine(), Journal(journal_path, "s")).run(scenario.phases[:2])
    said = [r.getMessage() for r in caplog.records]
    network, workers = scenario.phases[0], scenario.phases[1]
    assert f"network, phase 1 of 2: {network.summary}" in said
    assert f"workers, phase 2 of 2: {workers.summary}" in said
    assert any(re.fullmatch(r"network/update succeeded in \d+\.\ds: .*", s) for s in said)
    assert any(re.fullmatch(r"workers done in \d+s: 5 steps run, 0 done before", s) for s in said)

    caplog.clear()
    with caplog.at_level(logging.INFO, logger="kubeshift.runner"):
        make_runner(FakeEngine(), Journal(journal_path, "s")).run(scenario.phases[:2])
    said = [r.getMessage() for r in caplog.records]
    assert "network, phase 1 of 2: done in an earlier run" in said
    assert not any(" done in " in s and "steps run" in s for s in said)


def test_each_step_logs_an_event_a_ci_log_can_follow(
    journal_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """With ``--json`` each line is one object; a step's start and end carry its event,
    phase and step (``core.logs.EVENT_FIELDS``), a success its seconds."""
    scenario = small_scenario(Counter())
    with caplog.at_level(logging.INFO, logger="kubeshift.runner"):
        make_runner(FakeEngine(), Journal(journal_path, "s")).run(scenario.phases)
        make_runner(FakeEngine(), Journal(journal_path, "s")).run(scenario.phases[:1])
    events = [
        (r.__dict__["event"], r.__dict__["phase"], r.__dict__["step"])
        for r in caplog.records
        if "event" in r.__dict__
    ]
    first = scenario.phases[0].id
    assert (("step-started", first, "update")) in events
    assert events.index(("step-started", first, "update")) < events.index(
        ("step-succeeded", first, "update")
    )
    assert ("step-skipped", first, "update") in events  # the second run
    succeeded = [r for r in caplog.records if r.__dict__.get("event") == "step-succeeded"]
    assert succeeded and all(isinstance(r.__dict__["seconds"], float) for r in succeeded)
