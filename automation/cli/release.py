"""``kubeshift release``: the tool that built the cluster lets go of what kubeshift took."""

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
def release(
    ctx: typer.Context,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Release without asking.")] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would be released; move nothing.")
    ] = False,
    stack: StackOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Move the instance groups kubeshift adopted out of kops's state store
    (kubeshift:runtime.kops_state), so kops's next update leaves them alone."""
    from automation.session.assembly import confirmer
    from automation.session.release import release as run_release

    name = chosen_stack(ctx, stack)
    as_json = json_output or globals_of(ctx).json
    interactive = sys.stdin.isatty() and not as_json
    confirm = confirmer(yes, interactive, typer.confirm)
    found = run_release(project_for(name), name, dry_run=dry_run, confirm=confirm)
    if as_json:
        emit_json(dataclasses.asdict(found))
        return
    if not found.groups:
        out.print(f"kops's state store {found.store} holds no instance group stack '{name}' took.")
        return
    verb = "released" if found.moved else "would release (dry run)"
    out.print(
        f"{name}: {verb} {len(found.groups)} instance group(s) of {found.store}: "
        f"{', '.join(found.groups)}. By hand, the same is:",
        markup=False, highlight=False,
    )  # fmt: skip
    for command in found.commands:
        out.print(f"  {command}", markup=False, highlight=False)
