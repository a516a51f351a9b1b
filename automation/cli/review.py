"""Offline review, no engine: ``scenarios``, ``plan``, ``render``, ``diff``."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

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
    from automation.config.project import StackInfo
    from automation.review.rendered import RenderedResource

from automation.cli.root import app

# --- scenarios and plan ---------------------------------------------------------------------


@app.command()
@handles_errors
def scenarios(ctx: typer.Context, json_output: JsonOpt = False) -> None:
    """List the migration scenarios kubeshift knows."""
    from components import registry

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
    """Show the phase table of a stack: id, summary, destructive, gates."""
    from automation.config.project import load_stack
    from automation.model.phase import Gate, Hook
    from automation.run.journal import state_dir
    from automation.run.kept_check import refuse_kept_for_nothing
    from automation.run.runner import plan_steps
    from automation.scenarios import build_scenario

    info = load_stack(project_dir(), chosen_stack(ctx, stack))
    refuse_kept_for_nothing(info, state_dir(project_dir()) / "render-cache")
    scenario = build_scenario(info.config)
    rows: list[dict[str, Any]] = []
    for phase in scenario.phases:
        rows.append(
            {
                "id": phase.id,
                "summary": phase.summary,
                "destructive": phase.destructive or any(s.destructive for s in plan_steps(phase)),
                "gates": [g.summary for g in phase.gates],
                "gates_before": [g.summary for g in phase.before if isinstance(g, Gate)],
                "gates_after": [g.summary for g in phase.after if isinstance(g, Gate)],
                "hooks": [h.summary for h in phase.hooks],
                "hooks_before": [h.summary for h in phase.before if isinstance(h, Hook)],
                "hooks_after": [h.summary for h in phase.after if isinstance(h, Hook)],
                "changes": phase.changes.summary,
                "delete_first": list(phase.changes.delete_first),
                "targets": list(phase.targets),
                "targeted": phase.targeted,
                "way_back": phase.way_back,
                "probe": phase.probe.summary if phase.probe else None,
            }
        )
    if json_output or globals_of(ctx).json:
        emit_json({"stack": info.name, "scenario": scenario.id, "phases": rows})
        return
    if markdown:
        from automation.review.markdown import plan_markdown

        sys.stdout.write(plan_markdown(scenario.id, rows))
        return
    cells = [
        (str(index), row["id"], row["summary"], "yes" if row["destructive"] else "no",
         "\n".join(row["gates"]) or "-")
        for index, row in enumerate(rows, 1)
    ]  # fmt: skip
    columns = ("#", "phase", "summary", "destructive", "gates")
    out.print(make_table(f"{info.name}: {scenario.id}", columns, cells, lines=True))


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
    from automation.config.project import load_stack
    from automation.review.render_cache import cached_render
    from automation.run.journal import state_dir
    from automation.run.kept_check import refuse_kept_for_nothing

    info = load_stack(project_dir(), chosen_stack(ctx, stack), config)
    chosen = _checked_phase(info, phase)
    cache = state_dir(project_dir()) / "render-cache"
    with err.status(f"rendering {info.name} at {chosen} (offline)"):
        refuse_kept_for_nothing(info, cache)
        resources, _ = cached_render(info.values, chosen, cache)
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
        title = f"{info.name} @ {chosen}: {len(resources)} resources"
        table = Table("type", "count", title=title)
        for type_token, count in sorted(counts.items()):
            table.add_row(type_token, str(count))
        out.print(table)
    _refuse_policy_violations(info, resources)


def _refuse_policy_violations(info: StackInfo, resources: Sequence[RenderedResource]) -> None:
    """Every render is checked against ``components.policy``; a violation exits 3."""
    from automation.review.diff import policy_violations

    found = policy_violations(info.config, resources)
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
    from automation.config.project import load_stack
    from automation.review.diff import count_by_type, diff_resources
    from automation.review.render_cache import cached_render
    from automation.run.journal import state_dir
    from automation.run.kept_check import refuse_kept_for_nothing

    info = load_stack(project_dir(), chosen_stack(ctx, stack))
    phases = (_checked_phase(info, from_phase), _checked_phase(info, to_phase))
    cache = state_dir(project_dir()) / "render-cache"
    with err.status(f"rendering {info.name} at {phases[0]} and {phases[1]} (offline)"):
        refuse_kept_for_nothing(info, cache)
        before, _ = cached_render(info.values, phases[0], cache)
        after, _ = cached_render(info.values, phases[1], cache)
    _refuse_policy_violations(info, after)
    result = diff_resources(before, after)
    if json_output or globals_of(ctx).json:
        emit_json({"stack": info.name, "from": from_phase, "to": to_phase, **result.as_dict()})
        return
    if markdown:
        from automation.review.markdown import diff_markdown

        sys.stdout.write(diff_markdown(info.name, from_phase, to_phase, result))
        return
    out.print(
        f"[bold]{info.name}[/]: {from_phase} → {to_phase}: {len(result.added)} added, "
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


def _checked_phase(info: StackInfo, phase: str | None) -> str:
    from automation.scenarios import build_scenario

    scenario = build_scenario(info.config)
    chosen = info.phase if phase is None else phase
    scenario.phase(chosen)  # raises a UserError naming the known phases
    return chosen
