"""A stack whose backend is shared: the journal this machine kept is taken over into it
once, and another operator's run lock refuses a session before anything changes."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from automation.config.clients import StaticClients
from automation.core.errors import StackLockedError, UserError
from automation.run.journal import Journal
from automation.session.hooks import HooksRequest, execute_hooks
from tests.automation.fakes import FakeEngine
from tests.automation.session.test_hooks import REPO, STACK, finished
from tests.support.run_locks import foreign_lock


@pytest.fixture
def backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KUBESHIFT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("PULUMI_BACKEND_URL", (tmp_path / "backend").as_uri())
    return tmp_path / "backend"


def _shared(backend: Path, name: str) -> Path:
    return backend / ".kubeshift" / "kubeshift" / STACK / name


def _hooks(engine: FakeEngine) -> None:
    request = HooksRequest(REPO, STACK, "target-network", "before", yes=True)
    execute_hooks(request, engine_factory=lambda *_: engine, clients=StaticClients())


def test_this_machines_journal_is_taken_over_into_the_backend_once(
    backend: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    local = tmp_path / "state" / f"{STACK}.journal.json"
    earlier = Journal(local, STACK)
    earlier.start("baseline", "update")
    earlier.finish("baseline", "update", "applied before the backend was shared")

    with caplog.at_level(logging.WARNING):
        _hooks(FakeEngine(progress=finished("baseline")))

    shared = Journal(_shared(backend, "journal.json"), STACK)
    record = shared.get("baseline", "update")
    assert record is not None and record.message == "applied before the backend was shared"
    assert not local.exists() and local.with_name(local.name + ".moved").is_file()
    assert "took this machine's journal" in caplog.text
    assert not _shared(backend, "lock.json").exists(), "the run lock is released"


def test_another_operators_run_refuses_the_session_naming_them(backend: Path) -> None:
    lock = _shared(backend, "lock.json")
    lock.parent.mkdir(parents=True)
    lock.write_bytes(foreign_lock("bob@laptop-bob", renewed=time.time(), pid=77))
    engine = FakeEngine(progress=finished("baseline"))
    with pytest.raises(StackLockedError) as refused:
        _hooks(engine)
    assert "being migrated by bob@laptop-bob (pid 77, run llllllll)" in str(refused.value)
    assert refused.value.exit_code == 6
    assert [name for name, _ in engine.calls if name in {"up", "record"}] == []
    assert not _shared(backend, "journal.json").exists()


def _stale(backend: Path) -> Path:
    lock = _shared(backend, "lock.json")
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_bytes(foreign_lock("carol@ci-runner-9", renewed=time.time() - 3600))
    return lock


@pytest.mark.parametrize("answer", [None, False])
def test_recovery_removes_a_stale_lock_only_once_confirmed(
    backend: Path, answer: bool | None
) -> None:
    from automation.session.recovery import recover

    lock = _stale(backend)
    before = lock.read_text()

    def no_engine(*_: object) -> FakeEngine:
        raise AssertionError("nothing may start before the stale lock's removal is confirmed")

    confirm = None if answer is None else (lambda _question: answer)
    with pytest.raises(UserError) as refused:
        recover(REPO, STACK, confirm=confirm, engine_factory=no_engine)
    assert "carol@ci-runner-9" in str(refused.value) and "past its lease" in str(refused.value)
    assert lock.read_text() == before, "the stale lock is left as it was"


def test_status_names_who_holds_the_run_lock(backend: Path) -> None:
    from automation.core.documents import FileDocument
    from automation.run.run_lock import lock_sentence

    document = FileDocument(_shared(backend, "lock.json"))
    assert lock_sentence(document) == "No run holds the stack's run lock."
    _stale(backend)
    assert "carol@ci-runner-9" in lock_sentence(document)
    assert "(stale): `kubeshift recover` removes it" in lock_sentence(document)


def test_a_damaged_run_lock_is_said_and_only_a_confirmed_recovery_replaces_it(
    backend: Path,
) -> None:
    from automation.core.documents import FileDocument
    from automation.run.run_lock import lock_sentence
    from automation.session.recovery import recover

    lock = _shared(backend, "lock.json")
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("{not json")
    assert "is damaged" in lock_sentence(FileDocument(lock))  # status goes on
    with pytest.raises(UserError, match="is damaged"):
        _hooks(FakeEngine(progress=finished("baseline")))
    with pytest.raises(UserError, match=r"which is damaged .* was left as it is"):
        recover(REPO, STACK, confirm=lambda _q: False)
    assert lock.read_text() == "{not json"

    def reached(*_: object) -> FakeEngine:
        raise RuntimeError("the engine, with the lock held")

    with pytest.raises(RuntimeError, match="with the lock held"):
        recover(REPO, STACK, confirm=lambda _q: True, engine_factory=reached)
    assert not lock.exists(), "replaced by the recovery's own lock, released on the way out"


def test_going_back_while_another_operators_run_holds_the_lock_is_refused(
    backend: Path,
) -> None:
    """``back`` (and ``hooks --undo``) refuse in one sentence naming the holder, and
    change nothing: no update, no record, no journal."""
    from automation.session.going_back import BackRequest, execute_back

    lock = _shared(backend, "lock.json")
    lock.parent.mkdir(parents=True)
    lock.write_bytes(foreign_lock("bob@laptop-bob", renewed=time.time(), pid=77))
    engine = FakeEngine(progress=finished("baseline", "target-network"))
    engine.phase = "target-network"
    with pytest.raises(StackLockedError) as refused:
        execute_back(
            BackRequest(REPO, STACK, "baseline", yes=True),
            engine_factory=lambda *_: engine,
            clients=StaticClients(),
        )
    assert "being migrated by bob@laptop-bob" in str(refused.value)
    undo = HooksRequest(REPO, STACK, "target-network", "before", undo=True, yes=True)
    with pytest.raises(StackLockedError):
        execute_hooks(undo, engine_factory=lambda *_: engine, clients=StaticClients())
    assert [name for name, _ in engine.calls if name in {"up", "record", "set_phase"}] == []
    assert not _shared(backend, "journal.json").exists()
    assert engine.progress.finished("target-network") is not None
