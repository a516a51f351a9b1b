"""``kubeshift recover``: the one safe way on after the engine itself was killed."""

from __future__ import annotations

import dataclasses
import sys
from typing import Annotated

import typer

from automation.cli.common import (
    JsonOpt,
    StackOpt,
    chosen_stack,
    emit_json,
    globals_of,
    handles_errors,
    out,
    project_for,
)
from automation.cli.root import app


@app.command()
@handles_errors
def recover(
    ctx: typer.Context,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Recover without asking.")] = False,
    force: Annotated[
        bool,
        typer.Option("--force", help="Also remove a lock taken on another machine."),
    ] = False,
    stack: StackOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """After a killed engine: remove its stale lock, refresh, clear its pending operations."""
    from automation.session.assembly import confirmer
    from automation.session.recovery import recover as run_recovery

    name = chosen_stack(ctx, stack)
    as_json = json_output or globals_of(ctx).json
    interactive = sys.stdin.isatty() and not as_json
    confirm = confirmer(yes, interactive, typer.confirm)
    recovery = run_recovery(project_for(name), name, force=force, confirm=confirm)
    if as_json:
        emit_json(dataclasses.asdict(recovery))
        return
    out.print(f"Recovered stack '{name}': {len(recovery.pending)} pending operation(s) cleared.")
    for lock in recovery.stale_locks:
        out.print(f"  removed the stale lock of {lock}")
    for urn, live_id in recovery.taken.items():
        out.print(f"  its create had completed; taken into the state as {live_id}: {urn}")
    for create in recovery.pending_creates:
        out.print(f"  check the cloud for a copy of: {create}")
    out.print(f"Run `kubeshift --stack {name} run` to continue.")
