"""Offline review, no engine: ``scenarios``, ``plan``, ``render``, ``diff``."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from automation.cli.common import (
    JsonOpt,
    MarkdownOpt,
    StackOpt,
    chosen_stack,
    emit_json,
    err,
    globals_of,
    handles_errors,
    make_table,
    out,
)
from automation.config.project import project_dir
from automation.core.errors import EXIT_CODES, ErrorKind

if TYPE_CHECKING:
    pass

from automation.cli.root import app

# --- scenarios and plan ---------------------------------------------------------------------


@app.command()
@handles_errors
def scenarios(ctx: typer.Context, json_output: JsonOpt = False) -> None:
    """List the migration scenarios kubeshift knows."""
    from components.contract import registry

    if json_output or globals_of(ctx).json:
        emit_json(
            [
                {"id": s.id, "summary": s.summary, "phases": list(s.phase_ids())}
                for s in registry.specs()
            ]
        )
        return
    table = Table("scenario", "phases", "summary")
    for spec in registry.specs():
        table.add_row(spec.id, str(len(spec.phase_ids())), spec.summary)
    out.print(table)


@app.command()
@handles_errors
def plan(
    ctx: typer.Context,
    stack: StackOpt = None,
    json_output: JsonOpt = False,
    markdown: MarkdownOpt = False,
) -> None:
    """Show the phase table of a stack: id, summary, destructive, gates; then its
    points of no return."""
    from automation.session.review import PlanRequest, execute_plan

    report = execute_plan(PlanRequest(project_dir(), chosen_stack(ctx, stack)))
    rows = report.phases
    if json_output or globals_of(ctx).json:
        emit_json({"stack": report.stack, "scenario": report.scenario, "phases": rows})
        return
    if markdown:
        from automation.review.markdown import plan_markdown

        sys.stdout.write(plan_markdown(report.scenario, rows))
        return
    cells = [
        (str(index), row["id"], row["summary"], "yes" if row["destructive"] else "no",
         "\n".join(row["gates"]) or "-")
        for index, row in enumerate(rows, 1)
    ]  # fmt: skip
    columns = ("#", "phase", "summary", "destructive", "gates")
    out.print(make_table(f"{report.stack}: {report.scenario}", columns, cells, lines=True))
    for row in rows:
        if row["point_of_no_return"]:
            out.print(f"Point of no return: {row['id']}: {row['point_of_no_return']}.")


# --- offline review -------------------------------------------------------------------------


@app.command()
@handles_errors
def render(
    ctx: typer.Context,
    phase: Annotated[
        str | None, typer.Option("--phase", "-p", metavar="PHASE", help="Phase to render.")
    ] = None,
    stack: StackOpt = None,
    config: Annotated[
        Path | None,
        typer.Option("--config", metavar="FILE", help="Render this stack file instead."),
    ] = None,
    json_output: JsonOpt = False,
) -> None:
    """List every resource the program declares for a phase, offline (Pulumi mocks)."""
    from automation.session.review import RenderRequest, execute_render

    request = RenderRequest(project_dir(), chosen_stack(ctx, stack), (phase,), config)
    with err.status(f"rendering {request.stack} at {phase or 'its phase'} (offline)"):
        report = execute_render(request)
    resources, chosen = report.resources[0], report.phases[0]
    if json_output or globals_of(ctx).json:
        emit_json(
            [
                {"type": r.type, "name": r.name, "parent": r.parent, "inputs": r.inputs}
                for r in resources
            ]
        )
    else:
        counts: dict[str, int] = {}
        for resource in resources:
            counts[resource.type] = counts.get(resource.type, 0) + 1
        title = f"{report.stack} @ {chosen}: {len(resources)} resources"
        table = Table("type", "count", title=title)
        for type_token, count in sorted(counts.items()):
            table.add_row(type_token, str(count))
        out.print(table)
    _refuse_policy_violations(report.violations)


def _refuse_policy_violations(found: Sequence[str]) -> None:
    """Every render is checked against ``components.contract.policy``; a violation exits 3."""
    for violation in found:
        err.print(f"policy: {violation}", markup=False)
    if found:
        raise typer.Exit(EXIT_CODES[ErrorKind.PRECONDITION])


@app.command()
@handles_errors
def diff(
    ctx: typer.Context,
    from_phase: Annotated[str, typer.Option("--from", metavar="PHASE", help="Phase before.")],
    to_phase: Annotated[str, typer.Option("--to", metavar="PHASE", help="Phase after.")],
    stack: StackOpt = None,
    json_output: JsonOpt = False,
    markdown: MarkdownOpt = False,
) -> None:
    """Resources added, removed and changed between two phases (offline)."""
    from automation.review.diff import count_by_type
    from automation.session.review import RenderRequest, diff_of, execute_render

    request = RenderRequest(project_dir(), chosen_stack(ctx, stack), (from_phase, to_phase))
    with err.status(f"rendering {request.stack} at {from_phase} and {to_phase} (offline)"):
        report = execute_render(request)
    _refuse_policy_violations(report.violations)
    result = diff_of(report)
    if json_output or globals_of(ctx).json:
        emit_json({"stack": report.stack, "from": from_phase, "to": to_phase, **result.as_dict()})
        return
    if markdown:
        from automation.review.markdown import diff_markdown

        sys.stdout.write(diff_markdown(report.stack, from_phase, to_phase, result))
        return
    out.print(
        f"[bold]{report.stack}[/]: {from_phase} → {to_phase}: {len(result.added)} added, "
        f"{len(result.removed)} removed, {len(result.changed)} changed, "
        f"{len(result.moved)} moved by alias"
    )
    for label, keys, style in (
        ("added", result.added, "green"),
        ("removed", result.removed, "red"),
    ):
        for type_token, count in count_by_type(keys).items():
            out.print(f"  [{style}]{label:8}[/] {count:4} x {type_token}")
    for key, fields in result.changed.items():
        out.print(f"  [yellow]changed [/]      {key}: {', '.join(fields)}")
    for new, old in result.moved.items():
        out.print(f"  [blue]moved   [/]      {old.name} → {new.name} ({new.type}, state kept)")
