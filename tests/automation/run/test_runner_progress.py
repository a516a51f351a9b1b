"""The runner and the progress recorded with the stack (``components.contract.progress``).

The fake engine keeps the ``progress`` output as the program does: carried marks and
the update's own mark on every update, a record-only update for ``record``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from automation.core.errors import UserError
from automation.run.journal import Journal
from automation.run.planner import Planner
from automation.run.runner import Runner
from components.contract.progress import Mark, Progress, missing
from tests.automation.fakes import Counter, FakeEngine, small_scenario
from tests.automation.run.test_runner import make_context


def runner(engine: FakeEngine, journal: Journal, **options: object) -> Runner:
    scenario = small_scenario(Counter())
    return Runner(
        engine,
        journal,
        make_context,
        confirm=lambda _q: True,
        sleep=lambda _s: None,
        order=scenario.phases,
        **options,  # type: ignore[arg-type]
    )


def test_a_run_leaves_every_phase_recorded_with_one_extra_update(tmp_path: Path) -> None:
    counter = Counter()
    scenario = small_scenario(counter)
    engine = FakeEngine()
    runner(engine, Journal(tmp_path / "j.json", "s")).run(scenario.phases)

    progress = engine.progress
    assert progress.steps == {"network": (), "workers": ("after",), "drain": ("before", "after")}
    for phase in scenario.ids():
        assert progress.finished(phase) is not None, phase
        assert missing(progress, scenario.ids(), phase) == []
    # before- and after-marks ride with the next phase's update; only the last phase's
    # after-steps need a record-only update of their own.
    assert [args for name, args in engine.calls if name == "record"] == [("after drain",)]


def test_the_drains_before_mark_reaches_the_stack_with_the_drain_update(tmp_path: Path) -> None:
    scenario = small_scenario(Counter())
    engine = FakeEngine()
    runner(engine, Journal(tmp_path / "j.json", "s")).run(scenario.phases[:2])
    assert not engine.progress.has("drain", "before")
    runner(engine, Journal(tmp_path / "j.json", "s")).run(scenario.phases[2:])
    drain_before = engine.progress.mark("drain", "before")
    assert drain_before is not None and drain_before.by == "kubeshift run"
    assert drain_before.at  # kubeshift stamps the time it recorded the mark


def test_a_fresh_checkout_skips_what_the_stack_records_finished(tmp_path: Path) -> None:
    scenario = small_scenario(Counter())
    engine = FakeEngine()
    runner(engine, Journal(tmp_path / "one.json", "s")).run(scenario.phases)
    ups = len(engine.ups())

    counter = Counter()
    second = Runner(
        engine,
        Journal(tmp_path / "other-checkout.json", "s"),
        make_context,
        confirm=lambda _q: True,
        order=small_scenario(counter).phases,
    )
    report = second.run(small_scenario(counter).phases)
    assert {o.status for o in report.outcomes} == {"skipped"}
    assert all(o.message.startswith("recorded with the stack by") for o in report.outcomes)
    assert len(engine.ups()) == ups and counter.runs == {}


def test_fresh_runs_again_what_the_stack_records(tmp_path: Path) -> None:
    scenario = small_scenario(Counter())
    engine = FakeEngine()
    runner(engine, Journal(tmp_path / "one.json", "s")).run(scenario.phases)
    again = runner(engine, Journal(tmp_path / "two.json", "s"), trust_stack_progress=False)
    report = again.run(scenario.phases)
    assert {o.status for o in report.outcomes} == {"succeeded"}


def test_hooks_by_command_then_a_run_mixes(tmp_path: Path) -> None:
    """Before-steps by command, the update by hand, after-steps by command, the rest by run."""
    counter = Counter()
    scenario = small_scenario(counter)
    engine = FakeEngine()
    journal_path = tmp_path / "j.json"
    runner(engine, Journal(journal_path, "s")).run(scenario.phases[:2])

    drain = scenario.phase("drain")
    by_command = runner(engine, Journal(journal_path, "s"), actor="kubeshift hooks h1")
    by_command.outputs_from_stack()
    report = by_command.run_steps(drain, "before")
    assert [o.step for o in report.outcomes] == ["before:drain"]
    assert engine.progress.mark("drain", "before").by == "kubeshift hooks h1"  # type: ignore[union-attr]

    engine.set_phase("drain")  # the engineer's `pulumi up`
    engine.carry(None)
    engine.up()

    by_command.outputs_from_stack()
    by_command.run_steps(drain, "after")
    assert engine.progress.finished("drain") is not None

    report = runner(engine, Journal(journal_path, "s")).run(scenario.phases)
    assert {o.status for o in report.outcomes} == {"skipped"}
    assert counter.runs == {"taint": 1, "drain": 1}


def test_a_damaged_progress_output_is_one_sentence() -> None:
    bad = Planner(None, make_context, outputs={"progress": {"marks": "not a list"}})
    with pytest.raises(UserError) as caught:
        bad.progress()
    assert "not a progress record" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_marks_name_who_recorded_them() -> None:
    mark = Mark(phase="drain", milestone="after", by="kubeshift hooks abc")
    assert Progress().with_marks([mark]).finished("drain") == mark
