"""The run's mark, and the program refusing a by-hand update while a run migrates."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pulumi
import pytest

from components import program
from components.contract.engine_vars import RUN_VAR
from components.contract.run_marker import (
    competing_run,
    marker_path,
    read_mark,
    write_mark,
)


@pytest.fixture
def by_hand(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An update (not a preview) of stack ``prod`` run by hand from ``tmp_path``."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KUBESHIFT_STATE_DIR", raising=False)
    monkeypatch.delenv(RUN_VAR, raising=False)
    monkeypatch.setattr(pulumi.runtime, "is_dry_run", lambda: False)
    monkeypatch.setattr(pulumi, "get_stack", lambda: "prod")
    return tmp_path / ".kubeshift"


def test_an_update_by_hand_during_a_live_run_is_refused(by_hand: Path) -> None:
    write_mark(marker_path(by_hand, "prod"), "run-1")  # this test process is the live run
    with pytest.raises(pulumi.RunError, match=r"being migrated by `kubeshift run`"):
        program.refuse_update_during_a_run()


def test_the_runs_own_engine_and_previews_pass(
    by_hand: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_mark(marker_path(by_hand, "prod"), "run-1")
    assert competing_run(by_hand, "prod", None) is not None  # the mark binds a stranger
    monkeypatch.setenv(RUN_VAR, "run-1")
    program.refuse_update_during_a_run()
    monkeypatch.delenv(RUN_VAR)
    monkeypatch.setattr(pulumi.runtime, "is_dry_run", lambda: True)
    program.refuse_update_during_a_run()


def test_a_killed_runs_mark_binds_nothing(by_hand: Path) -> None:
    path = marker_path(by_hand, "prod")
    path.parent.mkdir(parents=True)
    done = subprocess.run(
        [sys.executable, "-c", f"from components.contract.run_marker import write_mark; "
         f"from pathlib import Path; write_mark(Path({str(path)!r}), 'gone')"],
        check=True,
    )  # fmt: skip
    assert done.returncode == 0
    assert read_mark(path) is not None and read_mark(path).run_id == "gone"
    assert competing_run(by_hand, "prod", None) is None
    program.refuse_update_during_a_run()


def test_a_torn_mark_binds_nothing(by_hand: Path) -> None:
    path = marker_path(by_hand, "prod")
    path.parent.mkdir(parents=True)
    path.write_text('{"pid": ')
    assert read_mark(path) is None
    program.refuse_update_during_a_run()
