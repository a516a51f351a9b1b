"""kubeshift's runner, guard and journal against the real Pulumi engine.

Each test walks phases of the engine-test scenario (``scenario.py``) over a private
copy of the provider-free project with a ``file://`` backend. What really exists is
read from two places: the engine's state (``export_stack``, outputs) and the records
the dynamic provider keeps on disk, so "nothing changed" is checked outside Pulumi too.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import pytest

from automation.core.documents import FileDocument
from automation.core.errors import EXIT_CODES, BlastRadiusError, ErrorKind
from automation.engine.adapter import PreviewOutcome
from automation.engine.processes import engine_markers
from automation.model.phase import CREATES_AND_UPDATES
from automation.run.journal import Journal, StepStatus
from automation.run.planner import Planner
from automation.run.run_lock import run_lock
from tests.integration.engine.scenario import (
    STACK,
    build_runner,
    context_factory,
    journal_path,
    lock_path,
    scenario,
)
from tests.support.engine_fixtures import EngineProject, kill_tree

pytestmark = pytest.mark.engine

REPO = Path(__file__).resolve().parents[3]
RECORD = "pulumi-python:dynamic:Resource"
NETWORK = {"net-vpc", "net-subnet-0", "net-subnet-1"}
GROUPS = {"workers-group-0", "workers-group-1"}


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "kubeshift-state"


def _changes(outcome: PreviewOutcome) -> set[tuple[str, str]]:
    """(op, name) of every planned change to a record or component (providers left out)."""
    return {
        (c.op, c.name)
        for c in outcome.changed()
        if not c.type.startswith("pulumi:providers:") and c.type != "pulumi:pulumi:Stack"
    }


def _state_ids(project: EngineProject) -> dict[str, str]:
    """Logical name -> provider id of every record in the engine's state."""
    deployment = project.pulumi("stack", "export").stdout
    resources = json.loads(deployment)["deployment"]["resources"]
    return {r["urn"].rsplit("::", 1)[-1]: r["id"] for r in resources if r["type"] == RECORD}


def _wait_for(what: str, check: Callable[[], bool], timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.2)


def _drive_argv(project: EngineProject, state: Path, *args: str, command: str = "run") -> list[str]:
    module = "tests.integration.engine.drive"
    return [sys.executable, "-m", module, command, str(project.dir), str(state), *args]


