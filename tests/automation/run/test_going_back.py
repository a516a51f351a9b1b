"""Going back: undo phases, latest first, each applying the phase before it; the stack's
record and the journal move back with them, and going forward again redoes the phases."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from automation.core.errors import BlastRadiusError, UserError
from automation.model.phase import Scenario, deletes_in
from automation.model.way_back import NoReturn, Reverse
from automation.run.going_back import walk_back
from automation.run.journal import Journal, StepStatus
from tests.automation.fakes import Counter, FakeEngine, small_scenario
from tests.automation.run.test_runner import make_runner


def reversible(counter: Counter) -> Scenario:
    """The small scenario, each phase with a way back kubeshift runs."""
    network, workers, drain = small_scenario(counter).phases
    ways = {
        "network": Reverse(
            "the new network deleted",
            changes=deletes_in("aws:ec2/vpc:Vpc::*", summary="deletes of the new network"),
            runs=True,
        ),
        "workers": Reverse("untaint, then the new workers go", before=(counter.hook("untaint"),),
                           changes=deletes_in("aws:autoscaling/group:Group::new-*"), runs=True),
        "drain": Reverse("the old workers uncordoned", after=(counter.hook("uncordon"),),
                         runs=True),
    }  # fmt: skip
    phases = tuple(dataclasses.replace(p, way_back=ways[p.id]) for p in (network, workers, drain))
    return Scenario(id="test", summary="test", phases=phases)


def _forward(engine: FakeEngine, path: Path, scenario: Scenario) -> None:
    runner = make_runner(engine, Journal(path, "s"))
    runner.contexts.order = scenario.phases
    runner.run(scenario.phases)


def _done(path: Path) -> list[str]:
    return sorted({r.phase for r in Journal(path, "s").records() if r.done})


def test_going_back_undoes_the_later_phases_latest_first_and_forward_redoes_them(
    tmp_path: Path,
) -> None:
    counter = Counter()
    scenario = reversible(counter)
    engine = FakeEngine()
    path = tmp_path / "j.json"
    _forward(engine, path, scenario)
    # taking workers back applies network's program: the new group goes, as it allows
    engine.plans = {"network": [("delete", "aws:autoscaling/group:Group", "new-a")]}
    engine.calls.clear()

    undo = walk_back(scenario, engine.progress, "network", _done(path))
    assert [p.id for p in undo] == ["back-from-drain", "back-from-workers"]
    assert [p.applies for p in undo] == ["workers", "network"]
    runner = make_runner(engine, Journal(path, "s"))
    runner.contexts.order = scenario.phases
    runner.run(undo)

    assert [a for n, a in engine.calls if n == "set_phase"] == ["workers", "network"]
    assert counter.runs["uncordon"] == 1 and counter.runs["untaint"] == 1
    progress = engine.progress
    assert progress.finished("network") is not None
    assert not any(m.phase in {"workers", "drain"} for m in progress.marks)
    assert [u.phase for u in progress.undone] == ["drain", "workers"]
    journal = Journal(path, "s")
    statuses = {r.key: r.status for r in journal.records()}
    assert statuses["drain/update"] is StepStatus.UNDONE
    assert statuses["workers/after:taint"] is StepStatus.UNDONE
    assert statuses["network/update"] is StepStatus.SUCCEEDED
    assert statuses["back-from-workers/update"] is StepStatus.SUCCEEDED

    _forward(engine, path, scenario)  # forward again: the undone phases run again
    assert counter.runs["taint"] == 2 and counter.runs["drain"] == 2
    assert engine.progress.finished("drain") is not None
    assert [e.status for e in Journal(path, "s").get("drain", "update").executions] == [  # type: ignore[union-attr]
        StepStatus.SUCCEEDED,
        StepStatus.UNDONE,  # when and by whom it was taken back
        StepStatus.SUCCEEDED,
    ]


def test_the_way_back_is_guarded_by_what_undoing_may_change(tmp_path: Path) -> None:
    counter = Counter()
    scenario = reversible(counter)
    engine = FakeEngine()
    path = tmp_path / "j.json"
    _forward(engine, path, scenario)
    engine.plans = {"workers": [("delete", "aws:ec2/vpc:Vpc", "old-vpc")]}
    undo = walk_back(scenario, engine.progress, "workers", _done(path))
    with pytest.raises(BlastRadiusError):
        make_runner(engine, Journal(path, "s")).run(undo)
    assert engine.progress.finished("drain") is not None, "nothing was taken back"


def test_a_point_of_no_return_or_a_reverse_not_run_refuses_the_whole_walk(
    tmp_path: Path,
) -> None:
    counter = Counter()
    scenario = reversible(counter)
    engine = FakeEngine()
    path = tmp_path / "j.json"
    _forward(engine, path, scenario)
    drain = dataclasses.replace(scenario.phases[2], way_back=NoReturn("the old nodes are gone"))
    closed = dataclasses.replace(scenario, phases=(*scenario.phases[:2], drain))
    with pytest.raises(UserError, match="'drain' is a point of no return"):
        walk_back(closed, engine.progress, "network", _done(path))
    described = dataclasses.replace(scenario.phases[1], way_back=Reverse("by hand"))
    partial = dataclasses.replace(
        scenario, phases=(scenario.phases[0], described, scenario.phases[2])
    )
    with pytest.raises(UserError, match="does not take phase 'workers' back yet"):
        walk_back(partial, engine.progress, "network", _done(path))
    with pytest.raises(UserError, match="at 'drain' already"):
        walk_back(scenario, engine.progress, "drain", _done(path))


def test_nothing_to_go_back_to_before_the_target_finished(tmp_path: Path) -> None:
    scenario = reversible(Counter())
    with pytest.raises(UserError, match="'workers' is not finished"):
        walk_back(scenario, FakeEngine().progress, "workers", [])
