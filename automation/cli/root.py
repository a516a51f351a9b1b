"""The ``kubeshift`` group itself: its global options, and the groups behind a door."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from automation.cli.common import Globals, err, handles_errors
from automation.cli.doors import DOORS, SANDBOX_VARIABLE, DoorGroup, check_aimed
from automation.config.project import DEFAULT_STACK

app = typer.Typer(
    name="kubeshift",
    cls=DoorGroup,
    help="Zero-downtime migrations of live Kubernetes clusters on AWS, phase by phase.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


@app.callback()
@handles_errors
def main_options(
    ctx: typer.Context,
    stack: Annotated[
        str,
        typer.Option("--stack", "-s", metavar="NAME", help="Stack name (stacks/Pulumi.NAME.yaml)."),
    ] = DEFAULT_STACK,
    json_output: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Debug logging.")] = False,
) -> None:
    """Zero-downtime migrations of live Kubernetes clusters on AWS, phase by phase."""
    from automation.core import logs

    ctx.obj = Globals(stack=stack, json=json_output, verbose=verbose)
    logs.configure(verbose=verbose, json_lines=json_output, console=err)
    sandbox = os.environ.get(SANDBOX_VARIABLE)
    if sandbox and ctx.invoked_subcommand not in DOORS:
        err.print(
            f"aimed at the sandbox in {sandbox} (`kubeshift sandbox env` exported "
            f"{SANDBOX_VARIABLE}; a shell without it runs against the project as configured)",
            markup=False,
            highlight=False,
        )
        check_aimed("sandbox", sandbox)
