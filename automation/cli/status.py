"""``kubeshift status``: the journal, the progress the stack records, a run per phase."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

import typer

from automation.cli.common import (
    JsonOpt,
    StackOpt,
    chosen_stack,
    emit_json,
    globals_of,
    handles_errors,
    make_table,
    out,
    project_for,
)
from automation.core.errors import UserError

if TYPE_CHECKING:
    from automation.run.journal import StepRecord
    from automation.run.stack_progress import Recorded

from automation.cli.root import app


@app.command()
@handles_errors
def status(
    ctx: typer.Context,
    stack: StackOpt = None,
    json_output: JsonOpt = False,
    phases: Annotated[
        bool, typer.Option("--phases", help="One row per phase, and the availability report.")
    ] = False,
    recorded: Annotated[
        bool,
        typer.Option(
            "--recorded", help="Only the progress recorded with the stack (needs no journal)."
        ),
    ] = False,
) -> None:
    """Show the journal of a stack, then the progress recorded with the stack itself."""
    from automation.config.state_place import state_place
    from automation.run.journal import Journal
    from automation.run.run_lock import lock_sentence
    from automation.run.stack_progress import read_recorded

    name = chosen_stack(ctx, stack)
    project = project_for(name)
    as_json = json_output or globals_of(ctx).json
    if recorded:
        _print_recorded(name, read_recorded(project, name), as_json, required=True)
        return
    place = state_place(project, name)
    journal = Journal(place.journal, name)
    if not journal.exists and place.shared and place.local_journal.is_file():
        out.print(
            f"The backend has no journal of {name} yet; showing this machine's "
            f"({place.local_journal}), which the next run takes over into {place.where}."
        )
        journal = Journal(place.local_journal, name)
    if not journal.exists:
        stack_record = read_recorded(project, name) if not (as_json or phases) else None
        if stack_record is None or stack_record.progress is None:
            raise UserError(
                f"Stack '{name}' has no journal yet ({place.journal.where}) and no progress "
                "recorded with the stack could be read; nothing has run from here "
                f"(`kubeshift --stack {name} status --recorded` says why the stack's record "
                "cannot be read)."
            )
        _print_recorded(name, stack_record, False, required=True)
        return
    records = sorted(journal.records(), key=lambda r: r.started or 0.0)
    if phases:
        _print_phase_report(name, records, as_json)
        return
    if as_json:
        emit_json([dataclasses.asdict(r) for r in records])
        return
    cells = [
        (
            r.phase, r.step, r.status.value, _executions_text(r), _operators_text(r),
            _changed_text(r), r.message,
        )
        for r in records
    ]  # fmt: skip
    columns = ("phase", "step", "status", "runs", "by", "changed", "message")
    out.print(make_table(f"journal of {name}", columns, cells))
    placement = cronjob_placement(records)
    if placement:
        rows = [(key, side) for key, side in sorted(placement.items())]
        out.print(make_table("CronJobs: the cluster that runs each", ("cronjob", "runs on"), rows))
    out.print(lock_sentence(place.lock), markup=False)
    if journal.data.stopped_at:
        out.print(
            f"Stopped on Ctrl-C at {journal.data.stopped_at}; "
            f"`kubeshift --stack {name} run` continues from there."
        )
    _print_recorded(name, read_recorded(project, name), False, required=False)


def _operators_text(record: StepRecord) -> str:
    """Who ran the step's executions (user@host), in order, each once."""
    return ", ".join(dict.fromkeys(e.operator for e in record.executions if e.operator))


def cronjob_placement(records: Sequence[Any]) -> dict[str, str]:
    """Per CronJob, the cluster the latest finished hand-over left it on (cni-swap)."""
    placement: dict[str, str] = {}
    for record in sorted(records, key=lambda r: r.finished or 0.0):
        runs_on = (record.details or {}).get("runs_on") if record.done else None
        if isinstance(runs_on, dict):
            placement.update({str(k): str(v) for k, v in runs_on.items()})
    return placement


def _print_recorded(name: str, recorded: Recorded, as_json: bool, *, required: bool) -> None:
    """The stack's own record: per phase, who finished each side and when; overrides."""
    from automation.run.stack_progress import recorded_rows

    if recorded.progress is None:
        if required:
            raise UserError(
                f"Stack '{name}' records no progress that can be read ({recorded.note})."
            )
        out.print(f"Progress recorded with the stack: unavailable ({recorded.note}).")
        return
    rows = recorded_rows(recorded)
    if as_json:
        emit_json([dataclasses.asdict(r) for r in rows])
        return
    cells = [(r.phase, r.before, r.update, r.after, r.override) for r in rows]
    columns = ("phase", "before", "update", "after", "override")
    out.print(make_table(f"progress recorded with {name}", columns, cells))
    for undo in recorded.progress.undone:
        when = f" at {undo.at}" if undo.at else ""
        out.print(f"Taken back: {undo.phase}, by {undo.by}{when}.", markup=False)


def _executions_text(record: StepRecord) -> str:
    """``2 (1 interrupted)``: how often a step ran, and how the earlier runs ended."""
    ended = Counter(e.status.value for e in record.executions[:-1] if e.status.value != "succeeded")
    extra = ", ".join(f"{n} {status}" for status, n in sorted(ended.items()))
    return f"{record.attempts} ({extra})" if extra else str(record.attempts)


def _changed_text(record: StepRecord) -> str:
    return {True: "yes", False: "no", None: ""}[record.changed]


def _print_phase_report(stack: str, records: list[Any], as_json: bool) -> None:
    from automation.config.project import load_stack
    from automation.run.report import availability_lines, phase_rows
    from automation.scenarios import build_scenario

    order = build_scenario(load_stack(project_for(stack), stack).config).ids()
    rows = phase_rows(records, order)
    availability = availability_lines(records)
    if as_json:
        emit_json({"phases": [r.as_dict() for r in rows], "availability": availability})
        return
    cells = [
        (row.phase, f"{row.seconds:.1f}", f"{row.engine_seconds:.1f}", row.changes,
         "\n".join(row.steps) or "-")
        for row in rows
    ]  # fmt: skip
    columns = ("phase", "wall s", "engine s", "resources", "hooks and gates")
    out.print(make_table(f"run of {stack}, per phase", columns, cells, lines=True))
    total, engine = sum(r.seconds for r in rows), sum(r.engine_seconds for r in rows)
    out.print(f"total {total:.0f}s, engine {engine:.0f}s")
    out.print("availability (probed Services, and the API per phase):", markup=False)
    for line in availability or ["  no probed step recorded"]:
        out.print(f"  {line}", markup=False)
