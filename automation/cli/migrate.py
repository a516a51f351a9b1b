"""Commands that drive the engine through phases: ``preview``, ``run``, ``hooks``,
``replace-nodes``."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

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
    make_table,
    out,
    project_for,
)
from automation.core.errors import EXIT_CODES, ErrorKind, UserError

if TYPE_CHECKING:
    from automation.run.steps import RunReport

from automation.cli.root import app

# --- engine commands --------------------------------------------------------------------------


@app.command()
@handles_errors
def preview(
    ctx: typer.Context,
    phase: Annotated[str, typer.Option("--phase", "-p", metavar="PHASE", help="Phase to preview.")],
    stack: StackOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Preview a phase with the real engine and check it against the phase's allowed changes."""
    from automation.session.review import PreviewRequest, execute_preview

    name = chosen_stack(ctx, stack)
    report = execute_preview(PreviewRequest(project_for(name), name, phase))
    outcome, found = report.outcome, report.violations
    if json_output or globals_of(ctx).json:
        emit_json(
            {
                "phase": report.phase,
                "summary": outcome.summary,
                "changes": [c.__dict__ for c in outcome.changed()],
                "violations": [v.reason for v in found],
            }
        )
    else:
        table = Table("op", "type", "name", title=f"preview of {report.stack} @ {report.phase}")
        for change in outcome.changed():
            table.add_row(change.op, change.type, change.name)
        out.print(table)
        for violation in found:
            err.print(f"[red]not allowed:[/] {violation.reason}")
    if found:
        raise typer.Exit(3)


@app.command()
@handles_errors
def run(
    ctx: typer.Context,
    from_phase: Annotated[
        str | None, typer.Option("--from", metavar="PHASE", help="First phase.")
    ] = None,
    to_phase: Annotated[
        str | None, typer.Option("--to", metavar="PHASE", help="Last phase.")
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Confirm destructive steps.")] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would be done; change nothing.")
    ] = False,
    fresh: Annotated[
        bool, typer.Option("--fresh", help="Forget the journal of the chosen phases first.")
    ] = False,
    stack: StackOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Run the scenario's phases in order, resuming after the last finished step."""
    from automation.session.runs import RunRequest, execute

    g = globals_of(ctx)
    request = RunRequest(
        project=project_for(chosen_stack(ctx, stack)),
        stack=chosen_stack(ctx, stack),
        start=from_phase,
        stop=to_phase,
        yes=yes,
        dry_run=dry_run,
        fresh=fresh,
        interactive=sys.stdin.isatty() and not (json_output or g.json),
        json=json_output or g.json,
    )
    report = execute(request, console=err, confirm=typer.confirm)
    _print_outcomes(f"run of {request.stack}", report, request.json)
    if dry_run:
        _dry_run_verdict(report)


