"""The mark a ``kubeshift run`` leaves while it migrates a stack, read by the program.

Between its engine operations a run drains nodes, moves DNS and waits on gates; the
engine's own lock is free then, so nothing in Pulumi stops a second operator's
``pulumi up`` from changing the stack under the run. The run therefore writes
``<state dir>/<stack>.run.json`` (its pid, the pid's start time and a run id) for as
long as it holds the stack, and passes the run id to its own engine processes. The
program refuses to *update* a stack whose mark names a live run other than the one
driving it — before it declares any resource, so nothing is written. Previews stay
allowed: reading is harmless, and reviewers preview while a run goes on.

A run killed outright leaves its mark behind; the mark's process is gone (or the pid
now belongs to another process, told apart by its start time), so it binds nothing.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

STATE_DIR_VAR = "KUBESHIFT_STATE_DIR"


def state_dir(project_dir: Path) -> Path:
    """Where journals, locks and run marks live: ``$KUBESHIFT_STATE_DIR`` or ``.kubeshift/``."""
    override = os.environ.get(STATE_DIR_VAR)
    return Path(override) if override else project_dir / ".kubeshift"


def marker_path(directory: Path, stack: str) -> Path:
    return directory / f"{stack}.run.json"


@dataclass(frozen=True)
class RunMark:
    pid: int
    started: int | None  # kernel start time of ``pid``
    run_id: str

    @property
    def alive(self) -> bool:
        return alive(self.pid, self.started)


def write_mark(path: Path, run_id: str) -> RunMark:
    mark = RunMark(os.getpid(), process_start(os.getpid()), run_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(mark)))
    os.replace(tmp, path)
    return mark


def read_mark(path: Path) -> RunMark | None:
    """The mark at ``path``; None when absent or unreadable (a torn mark binds nothing)."""
    try:
        raw = json.loads(path.read_text())
        return RunMark(int(raw["pid"]), raw.get("started"), str(raw["run_id"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def clear_mark(path: Path, run_id: str) -> None:
    """Remove the mark if it is still this run's."""
    mark = read_mark(path)
    if mark is not None and mark.run_id == run_id:
        path.unlink(missing_ok=True)


def competing_run(directory: Path, stack: str, own_run: str | None) -> RunMark | None:
    """The live run migrating ``stack``, unless it is ``own_run``."""
    mark = read_mark(marker_path(directory, stack))
    if mark is None or mark.run_id == own_run or not mark.alive:
        return None
    return mark


def process_start(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot, /proc), or None if unknown or gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def alive(pid: int, started: int | None = None) -> bool:
    """``pid`` runs — and, when ``started`` is known, is still the same process."""
    if started is not None:
        now = process_start(pid)
        if now is not None and now != started:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