def _drive(
    project: EngineProject, state: Path, *args: str, command: str = "run"
) -> subprocess.CompletedProcess[str]:
    """Run the runner in its own process (``drive.py``), like ``kubeshift run``."""
    return subprocess.run(
        _drive_argv(project, state, *args, command=command),
        cwd=REPO,
        env=project.env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _start_drive(
    project: EngineProject, state: Path, log: Path, *args: str
) -> subprocess.Popen[str]:
    """Like ``_drive`` but in the background, output to ``log``."""
    with log.open("w") as out:
        return subprocess.Popen(
            _drive_argv(project, state, *args),
            cwd=REPO,
            env=project.env,
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )


def test_preview_lists_the_real_creates_updates_and_replaces(
    engine_project: EngineProject, state: Path
) -> None:
    engine, _journal, runner = build_runner(engine_project.dir, state)
    phases = scenario()

    engine.set_phase("network")
    assert _changes(engine.preview()) == {("create", "net")} | {("create", n) for n in NETWORK}
    assert engine_project.records() == {}

    runner.run(phases.slice("network", "workers"))
    engine.set_phase("scale-workers")
    updates = engine.preview()
    assert _changes(updates) == {("update", n) for n in {"net-vpc", *GROUPS}}
    assert updates.summary["update"] == 3

    engine.set_phase("move-vpc")
    moves = engine.preview()
    replaced = NETWORK | GROUPS
    assert {n for op, n in _changes(moves) if op == "replace"} == replaced
    assert {n for op, n in _changes(moves) if op == "delete-replaced"} == replaced
    assert moves.summary["replace"] == len(replaced)
    assert not any(c.delete_first for c in moves.changes)  # created first, deleted last
    assert len(engine_project.records()) == 5, "previews must not touch the records"


def test_the_guard_tells_a_delete_first_replacement_by_the_engines_step_order(
    engine_project: EngineProject, state: Path
) -> None:
    """The engine deletes the VPC (and what it must replace with it) before making its
    successor: the preview's steps say so, and a phase that allows replacements still
    refuses that one unless it names it."""
    from automation.model.phase import deletes_in
    from automation.run import guard

    engine, _journal, runner = build_runner(engine_project.dir, state)
    runner.run(scenario().slice("network", "workers"))
    engine_project.pulumi("config", "set", "kubeshift-test:delete_first", "true")
    engine.set_phase("move-vpc")

    moves = engine.preview()

    first = {c.name for c in moves.changes if c.delete_first}
    assert "net-vpc" in first and first <= NETWORK | GROUPS, first
    replacing = deletes_in("*")
    with pytest.raises(BlastRadiusError, match=r"delete-first replacement of .*::net-vpc"):
        guard.check("move-vpc", moves, replacing)
    allowed = replace(replacing, delete_first=tuple(f"*::{name}" for name in first))
    guard.check("move-vpc", moves, allowed)
    assert len(engine_project.records()) == 5, "previews must not touch the records"


def test_runner_walks_phases_and_reads_back_outputs_and_urns(
    engine_project: EngineProject, state: Path
) -> None:
    engine, _journal, runner = build_runner(engine_project.dir, state)
    phases = scenario().slice("network", "workers")

    report = runner.run(phases)

    assert [(o.phase, o.step, o.status) for o in report.outcomes] == [
        ("network", "config", "succeeded"),
        ("network", "preview", "succeeded"),
        ("network", "update", "succeeded"),
        ("network", "after:vpc-output", "succeeded"),
        ("workers", "config", "succeeded"),
        ("workers", "preview", "succeeded"),
        ("workers", "update", "succeeded"),
    ]
    outputs = engine.outputs()
    vpc_id = outputs["vpc_id"]
    assert outputs["phase"] == "workers"
    assert f"vpc {vpc_id} reported" in report.outcomes[3].message
    assert set(outputs["worker_group_ids"]) | {vpc_id} <= set(engine_project.records())

    urns = engine.resource_urns()
    project = "kubeshift-engine-fixture"
    assert f"urn:pulumi:{STACK}::{project}::kubeshift:test:Network::net" in urns
    assert (
        f"urn:pulumi:{STACK}::{project}::kubeshift:test:Workers${RECORD}::workers-group-1" in urns
    )
    assert _state_ids(engine_project)["net-vpc"] == vpc_id

    # The journal on disk says the same, and a dry run now finds everything done.
    reloaded = Journal(journal_path(state), STACK)
    assert all(r.status is StepStatus.SUCCEEDED for r in reloaded.records())
    # ... and where each engine operation's time went, stretch by stretch, to its end.
    for step in ("preview", "update"):
        record = reloaded.get("workers", step)
        assert record is not None
        seconds = cast(dict[str, float], record.details["seconds"])
        assert {"start", "program", "steps", "finish", "total"} <= set(seconds), step
        assert sum(v for k, v in seconds.items() if k != "total") <= seconds["total"] + 0.05
    dry = Planner(reloaded, context_factory()).dry_run(phases)
    assert {o.status for o in dry.outcomes} == {"done"}


def test_targeted_phase_updates_only_its_targets(
    engine_project: EngineProject, state: Path
) -> None:
    engine, _journal, runner = build_runner(engine_project.dir, state)
    phases = scenario()
    runner.run(phases.slice("network", "workers"))
    before = engine_project.records()

    report = runner.run(phases.slice("scale-workers", "scale-workers"))

    update = next(o for o in report.outcomes if o.step == "update")
    assert update.message == "update 2", update.message
    after = engine_project.records()
    assert set(after) == set(before)
    groups = {k: v for k, v in after.items() if k.startswith("workers-group-")}
    assert {g["settings"]["size"] for g in groups.values()} == {3}
    vpc = next(v for k, v in after.items() if k.startswith("net-vpc-"))
    assert vpc["settings"] == {"tags": {"stage": "initial"}}, "the VPC was not a target"
    # The untargeted change is still pending for a later full update.
    assert _changes(engine.preview()) == {("update", "net-vpc")}


def test_guard_stops_a_replace_the_phase_does_not_allow_before_anything_changes(
    engine_project: EngineProject, state: Path
) -> None:
    _engine, journal, runner = build_runner(engine_project.dir, state)
    runner.run(scenario().slice("network", "workers"))
    records, ids = engine_project.records(), _state_ids(engine_project)
    strict = scenario(move_vpc_policy=CREATES_AND_UPDATES).slice("move-vpc", "move-vpc")

    with pytest.raises(BlastRadiusError) as stopped:
        runner.run(strict)

    message = str(stopped.value)
    assert "Phase 'move-vpc' stopped before update" in message
    assert f"{RECORD}::net-vpc" in message and "Nothing was changed" in message
    assert stopped.value.exit_code == EXIT_CODES[ErrorKind.PRECONDITION]
    assert engine_project.records() == records
    assert _state_ids(engine_project) == ids
    assert journal.get("move-vpc", "preview").status is StepStatus.FAILED
    assert journal.get("move-vpc", "update") is None

    # The same phase with the replace in its scope goes through and really replaces.
    runner.run(scenario().slice("move-vpc", "move-vpc"))
    moved = _state_ids(engine_project)
    assert all(moved[name] != ids[name] for name in NETWORK | GROUPS)
    assert set(engine_project.records()) == set(moved.values())


def test_second_run_is_refused_while_kubeshift_holds_the_stack(
    engine_project: EngineProject, state: Path
) -> None:
    with run_lock(FileDocument(lock_path(state)), STACK, "first-run"):
        second = _drive(engine_project, state, "--stop", "network")

    assert second.returncode == EXIT_CODES[ErrorKind.LOCKED], second.stderr
    assert "being migrated by" in second.stderr and "run first-ru" in second.stderr
    assert "Traceback" not in second.stderr
    assert engine_project.records() == {}
    assert not journal_path(state).exists()


def test_run_is_refused_while_another_update_holds_the_pulumi_stack(
    engine_project: EngineProject, state: Path
) -> None:
    engine_project.pulumi("config", "set", "kubeshift:phase", "fleet")
    # The hand-run update holds its lock until the test removes the hold file, however
    # long the second run takes to reach the engine on a busy machine.
    hold = state.parent / "hold-the-fleet"
    hold.touch()
    engine_project.pulumi("config", "set", "kubeshift-test:fleet_delay", "0")
    engine_project.pulumi("config", "set", "kubeshift-test:fleet_hold", str(hold))
    by_hand = subprocess.Popen(
        [str(engine_project.engine.pulumi), "up", "--yes", "--skip-preview", "-s", STACK],
        cwd=engine_project.dir,
        env=engine_project.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        locks = engine_project.backend / ".pulumi" / "locks"
        _wait_for("the hand-run update to lock the stack", lambda: any(locks.rglob("*.json")))

        second = _drive(engine_project, state, "--start", "fleet", "--stop", "fleet")

        assert second.returncode == EXIT_CODES[ErrorKind.LOCKED], second.stderr
        assert "being updated by another process" in second.stderr, second.stderr
        assert f"pid {by_hand.pid}" in second.stderr, "the live holder is named"
        assert "Traceback" not in second.stderr
        journal = Journal(journal_path(state), STACK)
        assert journal.get("fleet", "update").status is StepStatus.FAILED
    finally:
        hold.unlink()
        assert by_hand.wait(timeout=300) == 0
    # Once the other update is over, the same command finishes the phase.
    third = _drive(engine_project, state, "--start", "fleet", "--stop", "fleet")
    assert third.returncode == 0, third.stderr
    assert len([r for r in engine_project.records() if r.startswith("fleet-group-")]) == 5


def test_run_killed_during_up_resumes_and_converges(
    engine_project: EngineProject, state: Path
) -> None:
    engine_project.pulumi("config", "set", "kubeshift-test:fleet_delay", "2")
    log = state.parent / "killed-run.log"
    run = _start_drive(engine_project, state, log, "--stop", "fleet")
    fleet = lambda: [r for r in engine_project.records() if r.startswith("fleet-group-")]  # noqa: E731
    # Kill while the state holds a create in flight: the engine persists the pending
    # operation asynchronously, so counting created records alone can strike before it
    # is written (then only the stale lock is left, and the run names `recover` anyway).
    in_flight = lambda: len(fleet()) >= 2 and bool(_pending_creates(engine_project))  # noqa: E731
    try:
        _wait_for(
            "a fleet create in flight after two", lambda: in_flight() or run.poll() is not None
        )
    finally:
        kill_tree(run.pid)
    run.wait(timeout=30)
    assert run.returncode == -signal.SIGKILL, log.read_text()[-3000:]
    assert 2 <= len(fleet()) < 5
    journal = Journal(journal_path(state), STACK)
    assert journal.get("fleet", "update").status is StepStatus.RUNNING
    assert journal.is_done("move-vpc", "update")

    # The kill left Pulumi's lock behind and the interrupted create as a pending operation
    # (on AWS it may have left an orphan): the runner stops before updating again and
    # names the one command that clears both; nothing changes.
    stopped = _drive(engine_project, state, "--stop", "fleet")
    assert stopped.returncode == EXIT_CODES[ErrorKind.PRECONDITION], stopped.stderr
    assert "pending operation" in stopped.stderr and "recover" in stopped.stderr
    assert _pending_creates(engine_project)

    recovered = _drive(engine_project, state, command="recover")

    assert recovered.returncode == 0, recovered.stdout[-3000:] + recovered.stderr
    assert _pending_creates(engine_project) == set()
    assert not any((engine_project.backend / ".pulumi" / "locks").rglob("*.json"))
    recovery = Journal(journal_path(state), STACK).get("recover", "recovery-1")
    assert recovery is not None and recovery.status is StepStatus.SUCCEEDED
    assert recovery.details["stale_locks"], "the dead update's lock was named and removed"

    resumed = _drive(engine_project, state, "--stop", "fleet")

    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr
    assert "network/update: skipped already done" in resumed.stdout
    assert "fleet/update: succeeded" in resumed.stdout
    journal = Journal(journal_path(state), STACK)
    assert journal.get("network", "update").attempts == 1, "finished steps never repeat"
    assert journal.get("move-vpc", "update").attempts == 1
    assert journal.get("fleet", "update").status is StepStatus.SUCCEEDED
    assert len(fleet()) == 5
    ids = _state_ids(engine_project)
    assert set(engine_project.records()) == set(ids.values()), "state and records agree"
    assert _pending_creates(engine_project) == set()


def test_a_run_waits_for_the_update_an_earlier_killed_run_left_running(
    engine_project: EngineProject, state: Path
) -> None:
    """An engine a killed run left behind (its environment marks it) is waited for.

    The orphan is made the way a killed kubeshift leaves one: a ``pulumi up`` carrying
    the stack's engine markers whose parent is gone. (A real orphan whose output pipe
    closed with its parent dies at its next write; then the stale lock and the pending
    operations lead to ``recover``, tested above.)
    """
    engine_project.pulumi("config", "set", "kubeshift:phase", "fleet")
    engine_project.pulumi("config", "set", "kubeshift-test:fleet_delay", "2")
    env = {**engine_project.env, **engine_markers(engine_project.dir, STACK, "killed-run")}
    orphan = subprocess.Popen(
        [str(engine_project.engine.pulumi), "up", "--yes", "--skip-preview", "-s", STACK],
        cwd=engine_project.dir,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        locks = engine_project.backend / ".pulumi" / "locks"
        _wait_for("the orphaned update to lock the stack", lambda: any(locks.rglob("*.json")))

        resumed = _drive(engine_project, state, "--start", "fleet", "--stop", "fleet")

        assert orphan.poll() == 0, "the run waited for the orphan to finish"
    finally:
        orphan.wait(timeout=300)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr
    assert "fleet/update: succeeded" in resumed.stdout
    assert len([r for r in engine_project.records() if r.startswith("fleet-group-")]) == 5


def _pending_creates(project: EngineProject) -> set[str]:
    deployment = json.loads(project.pulumi("stack", "export").stdout)["deployment"]
    return {
        op["resource"]["urn"].rsplit("::", 1)[-1]
        for op in deployment.get("pending_operations") or []
        if op.get("type") == "creating"
    }


class _DriftBeforeUpdate:
    """The real engine, but someone edits the stack's config between preview and update."""

    def __init__(self, engine: Any, drift: Callable[[], None]) -> None:
        self._engine, self._drift = engine, drift

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)

    def up(self, targets: Any = (), plan: Path | None = None, *, dependents: bool = True) -> Any:
        self._drift()
        return self._engine.up(targets, plan=plan, dependents=dependents)


def test_the_update_applies_only_the_plan_the_guard_accepted(
    engine_project: EngineProject, state: Path
) -> None:
    from automation.core.errors import PreconditionFailed

    engine, journal, runner = build_runner(engine_project.dir, state)
    phases = {phase.id: phase for phase in scenario().phases}
    runner.run([phases["network"]])
    records, ids = engine_project.records(), _state_ids(engine_project)

    # The guard accepts creating the worker groups; then the config moves on to a phase
    # that would also re-tag the VPC and resize the groups.
    runner.engine = _DriftBeforeUpdate(  # type: ignore[assignment]
        engine,
        lambda: engine_project.pulumi("config", "set", "kubeshift:phase", "scale-workers"),
    )
    with pytest.raises(PreconditionFailed) as caught:
        runner.run([phases["workers"]])

    assert "departed from the preview the guard accepted" in str(caught.value)
    assert engine_project.records() == records, "the update touched a record"
    assert _state_ids(engine_project) == ids
    assert journal.get("workers", "update").status is StepStatus.FAILED
