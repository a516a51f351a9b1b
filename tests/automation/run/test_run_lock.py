"""The run lock: one holder, named to whoever is refused; a dead holder of this host
taken over, a stale one elsewhere left to ``kubeshift recover``; renewed while held."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from automation.config.lock_settings import LeaseSettings
from automation.core import interrupt
from automation.core.documents import FileDocument
from automation.core.errors import StackLockedError
from automation.run.run_lock import RunLock, read_holder, run_lock
from tests.support.run_locks import foreign_lock

HOLD = (
    "import sys, time, pathlib\n"
    "from automation.core.documents import FileDocument\n"
    "from automation.run.run_lock import run_lock\n"
    "with run_lock(FileDocument(pathlib.Path(sys.argv[1])), 'dev', 'holder-run-id'):\n"
    "    print('held', flush=True); time.sleep(60)\n"
)


def test_a_second_run_is_refused_naming_the_holder_and_takes_over_once_it_died(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    document = FileDocument(tmp_path / "lock.json")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(document.path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(StackLockedError) as refused, run_lock(document, "dev", "second"):
            pass
        assert f"pid {holder.pid}, run holder-r" in str(refused.value)
        assert "being migrated by" in str(refused.value) and refused.value.exit_code == 6
    finally:
        holder.kill()
        holder.wait()
    # its process is gone from this host: the next run takes the lock, saying so
    with caplog.at_level(logging.WARNING), run_lock(document, "dev", "third") as lock:
        assert lock.replaced is not None and lock.replaced.pid == holder.pid
        current = read_holder(document)
        assert current is not None and current[0].run_id == "third"
    assert "its process is gone" in caplog.text
    assert read_holder(document) is None  # released


def _foreign(document: FileDocument, *, renewed: float, lease: float = 60.0) -> None:
    document.replace(foreign_lock("alice@ci-runner-7", renewed=renewed, lease=lease), None)


def test_a_lock_held_elsewhere_is_refused_until_recovery_takes_it_past_its_lease(
    tmp_path: Path,
) -> None:
    document = FileDocument(tmp_path / "lock.json")
    now = 1_000_000.0
    _foreign(document, renewed=now - 30)
    with pytest.raises(StackLockedError, match="being migrated by alice@ci-runner-7"):
        RunLock(document, "dev", "mine", clock=lambda: now).acquire()
    with pytest.raises(StackLockedError, match="being migrated"):  # within its lease
        RunLock(document, "dev", "mine", clock=lambda: now).acquire(take_stale=True)

    later = now + 31
    with pytest.raises(StackLockedError, match=r"lease ran out .* `kubeshift recover` removes"):
        RunLock(document, "dev", "mine", clock=lambda: later).acquire()
    recovery = RunLock(document, "dev", "mine", clock=lambda: later)
    recovery.acquire(take_stale=True)
    try:
        assert recovery.replaced is not None and recovery.replaced.operator == "alice@ci-runner-7"
    finally:
        recovery.release()
    assert read_holder(document) is None


class _Renewals(FileDocument):
    """A lock file that says when a write replaced the one before (a renewal)."""

    renewed = threading.Event()

    def replace(self, body: bytes, expected: str | None) -> str:
        version = super().replace(body, expected)
        if expected is not None:
            self.renewed.set()
        return version


def test_the_holder_renews_its_lease_while_it_runs(tmp_path: Path) -> None:
    document = _Renewals(tmp_path / "lock.json")
    document.renewed = threading.Event()
    settings = LeaseSettings(lease_seconds=5, renew_seconds=0.01)
    with run_lock(document, "dev", "renewing", settings):
        first = read_holder(document)
        assert document.renewed.wait(30), "the lease was never renewed"
        now = read_holder(document)
        assert first is not None and now is not None
        assert now[0].run_id == "renewing" and now[0].renewed >= first[0].renewed


def test_a_holder_whose_lock_was_taken_stops_at_its_next_safe_point(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(interrupt, "_stop", threading.Event())  # this test's own
    document = FileDocument(tmp_path / "lock.json")
    settings = LeaseSettings(lease_seconds=5, renew_seconds=0.01)
    lock = RunLock(document, "dev", "slow", settings)
    lock.acquire()
    stored = document.read()
    assert stored is not None
    document.delete(stored.version)  # what a recovery elsewhere does to a stale lock
    _foreign(document, renewed=2e9)
    with caplog.at_level(logging.ERROR):
        assert lock._renewer is not None
        lock._renewer.join(30)
    assert lock.lost and "was taken from this run" in caplog.text
    assert interrupt.stop_requested(), "the run stops at its next safe point"
    lock.release()
    current = read_holder(document)
    assert current is not None and current[0].operator == "alice@ci-runner-7"  # left alone


def test_of_two_racing_runs_exactly_one_takes_the_lock(tmp_path: Path) -> None:
    document = FileDocument(tmp_path / "lock.json")
    start = threading.Barrier(2)
    outcomes: list[str] = []
    held: list[RunLock] = []

    def attempt(run_id: str) -> None:
        lock = RunLock(document, "dev", run_id)
        start.wait()
        try:
            lock.acquire()
            outcomes.append("held")
            held.append(lock)
        except StackLockedError:
            outcomes.append("refused")

    threads = [threading.Thread(target=attempt, args=(f"run-{n}",)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for lock in held:
        lock.release()
    assert sorted(outcomes) == ["held", "refused"]
