"""A ``kubeshift run`` for the engine-test project, as a separate process.

Why this exists: ``kubeshift run`` only knows the real scenarios and their stack files;
the kill/resume and locking tests need a run they can kill and race, with the CLI's own
error handling. This is that run: the CLI's ``handles_errors`` (one line on stderr, the
error kind's exit code), then the lock, the journal and the runner, as
``automation.session.runs.execute`` does (through ``session.assembly``).

Usage: python -m tests.integration.engine.drive run PROJECT STATE_DIR [--start ID] [--stop ID]
       python -m tests.integration.engine.drive recover PROJECT STATE_DIR [--force]
"""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import Annotated

import typer

from automation.cli.common import handles_errors
from automation.core.documents import FileDocument
from automation.core.progress import NullReporter
from automation.run.run_lock import run_lock
from automation.session.assembly import wait_for_orphaned_engines
from automation.session.recovery import recover_engine, refuse_while_orphans_work
from tests.integration.engine.scenario import STACK, build_runner, lock_path, scenario

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


def _echo(line: str) -> None:
    sys.stdout.write(line if line.endswith("\n") else line + "\n")
    sys.stdout.flush()


@app.command()
@handles_errors
def run(
    project: Path,
    state: Path,
    start: Annotated[str | None, typer.Option()] = None,
    stop: Annotated[str | None, typer.Option()] = None,
) -> None:
    """Run the phases from START to STOP of the engine-test scenario."""
    phases = scenario().slice(start, stop)
    with run_lock(FileDocument(lock_path(state)), STACK, uuid.uuid4().hex):
        wait_for_orphaned_engines(project, STACK, NullReporter())
        _engine, _journal, runner = build_runner(project, state, on_output=_echo)
        report = runner.run(phases)
    for outcome in report.outcomes:
        _echo(f"{outcome.phase}/{outcome.step}: {outcome.status} {outcome.message}")


@app.command()
@handles_errors
def recover(project: Path, state: Path, force: bool = False) -> None:
    """``kubeshift recover`` for the engine-test stack, confirming as --yes does."""
    with run_lock(FileDocument(lock_path(state)), STACK, uuid.uuid4().hex):
        refuse_while_orphans_work(project, STACK)
        engine, journal, _runner = build_runner(project, state, on_output=_echo)
        done = recover_engine(engine, journal, STACK, force=force, confirm=lambda _q: True)
    _echo(f"recovered: {len(done.pending)} pending, stale locks: {done.stale_locks}")


if __name__ == "__main__":
    app()
