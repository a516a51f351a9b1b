"""``kubeshift sandbox …``: the sandbox's own command group, behind its own door.

The command line loads this module only when ``kubeshift sandbox`` is called
(``automation.cli.doors``); nothing on the production path imports it. Aiming other
commands at the sandbox is explicit: ``eval "$(kubeshift sandbox env)"``.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.table import Table

from automation.cli.common import (
    JsonOpt,
    StackOpt,
    chosen_stack,
    emit_json,
    err,
    globals_of,
    handles_errors,
    out,
)
from automation.cli.doors import SANDBOX_HELP as HELP
from automation.config.project import project_dir
from automation.core.errors import UserError
from automation.sandbox.commands import check_aimed as check_aimed
from automation.sandbox.state import StateBackend
from automation.sandbox.world import BuiltBy

app = typer.Typer(
    help=HELP,
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
)


@app.command("up")
@handles_errors
def sandbox_up(
    ctx: typer.Context,
    stack: StackOpt = None,
    moto_port: Annotated[
        int,
        typer.Option(
            "--moto-port",
            metavar="PORT",
            min=0,
            max=65535,
            help="Port for moto (default: any free port).",
        ),
    ] = 0,
    built_by: Annotated[
        BuiltBy,
        typer.Option(
            "--built-by",
            help="kops: boto3 calls under kops's names, no state (then `kubeshift adopt`); "
            "terraform-modules: boto3 calls under seed 001's Terraform modules' names, "
            "Terraform's state written; kubeshift: baseline through the engine, state kept.",
        ),
    ] = "kops",
    backend: Annotated[
        StateBackend,
        typer.Option(
            "--backend",
            help="Where the engine keeps the stack's state, and kubeshift its journal and run "
            "lock: file (a directory) or s3 (a bucket in the sandbox's moto).",
        ),
    ] = "file",
) -> None:
    """Start moto, the clusters, kwok and the node bridge; build the stack's live cluster
    as another tool would have, with no Pulumi state, for `kubeshift adopt`."""
    from automation.sandbox import commands

    report = commands.up(
        project_dir(), chosen_stack(ctx, stack), moto_port=moto_port, built_by=built_by,
        backend=backend,
        say=lambda line: err.print(line, markup=False, highlight=False),
    )  # fmt: skip
    verb = "started" if report.started else "already running"
    out.print(
        f"sandbox for {report.state.stack} {verb} ({report.seconds:.0f}s); "
        "`kubeshift sandbox env` prints its exports",
        markup=False,
    )


@app.command("down")
@handles_errors
def sandbox_down() -> None:
    """Stop every sandbox process and forget its world."""
    from automation.sandbox import commands

    commands.down(project_dir(), say=lambda line: out.print(line, markup=False))


@app.command("status")
@handles_errors
def sandbox_status(ctx: typer.Context, json_output: JsonOpt = False) -> None:
    """What the sandbox runs and where."""
    from automation.sandbox.commands import sandbox_paths
    from automation.sandbox.state import load_state

    state = load_state(sandbox_paths(project_dir()).state_file)
    if state is None:
        raise UserError("No sandbox is running; start one with `kubeshift sandbox up`.")
    rows = [{**p.model_dump(), "running": p.running()} for p in state.processes]
    if json_output or globals_of(ctx).json:
        emit_json({**state.model_dump(), "processes": rows})
        return
    table = Table("process", "pid", "running", "address", "log",
                  title=f"sandbox for {state.stack} ({state.scenario})")  # fmt: skip
    for row in rows:
        table.add_row(row["name"], str(row["pid"]), "yes" if row["running"] else "NO",
                      row["address"], row["log"])  # fmt: skip
    out.print(table)
    for line in state.mappings:
        out.print(f"  {line}", markup=False)


@app.command("env")
@handles_errors
def sandbox_env() -> None:
    """Print the exports that aim pulumi, kubectl and kubeshift at the sandbox."""
    import shlex

    from automation.sandbox.commands import sandbox_paths
    from automation.sandbox.state import load_state
    from automation.sandbox.workspace import sandbox_env as exports
    from automation.sandbox.workspace import unset_for_sandbox

    paths = sandbox_paths(project_dir())
    state = load_state(paths.state_file)
    if state is None:
        raise UserError("No sandbox is running; start one with `kubeshift sandbox up`.")
    for name in unset_for_sandbox():
        sys.stdout.write(f"unset {name}\n")
    for key, value in exports(paths, state).items():
        sys.stdout.write(f"export {key}={shlex.quote(value)}\n")
    sys.stdout.write(f"cd {shlex.quote(str(paths.workspace))}\n")
