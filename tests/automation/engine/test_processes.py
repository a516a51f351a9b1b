"""Finding the engine a killed run left behind, by the markers in its environment."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from automation.engine.processes import (
    engine_markers,
    leftover_plugins,
    orphaned_engines,
    stop_leftover_plugins,
)


def _orphan(tmp_path: Path, name: str, project: Path, stack: str) -> int:
    """Start ``name`` (a renamed sleep) under a shell that exits: its parent is gone."""
    binary = tmp_path / name
    binary.symlink_to("/bin/sleep")
    env = {**os.environ, **engine_markers(project, stack, "killed-run")}
    shell = subprocess.run(
        ["sh", "-c", f"{binary} 60 >/dev/null 2>&1 & echo $!"],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    pid = int(shell.stdout)
    cmdline = Path(f"/proc/{pid}/cmdline")
    while not cmdline.read_bytes().split(b"\0")[0].endswith(name.encode()):
        time.sleep(0.01)  # the shell returns before its child has exec'd
    return pid


def _gone(pid: int, timeout: float = 10) -> bool:
    ends = time.monotonic() + timeout
    while time.monotonic() < ends:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        if Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z":
            return True
        time.sleep(0.05)
    return False


def test_an_orphaned_cli_is_found_for_its_stack_only(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    pid = _orphan(tmp_path, "pulumi", project, "prod")
    try:
        assert [p.pid for p in orphaned_engines(project, "prod")] == [pid]
        assert orphaned_engines(project, "staging") == []
        assert orphaned_engines(tmp_path / "other", "prod") == []
        assert leftover_plugins(project, "prod") == [], "a CLI is waited for, not stopped"
    finally:
        os.kill(pid, signal.SIGKILL)


def test_a_plugin_whose_cli_died_is_stopped(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    pid = _orphan(tmp_path, "pulumi-resource-aws", project, "prod")
    try:
        assert orphaned_engines(project, "prod") == []
        stopped = stop_leftover_plugins(project, "prod")
        assert [p.pid for p in stopped] == [pid]
        assert _gone(pid)
    finally:
        if not _gone(pid, 0.1):
            os.kill(pid, signal.SIGKILL)


def test_this_runs_own_engine_is_no_orphan(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    binary = tmp_path / "pulumi"
    binary.symlink_to("/bin/sleep")
    env = {**os.environ, **engine_markers(project, "prod", "this-run")}
    child = subprocess.Popen([str(binary), "60"], env=env)
    while not Path(f"/proc/{child.pid}/environ").read_bytes():
        time.sleep(0.01)
    try:
        assert orphaned_engines(project, "prod") == []
    finally:
        child.kill()
        child.wait()