@app.command()
@handles_errors
def back(
    ctx: typer.Context,
    to_phase: Annotated[
        str, typer.Option("--to", metavar="PHASE", help="The earlier phase to go back to.")
    ],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Confirm destructive steps.")] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what going back would do; change nothing.")
    ] = False,
    stack: StackOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Take the stack back to an earlier phase: each later phase undone, the latest first,
    by its way back (`plan` shows each); refused before anything changes where a phase
    is a point of no return."""
    from automation.session.going_back import BackRequest, execute_back

    g = globals_of(ctx)
    request = BackRequest(
        project=project_for(chosen_stack(ctx, stack)),
        stack=chosen_stack(ctx, stack),
        to=to_phase,
        yes=yes,
        dry_run=dry_run,
        interactive=sys.stdin.isatty() and not (json_output or g.json),
        json=json_output or g.json,
    )
    report = execute_back(request, console=err, confirm=typer.confirm)
    _print_outcomes(f"way back of {request.stack} to {to_phase}", report, request.json)
    if dry_run:
        _dry_run_verdict(report)


def _dry_run_verdict(report: RunReport) -> None:
    """Say what the dry run planned from; exit 3 when some steps could not be evaluated."""
    unknown = report.unknown()
    if report.note:
        err.print(f"Dry run {report.note}.", markup=False)
    if unknown:
        steps = ", ".join(f"{o.phase}/{o.step}" for o in unknown[:5])
        more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        err.print(
            f"{len(unknown)} step(s) could not be evaluated now: {steps}{more}.", markup=False
        )
        raise typer.Exit(EXIT_CODES[ErrorKind.PRECONDITION])


def _print_outcomes(title: str, report: RunReport, as_json: bool) -> None:
    if as_json:
        emit_json(report.as_dicts())
        return
    cells = [(o.phase, o.step, o.status, o.message) for o in report.outcomes]
    out.print(make_table(title, ("phase", "step", "status", "message"), cells))


@app.command()
@handles_errors
def hooks(
    ctx: typer.Context,
    phase: Annotated[str, typer.Argument(metavar="PHASE", help="The phase whose steps to run.")],
    before: Annotated[
        bool, typer.Option("--before", help="The hooks and gates before the phase's update.")
    ] = False,
    after: Annotated[
        bool, typer.Option("--after", help="The hooks and gates after the phase's update.")
    ] = False,
    undo: Annotated[
        bool,
        typer.Option(
            "--undo",
            help="The steps of the phase's way back, around a `pulumi up` at the phase "
            "before it; --after then records the phase taken back.",
        ),
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Confirm destructive steps.")] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what the steps would do; change nothing.")
    ] = False,
    stack: StackOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Run one phase's hooks and gates around a `pulumi up` you run yourself, and record them."""
    from automation.session.hooks import HooksRequest, execute_hooks

    if before == after:
        raise UserError("Say which steps to run: --before or --after (one of them).")
    g = globals_of(ctx)
    name = chosen_stack(ctx, stack)
    request = HooksRequest(
        project=project_for(name),
        stack=name,
        phase=phase,
        side="before" if before else "after",
        undo=undo,
        yes=yes,
        dry_run=dry_run,
        interactive=sys.stdin.isatty() and not (json_output or g.json),
        json=json_output or g.json,
    )
    report = execute_hooks(request, console=err, confirm=typer.confirm)
    whose = f"{phase}'s way back" if undo else phase
    if report.outcomes or request.json:
        _print_outcomes(f"{request.side}-steps of {whose} on {name}", report, request.json)
    else:
        out.print(f"{whose} has no hooks or gates {request.side} its update.")
    if dry_run:
        _dry_run_verdict(report)
    elif request.json or (undo and request.side == "before"):
        pass
    elif undo:
        out.print(f"Recorded with the stack: {phase} taken back.")
    else:
        out.print(f"Recorded with the stack: {request.side} {phase}.")


@app.command("replace-nodes")
@handles_errors
def replace_nodes(
    ctx: typer.Context,
    nodes: Annotated[
        list[str], typer.Argument(metavar="NODE...", help="The nodes a gate named as broken.")
    ],
    phase: Annotated[
        str, typer.Option("--phase", help="The phase whose gate named them (journals there).")
    ],
    cluster: Annotated[
        str, typer.Option("--cluster", help="Which of the scenario's clusters they are in.")
    ] = "primary",
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            min=1,
            help="Seconds each node's drain, then its fresh node, may take.",
        ),
    ] = 1800.0,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Confirm without asking.")] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would be replaced; change nothing.")
    ] = False,
    stack: StackOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Replace broken nodes with fresh ones: cordon, drain, terminate in the group, wait."""
    from automation.session.hooks import ReplaceRequest, execute_replacement

    g = globals_of(ctx)
    name = chosen_stack(ctx, stack)
    request = ReplaceRequest(
        project=project_for(name),
        stack=name,
        phase=phase,
        nodes=tuple(nodes),
        cluster=cluster,
        timeout=timeout,
        yes=yes,
        dry_run=dry_run,
        interactive=sys.stdin.isatty() and not (json_output or g.json),
        json=json_output or g.json,
    )
    report = execute_replacement(request, console=err, confirm=typer.confirm)
    _print_outcomes(f"replace-nodes on {name} ({phase})", report, request.json)
    if dry_run:
        _dry_run_verdict(report)
