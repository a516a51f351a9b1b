"""The fault harness is strict: a recovery only where a fault demanded it, a fault that
cannot strike fails, every wait ends at its deadline (``tests/support/faults.py``).

The bookkeeping is tested as functions; the driver against a stand-in ``kubeshift``
(a shell script writing the journal as the real one does, starting a process whose
argv reads ``pulumi --non-interactive up`` and writing its lock file as a DIY backend
does), so no sandbox is needed.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.faults import (
    Engine,
    Fault,
    FaultyRun,
    StaleLock,
    Trial,
    TrialFailed,
    asks_for_recover,
    attribute,
    engine_command,
    owed,
    stale_locks,
    unsettled,
)

STACK = "s"
ASK = "error: the engine was killed; run `kubeshift --stack s recover`, then run again."


def _trial(how: str, *engines: Engine, recoveries: int = 0) -> Trial:
    return Trial(Fault("p/update", how), engines=engines, recoveries=recoveries)


# -- the bookkeeping ----------------------------------------------------------------------


def test_an_engine_kill_demands_one_recovery_other_faults_none_unless_a_lock_was_left() -> None:
    up = Engine(101, "up")
    trials = [
        _trial("engine-kill", up),
        _trial("group-kill"),
        _trial("sigint"),
        _trial("kill-alone"),
    ]
    assert [t.expected for t in trials] == [1, 0, 0, 0]
    assert owed(trials) == [trials[0]]


def test_a_stale_lock_is_charged_to_the_fault_that_killed_or_orphaned_its_engine() -> None:
    orphaned, killed = _trial("kill-alone", Engine(7, "up")), _trial("group-kill", Engine(9, "up"))
    attribute([orphaned, killed], [StaleLock(9, Path("lock.json"))])
    assert (orphaned.expected, killed.expected) == (0, 1)
    assert owed([orphaned, killed]) == [killed]


def test_a_stale_lock_no_fault_explains_fails_the_trial() -> None:
    """An engine that died on its own: its lock names a pid no fault touched."""
    trials = [_trial("engine-kill", Engine(101, "up"))]
    with pytest.raises(TrialFailed, match=r"pulumi pid 555 .* died on its own"):
        attribute(trials, [StaleLock(555, Path("x/.pulumi/locks/o/p/s/1.json"))])


def test_recoveries_must_equal_what_each_fault_demanded() -> None:
    trials = [
        _trial("engine-kill", Engine(1, "up"), recoveries=1),
        _trial("engine-kill", Engine(2, "up"), recoveries=0),
        _trial("sigint", recoveries=1),
    ]
    found = unsettled(trials)
    assert len(found) == 2, found
    assert "trial 2 (engine-kill" in found[0] and "demanded 1 recovery(ies), 0 ran" in found[0]
    assert "trial 3 (sigint" in found[1] and "demanded 0 recovery(ies), 1 ran" in found[1]


def test_only_the_recover_command_for_this_stack_is_an_ask() -> None:
    assert asks_for_recover(ASK, STACK)
    assert asks_for_recover("run `kubeshift --stack s\n    recover`", STACK)  # wrapped
    assert not asks_for_recover("the cluster recovered; 3 nodes Ready", STACK)
    assert not asks_for_recover("run `kubeshift --stack other recover`", STACK)


def test_the_engines_subcommand_is_read_from_its_argv() -> None:
    assert engine_command(["/bin/pulumi", "--non-interactive", "up", "--yes"]) == "up"
    assert engine_command(["pulumi", "--non-interactive", "preview"]) == "preview"
    assert Engine(1, "refresh").locks and not Engine(2, "preview").locks
    assert engine_command(["pulumi"]) == ""


def test_lock_files_of_the_stack_with_a_dead_holder_are_stale(tmp_path: Path) -> None:
    locks = tmp_path / ".pulumi" / "locks" / "organization" / "project"
    for stack, name, pid in ((STACK, "a", 11), (STACK, "b", 12), ("other", "c", 13)):
        (locks / stack).mkdir(parents=True, exist_ok=True)
        (locks / stack / f"{name}.json").write_text(json.dumps({"pid": pid}))
    found = stale_locks(tmp_path, STACK, alive=lambda pid: pid == 12)
    assert found == [StaleLock(11, f".pulumi/locks/organization/project/{STACK}/a.json")]
    (locks / STACK / "b.json").write_text("{")
    with pytest.raises(TrialFailed, match="unreadable lock file"):
        stale_locks(tmp_path, STACK, alive=lambda pid: True)


# -- the driver, against a stand-in kubeshift ------------------------------------------------

FAKE = r"""#!/usr/bin/env bash
# A stand-in kubeshift: each `run` plays the next line of $FAKE/plan.
set -u
stack=$2 command=$3
locks="$FAKE/backend/.pulumi/locks/organization/project/$stack"
if [ "$command" = recover ]; then
  rm -f "$locks"/*.json; echo recovered; exit 0
fi
n=$(( $(cat "$FAKE/runs" 2>/dev/null || echo 0) + 1 )); echo "$n" > "$FAKE/runs"
action=$(sed -n "${n}p" "$FAKE/plan")
journal() {
  printf '{"steps": {"%s": {"status": "running", "executions": [{"pid": %d}]}}}' "$1" $$ \
    > "$FAKE/journal.json"
}
start() {  # a process whose argv reads `pulumi --non-interactive <command>`, pid in $pid
  (exec -a pulumi "$PYTHON" - --non-interactive "$1" <<< 'import time; time.sleep(30)') &
  pid=$!
  if [ "$1" = up ]; then
    mkdir -p "$locks"; printf '{"pid": %d}' "$pid" > "$locks/$pid.json"
  fi
}
engine() {  # until it ends; killed, the run goes on to say so
  start "$1"; wait "$pid"; code=$?
  [ "$code" -eq 137 ] || exit 0
}
case "$action" in
  update) journal p/update; engine up; echo "$ASK"; exit 1 ;;
  update-no-ask) journal p/update; engine up; echo "engine killed"; exit 1 ;;
  preview) journal p/update; engine preview; exit 0 ;;
  step) journal p/update; exec sleep 30 ;;
  elsewhere) journal q/other; exec sleep 30 ;;
  ask) echo "$ASK"; exit 1 ;;
  dies) journal q/other; start up; kill -9 "$pid"; wait "$pid"; echo "$ASK"; exit 1 ;;
  finish) exit 0 ;;
esac
echo "no plan for run $n" >&2; exit 2
"""


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[Path]:
    script = tmp_path / "kubeshift"
    script.write_text(FAKE)
    script.chmod(0o755)
    yield tmp_path
    for pid in _left_behind(tmp_path):  # nothing of the stand-in may outlive a test
        os.kill(pid, signal.SIGKILL)


def _left_behind(tmp_path: Path) -> list[int]:
    left = []
    for entry in Path("/proc").iterdir():
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if f"FAKE={tmp_path}".encode() in environ.split(b"\0") and int(entry.name) != os.getpid():
            left.append(int(entry.name))
    return left


def _driver(fake: Path, plan: list[str], engine_timeout: float = 120.0) -> FaultyRun:
    (fake / "plan").write_text("\n".join(plan) + "\n")
    env = {**os.environ, "FAKE": str(fake), "PYTHON": sys.executable, "ASK": ASK}
    return FaultyRun(
        str(fake / "kubeshift"), STACK, env, fake, fake / "journal.json", fake / "logs",
        backend=fake / "backend", engine_timeout=engine_timeout,
    )  # fmt: skip


def test_an_engine_killed_mid_update_is_recovered_once_and_the_run_finishes(fake: Path) -> None:
    session = _driver(fake, ["update", "finish"]).rehearse([Fault("p/update", "engine-kill")])
    [trial] = session.trials
    assert session.final_code == 0
    assert (trial.code, trial.recoveries, trial.expected, trial.left_lock) == (1, 1, 1, True)
    assert [e.command for e in trial.engines] == ["up"]
    assert session.log[1] == "recovered\n"  # after the hurt run, before the last one


def test_an_engine_killed_and_never_recovered_fails_at_the_end(fake: Path) -> None:
    """The run did not ask, the next one ran past the engine's lock: the demand unpaid."""
    driver = _driver(fake, ["update-no-ask", "finish"])
    with pytest.raises(TrialFailed, match=r"demanded 1 recovery\(ies\), 0 ran"):
        driver.rehearse([Fault("p/update", "engine-kill")])


def test_a_recovery_no_fault_demanded_fails_with_the_runs_output(fake: Path) -> None:
    driver = _driver(fake, ["ask", "finish"])
    with pytest.raises(TrialFailed, match="no injected fault demanded") as failed:
        driver.rehearse([])
    assert "kubeshift --stack s recover" in str(failed.value)  # the run's output


def test_an_engine_that_died_on_its_own_fails_the_trial_instead_of_being_recovered(
    fake: Path,
) -> None:
    driver = _driver(fake, ["dies", "finish"])
    with pytest.raises(TrialFailed, match="died on its own") as failed:
        driver.rehearse([])
    assert "kubeshift --stack s recover" in str(failed.value)  # the run's output
    assert (fake / "runs").read_text().strip() == "1"  # no second run
    assert list((fake / "backend").rglob("*.json"))  # and no recover: its lock is still there


def test_an_engine_kill_finding_no_update_fails_instead_of_killing_the_group(fake: Path) -> None:
    driver = _driver(fake, ["step"], engine_timeout=1.0)
    began = time.monotonic()
    with pytest.raises(TrialFailed, match="lock ran under the run within 1s"):
        driver.rehearse([Fault("p/update", "engine-kill")])
    assert time.monotonic() - began < 10


def test_an_engine_kill_finding_only_a_preview_fails(fake: Path) -> None:
    driver = _driver(fake, ["preview"], engine_timeout=1.0)
    with pytest.raises(TrialFailed, match=r"engines last seen: pulumi preview \(pid \d+\)"):
        driver.rehearse([Fault("p/update", "engine-kill")])


def test_waiting_for_a_step_that_never_starts_ends_at_the_deadline(fake: Path) -> None:
    driver = _driver(fake, ["elsewhere"])
    began = time.monotonic()
    with pytest.raises(TrialFailed, match=r"no step matching 'p/update' started before the "):
        driver.rehearse([Fault("p/update", "sigint")], deadline=1.0)
    assert time.monotonic() - began < 10
    assert "q/other" in (fake / "journal.json").read_text()


def test_a_run_that_finishes_before_the_step_fails_the_trial(fake: Path) -> None:
    driver = _driver(fake, ["finish"])
    with pytest.raises(TrialFailed, match="the fault could not strike"):
        driver.rehearse([Fault("p/update", "group-kill")])
