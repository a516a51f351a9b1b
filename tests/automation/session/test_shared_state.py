"""A stack whose backend is shared: the journal this machine kept is taken over into it
once, and another operator's run lock refuses a session before anything changes."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pytest

from automation.config.clients import StaticClients
from automation.core.errors import StackLockedError
from automation.run.journal import Journal
from automation.session.hooks import HooksRequest, execute_hooks
from tests.automation.fakes import FakeEngine
from tests.automation.session.test_hooks import REPO, STACK, finished


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
    now = time.time()
    lock.write_text(json.dumps({
        "operator": "bob@laptop-bob", "host": "laptop-bob", "pid": 77, "process_start": None,
        "run_id": "b0b" * 10, "since": now - 60, "renewed": now, "lease_seconds": 120,
    }))  # fmt: skip
    engine = FakeEngine(progress=finished("baseline"))
    with pytest.raises(StackLockedError) as refused:
        _hooks(engine)
    assert "being migrated by bob@laptop-bob (pid 77, run b0bb0bb0)" in str(refused.value)
    assert refused.value.exit_code == 6
    assert [name for name, _ in engine.calls if name in {"up", "record"}] == []
    assert not _shared(backend, "journal.json").exists()
