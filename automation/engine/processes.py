"""The engine's processes: marked as kubeshift's, found again after a kill.

``kubeshift run`` drives ``pulumi`` as a child process. When an operator's terminal
dies the whole group goes; when only kubeshift is killed, its ``pulumi`` child keeps
running the update it started and still holds the stack. The next run must neither
preview against a state that is still changing nor call a live update "stale": it
finds the orphans by the environment every engine process inherits
(``KUBESHIFT_STACK`` and ``KUBESHIFT_PROJECT``) and waits for the ``pulumi`` CLIs
among them to finish. Provider plugins whose CLI died with the kill (a CLI killed by
its closed output pipe does not stop them) serve nobody any more; they are stopped.

Finding them reads ``/proc/<pid>/environ``, which Linux gives a user for their own
processes. Elsewhere no orphan is found and the engine's own lock still refuses a
second update; the wait is a Linux nicety, not the safety.
"""

from __future__ import annotations

import contextlib
import os
import signal
from dataclasses import dataclass
from pathlib import Path

from components.contract.engine_vars import RUN_VAR

STACK_VAR = "KUBESHIFT_STACK"
PROJECT_VAR = "KUBESHIFT_PROJECT"
CLI_NAME = "pulumi"

_PROC = Path("/proc")


def engine_markers(project: Path, stack: str, run_id: str = "") -> dict[str, str]:
    """Environment that marks an engine process as this stack's (and this run's)."""
    markers = {STACK_VAR: stack, PROJECT_VAR: str(project.resolve())}
    if run_id:
        markers[RUN_VAR] = run_id
    return markers


@dataclass(frozen=True)
class EngineProcess:
    pid: int
    command: str
    run_id: str

    def describe(self) -> str:
        return f"{self.command} (pid {self.pid})"


def orphaned_engines(project: Path, stack: str, *, proc: Path = _PROC) -> list[EngineProcess]:
    """Live ``pulumi`` CLIs of ``stack`` that this process did not start."""
    return [p for p in _foreign_marked(project, stack, proc) if p.command == CLI_NAME]


def leftover_plugins(project: Path, stack: str, *, proc: Path = _PROC) -> list[EngineProcess]:
    """Marked processes of ``stack`` no live CLI runs: plugins a killed engine left."""
    marked = _foreign_marked(project, stack, proc)
    serving: set[int] = set()
    for cli in (p for p in marked if p.command == CLI_NAME):
        serving |= descendants(cli.pid, proc)
    return [p for p in marked if p.pid not in serving]


def stop_leftover_plugins(project: Path, stack: str) -> list[EngineProcess]:
    """SIGTERM the plugins of dead engines of ``stack``; return what was stopped."""
    stopped = []
    for plugin in leftover_plugins(project, stack):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(plugin.pid, signal.SIGTERM)
            stopped.append(plugin)
    return stopped


def _foreign_marked(project: Path, stack: str, proc: Path) -> list[EngineProcess]:
    """Processes marked as an engine of ``stack`` outside this process's own family."""
    wanted = {STACK_VAR: stack, PROJECT_VAR: str(project.resolve())}
    mine = descendants(os.getpid(), proc)
    found: list[EngineProcess] = []
    for entry in _pids(proc):
        if entry in mine:
            continue
        env = _environ(proc / str(entry))
        if env is None or any(env.get(k) != v for k, v in wanted.items()):
            continue
        found.append(EngineProcess(entry, _command(proc / str(entry)), env.get(RUN_VAR, "")))
    return sorted(found, key=lambda p: p.pid)


def _pids(proc: Path) -> list[int]:
    try:
        return [int(p.name) for p in proc.iterdir() if p.name.isdigit()]
    except OSError:
        return []


def _environ(process: Path) -> dict[str, str] | None:
    try:
        raw = (process / "environ").read_bytes()
    except OSError:  # gone, another user's, or no /proc
        return None
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, v in pairs}


def _command(process: Path) -> str:
    try:
        argv = (process / "cmdline").read_bytes().split(b"\0")
    except OSError:
        return "?"
    return Path(argv[0].decode(errors="replace")).name or "?"


def descendants(root: int, proc: Path = _PROC) -> set[int]:
    """``root`` and every process below it."""
    children: dict[int, list[int]] = {}
    for pid in _pids(proc):
        parent = _parent(proc / str(pid))
        if parent is not None:
            children.setdefault(parent, []).append(pid)
    family, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid not in family:
            family.add(pid)
            todo.extend(children.get(pid, []))
    return family


def _parent(process: Path) -> int | None:
    try:
        stat = (process / "stat").read_text()
    except OSError:
        return None
    # "pid (comm) state ppid ...": comm may hold spaces and parentheses
    fields = stat.rsplit(")", 1)[-1].split()
    return int(fields[1]) if len(fields) > 1 else None
