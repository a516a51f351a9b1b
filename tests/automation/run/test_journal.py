"""The journal's persistence, redaction, and writers that meet on one journal."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from automation.core.documents import FileDocument
from automation.core.errors import UserError
from automation.run.journal import MERGE_ATTEMPTS, Journal, StepStatus, operator


def test_records_survive_a_reload(tmp_path: Path) -> None:
    path = tmp_path / "j.json"
    journal = Journal(path, "dev")
    journal.start("drain-workers", "before:drain", destructive=True)
    journal.finish("drain-workers", "before:drain", "evicted 12 pods")
    journal.start("drain-workers", "update")

    again = Journal(path, "dev")
    done = again.get("drain-workers", "before:drain")
    running = again.get("drain-workers", "update")
    assert done is not None and done.status is StepStatus.SUCCEEDED and done.destructive
    assert done.message == "evicted 12 pods" and done.attempts == 1
    assert running is not None and running.status is StepStatus.RUNNING
    assert again.is_done("drain-workers", "before:drain")
    assert not again.is_done("drain-workers", "update")


def test_writes_are_atomic_and_leave_no_temp_files(tmp_path: Path) -> None:
    path = tmp_path / "j.json"
    journal = Journal(path, "dev")
    for i in range(20):
        journal.start("p", f"s{i}")
        journal.finish("p", f"s{i}")
    assert json.loads(path.read_text())["stack"] == "dev"
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_secret_values_never_reach_the_file(tmp_path: Path) -> None:
    path = tmp_path / "j.json"
    journal = Journal(path, "dev", secrets=["hunter2-token"])
    journal.start("p", "hook")
    journal.fail("p", "hook", "login with hunter2-token refused")
    assert "hunter2-token" not in path.read_text()
    assert "[secret]" in path.read_text()


def test_forget_drops_only_the_named_phases(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.json", "dev")
    for phase in ("a", "b"):
        journal.start(phase, "update")
        journal.finish(phase, "update")
    journal.forget(["a"])
    assert [r.phase for r in Journal(tmp_path / "j.json", "dev").records()] == ["b"]


def test_every_execution_is_kept_and_a_killed_one_reads_interrupted(tmp_path: Path) -> None:
    path = tmp_path / "j.json"
    Journal(path, "dev").start("drain-workers", "before:drain", destructive=True)
    # the process died here; the next run starts the step again and finishes it
    resumed = Journal(path, "dev")
    resumed.start("drain-workers", "before:drain", destructive=True)
    resumed.finish("drain-workers", "before:drain", "evicted 12 pods")

    record = Journal(path, "dev").get("drain-workers", "before:drain")
    assert record is not None
    assert [(e.attempt, e.status) for e in record.executions] == [
        (1, StepStatus.INTERRUPTED),
        (2, StepStatus.SUCCEEDED),
    ]
    assert all(e.pid > 0 for e in record.executions)
    assert record.executions[1].finished is not None


def test_a_steps_result_is_kept_with_secrets_redacted_at_any_depth(tmp_path: Path) -> None:
    path = tmp_path / "j.json"
    journal = Journal(path, "dev", secrets=["s3cr3t-value"])
    journal.start("p", "hook")
    details = {"availability": {"web": {"zero_endpoint_seconds": 0.0}}, "seen": ["s3cr3t-value"]}
    journal.finish("p", "hook", "probed", changed=True, details=details)

    record = Journal(path, "dev").get("p", "hook")
    assert record is not None and record.changed is True
    assert record.details["availability"] == {"web": {"zero_endpoint_seconds": 0.0}}
    assert "s3cr3t-value" not in path.read_text()


def test_a_ctrl_c_stop_is_recorded_and_cleared_when_the_run_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "j.json"
    journal = Journal(path, "dev")
    journal.start("drain-workers", "after:workers-gone")
    journal.interrupt("drain-workers", "after:workers-gone", "stopped on Ctrl-C")

    stopped = Journal(path, "dev")
    assert stopped.data.stopped_at == "drain-workers/after:workers-gone"
    assert not stopped.is_done("drain-workers", "after:workers-gone")
    stopped.start("drain-workers", "after:workers-gone")
    assert Journal(path, "dev").data.stopped_at == ""


def test_a_format_1_journal_is_read_and_upgraded_on_write(tmp_path: Path) -> None:
    path = tmp_path / "j.json"
    record = {"phase": "baseline", "step": "update", "status": "succeeded", "attempts": 1}
    old = {"stack": "dev", "version": 1, "steps": {"baseline/update": record}}
    path.write_text(json.dumps(old))

    journal = Journal(path, "dev")
    assert journal.is_done("baseline", "update")
    journal.start("network", "config")
    assert json.loads(path.read_text())["version"] == 4


def test_a_format_no_kubeshift_wrote_is_refused_in_one_sentence(tmp_path: Path) -> None:
    from automation.run.journal import JournalError

    path = tmp_path / "j.json"
    path.write_text(json.dumps({"stack": "dev", "version": 0, "steps": {}}))
    with pytest.raises(JournalError, match=r"format 0") as caught:
        Journal(path, "dev")
    assert "\n" not in str(caught.value)


def test_two_writers_keep_each_others_steps(tmp_path: Path) -> None:
    """A writer whose version moved re-reads, keeps the other's records and lays its own
    steps over them; neither loses a record."""
    path = tmp_path / "j.json"
    first, second = Journal(path, "dev"), Journal(path, "dev")
    first.start("p", "one")
    second.start("p", "two")  # written over a version it never read: merged
    first.finish("p", "one", "done by the first")
    second.finish("p", "two", "done by the second")

    again = Journal(path, "dev")
    assert {r.key: r.status for r in again.records()} == {
        "p/one": StepStatus.SUCCEEDED,
        "p/two": StepStatus.SUCCEEDED,
    }
    assert [e.operator for e in again.get("p", "one").executions] == [operator()]  # type: ignore[union-attr]


def test_a_forgotten_phase_stays_forgotten_when_the_writer_merges(tmp_path: Path) -> None:
    path = tmp_path / "j.json"
    seed = Journal(path, "dev")
    seed.start("old", "hook")
    seed.finish("old", "hook")
    forgetting, other = Journal(path, "dev"), Journal(path, "dev")
    other.start("new", "hook")
    forgetting.forget(["old"])

    assert {r.key for r in Journal(path, "dev").records()} == {"new/hook"}


class _AlwaysMoved(FileDocument):
    """A journal some other writer changes between every read and write."""

    writes = 0

    def replace(self, body: bytes, expected: str | None) -> str:
        self.writes += 1
        noise = {"stack": "dev", "version": 3, "stopped_at": f"other/{self.writes}"}
        super().replace(json.dumps(noise).encode(), expected)
        return super().replace(body, expected)


def test_a_journal_that_never_stops_moving_is_one_sentence(tmp_path: Path) -> None:
    journal = Journal(_AlwaysMoved(tmp_path / "j.json"), "dev")
    with pytest.raises(UserError, match=f"{MERGE_ATTEMPTS} writes in a row lost"):
        journal.start("p", "s")


def test_racing_threads_lose_no_record(tmp_path: Path) -> None:
    path = tmp_path / "j.json"
    start = threading.Barrier(4)

    def write(name: str) -> None:
        journal = Journal(path, "dev")
        start.wait()
        for index in range(10):
            journal.start(name, f"s{index}")
            journal.finish(name, f"s{index}")

    threads = [threading.Thread(target=write, args=(f"w{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    records = Journal(path, "dev").records()
    assert len(records) == 40 and all(r.done for r in records)
