"""The ``kubeshift`` command line: plan, review, preview and run migrations phase by phase.

Commands stay thin: they load and validate the stack, build the scenario, and hand
work to the renderer, the runner or the journal. Heavy SDKs (Pulumi, boto3,
kubernetes) are imported inside commands so ``kubeshift --help`` answers at once.
Every ``KubeshiftError`` stops here as one line on stderr and a distinct exit code.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import os
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from automation.cli.doors import DOORS, SANDBOX_VARIABLE, DoorGroup
from automation.cli.usage_errors import ClickException
from automation.config.project import DEFAULT_STACK, check_stack_name, project_dir
from automation.core.errors import EXIT_CODES, ErrorKind, KubeshiftError, UserError

if TYPE_CHECKING:
    from automation.adoption.models import AdoptReport
    from automation.config.project import StackInfo
    from automation.review.rendered import RenderedResource
    from automation.run.journal import StepRecord
    from automation.run.runner import RunReport
    from automation.run.stack_progress import Recorded

app = typer.Typer(
    name="kubeshift",
    cls=DoorGroup,
    help="Zero-downtime migrations of live Kubernetes clusters on AWS, phase by phase.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


@dataclass
class Globals:
    stack: str = DEFAULT_STACK
    json: bool = False
    verbose: bool = False


F = TypeVar("F", bound=Callable[..., Any])


def handles_errors(func: F) -> F:
    """Turn kubeshift errors into one line on stderr and their exit code."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except KubeshiftError as exc:
            err.print(Text.assemble(("error: ", "bold red"), str(exc)), highlight=False)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            err.print("interrupted; run the same command again to resume.")
            raise typer.Exit(130) from None
        except (typer.Exit, typer.Abort, ClickException):
            raise
        except Exception as exc:  # a bug: still one sentence, the traceback on --verbose
            logging.getLogger("kubeshift").debug("unexpected error", exc_info=True)
            err.print(
                Text.assemble(
                    ("error: ", "bold red"),
                    f"kubeshift failed unexpectedly ({type(exc).__name__}: {exc}); "
                    "run again with --verbose for the traceback and report it.",
                ),
                highlight=False,
            )
            raise typer.Exit(1) from None

    return wrapper  # type: ignore[return-value]


def _globals(ctx: typer.Context) -> Globals:
    return ctx.ensure_object(Globals)


def _emit_json(payload: Any) -> None:
    sys.stdout.write(json.dumps(payload, indent=2, default=str) + "\n")


@app.callback()
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


StackOpt = Annotated[
    str | None,
    typer.Option(
        "--stack", "-s", metavar="NAME", help="Stack name (overrides the global --stack)."
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
MarkdownOpt = Annotated[
    bool, typer.Option("--markdown", help="Markdown for a pull-request comment.")
]


ID_COLUMNS = frozenset({"phase", "step", "id"})


def _table(
    title: str, columns: tuple[str, ...], rows: Sequence[Sequence[str]], *, lines: bool = False
) -> Table:
    """A table whose id columns (phase, step) are never cut, at any width or when piped:
    a user types those ids back (``--from``, ``--to``); other columns wrap instead."""
    table = Table(title=title, show_lines=lines)
    for index, name in enumerate(columns):
        if name in ID_COLUMNS:
            width = max([len(name), *(len(row[index]) for row in rows)])
            table.add_column(name, no_wrap=True, min_width=width)
        else:
            table.add_column(name, overflow="fold")
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    return table


def _stack_name(ctx: typer.Context, stack: str | None) -> str:
    return check_stack_name(stack or _globals(ctx).stack)


def _project_for(stack: str) -> Path:
    """The project to run ``stack`` against (``$KUBESHIFT_PROJECT_DIR`` aims it)."""
    check_stack_name(stack)
    return project_dir()


# --- scenarios and plan ---------------------------------------------------------------------


@app.command()
@handles_errors
def scenarios(ctx: typer.Context, json_output: JsonOpt = False) -> None:
    """List the migration scenarios kubeshift knows."""
    from components import registry

    if json_output or _globals(ctx).json:
        _emit_json(
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

    info = load_stack(project_dir(), _stack_name(ctx, stack))
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
    if json_output or _globals(ctx).json:
        _emit_json({"stack": info.name, "scenario": scenario.id, "phases": rows})
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
    out.print(_table(f"{info.name}: {scenario.id}", columns, cells, lines=True))


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

    info = load_stack(project_dir(), _stack_name(ctx, stack), config)
    chosen = _checked_phase(info, phase)
    cache = state_dir(project_dir()) / "render-cache"
    with err.status(f"rendering {info.name} at {chosen} (offline)"):
        refuse_kept_for_nothing(info, cache)
        resources, _ = cached_render(info.values, chosen, cache)
    if json_output or _globals(ctx).json:
        _emit_json(
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

    info = load_stack(project_dir(), _stack_name(ctx, stack))
    phases = (_checked_phase(info, from_phase), _checked_phase(info, to_phase))
    cache = state_dir(project_dir()) / "render-cache"
    with err.status(f"rendering {info.name} at {phases[0]} and {phases[1]} (offline)"):
        refuse_kept_for_nothing(info, cache)
        before, _ = cached_render(info.values, phases[0], cache)
        after, _ = cached_render(info.values, phases[1], cache)
    _refuse_policy_violations(info, after)
    result = diff_resources(before, after)
    if json_output or _globals(ctx).json:
        _emit_json({"stack": info.name, "from": from_phase, "to": to_phase, **result.as_dict()})
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
    from automation.config.project import load_stack
    from automation.core import logs
    from automation.engine.adapter import PulumiEngine, require_pulumi_cli
    from automation.review.diff import scope_of
    from automation.run import guard
    from automation.run.runner import effective_policy, resolve_targets
    from automation.run.targets import PhaseRenders, target_urns
    from automation.scenarios import build_scenario

    project = _project_for(_stack_name(ctx, stack))
    info = load_stack(project, _stack_name(ctx, stack))
    scenario = build_scenario(info.config)
    chosen = scenario.phase(phase)
    require_pulumi_cli()
    engine = PulumiEngine(project, info.name, create=True, on_output=logs.engine_output)
    engine.set_phase(chosen.id)
    renders = PhaseRenders(info.values, scenario.ids())
    targets = (
        target_urns(renders, chosen.id, engine.resource_urns())
        if chosen.targeted
        else resolve_targets(engine, chosen)
    )
    outcome = engine.preview(targets)
    policy = effective_policy(chosen, lambda p: scope_of(renders.entering(p.id)))
    found = guard.violations(outcome, policy)
    if json_output or _globals(ctx).json:
        _emit_json(
            {
                "phase": chosen.id,
                "summary": outcome.summary,
                "changes": [c.__dict__ for c in outcome.changed()],
                "violations": [v.reason for v in found],
            }
        )
    else:
        table = Table("op", "type", "name", title=f"preview of {info.name} @ {chosen.id}")
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

    g = _globals(ctx)
    request = RunRequest(
        project=_project_for(_stack_name(ctx, stack)),
        stack=_stack_name(ctx, stack),
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
        _emit_json(report.as_dicts())
        return
    cells = [(o.phase, o.step, o.status, o.message) for o in report.outcomes]
    out.print(_table(title, ("phase", "step", "status", "message"), cells))


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
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Confirm destructive steps.")] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what the steps would do; change nothing.")
    ] = False,
    stack: StackOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Run one phase's hooks and gates around a `pulumi up` you run yourself, and record them."""
    from automation.session.runs import HooksRequest, execute_hooks

    if before == after:
        raise UserError("Say which steps to run: --before or --after (one of them).")
    g = _globals(ctx)
    name = _stack_name(ctx, stack)
    request = HooksRequest(
        project=_project_for(name),
        stack=name,
        phase=phase,
        side="before" if before else "after",
        yes=yes,
        dry_run=dry_run,
        interactive=sys.stdin.isatty() and not (json_output or g.json),
        json=json_output or g.json,
    )
    report = execute_hooks(request, console=err, confirm=typer.confirm)
    if report.outcomes or request.json:
        _print_outcomes(f"{request.side}-steps of {phase} on {name}", report, request.json)
    else:
        out.print(f"Phase '{phase}' has no hooks or gates {request.side} its update.")
    if dry_run:
        _dry_run_verdict(report)
    elif not request.json:
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
    from automation.session.runs import ReplaceRequest, execute_replacement

    g = _globals(ctx)
    name = _stack_name(ctx, stack)
    request = ReplaceRequest(
        project=_project_for(name),
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


@app.command()
@handles_errors
def adopt(
    ctx: typer.Context,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Import without asking.")] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show the mapping and differences; import nothing.")
    ] = False,
    accept_updates: Annotated[
        bool,
        typer.Option(
            "--accept-updates",
            help="Import despite differences AWS can change in place; the next phase's "
            "update then makes them (never a replace).",
        ),
    ] = False,
    accept_own_tags: Annotated[
        bool,
        typer.Option(
            "--accept-own-tags",
            help="Import despite kubeshift's own tags (managed-by, kubeshift.io/*) missing "
            "live, and only those; the next phase's update then adds them.",
        ),
    ] = False,
    keep_live: Annotated[
        bool,
        typer.Option(
            "--keep-live",
            help="Keep the live value of each attribute AWS could change in place: write "
            "it to the stack file (kubeshift:cluster.kept_inputs), or to the kept file it "
            "names, declared in every phase.",
        ),
    ] = False,
    write_config: Annotated[
        Path | None,
        typer.Option(
            "--write-config",
            metavar="FILE",
            help="Propose the stack file's cluster block from what runs, write it to FILE "
            "and stop (imports nothing).",
        ),
    ] = None,
    stack: StackOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Take the live cluster the stack describes into its state, changing nothing live."""
    from automation.session.runs import AdoptRequest, execute_adoption

    g = _globals(ctx)
    name = _stack_name(ctx, stack)
    if write_config is not None:
        importing = {"--yes": yes, "--dry-run": dry_run, "--accept-updates": accept_updates,
                     "--accept-own-tags": accept_own_tags, "--keep-live": keep_live}  # fmt: skip
        given = [flag for flag, on in importing.items() if on]
        if given:
            raise UserError(
                f"--write-config only proposes a stack file and imports nothing, so it takes "
                f"no {' or '.join(given)}; run adopt with {given[0]} once the file is in place."
            )
        _propose(name, write_config, json_output or g.json)
        return
    request = AdoptRequest(
        project=_project_for(name),
        stack=name,
        yes=yes,
        dry_run=dry_run,
        interactive=sys.stdin.isatty() and not (json_output or g.json),
        json=json_output or g.json,
        accept_updates=accept_updates,
        accept_own_tags=accept_own_tags,
        keep_live=keep_live,
    )
    report = execute_adoption(request, console=err, confirm=typer.confirm)
    if request.json:
        _emit_json(report.model_dump())
    else:
        _print_adoption(report)
    if report.outcome == "refused":
        raise typer.Exit(EXIT_CODES[ErrorKind.PRECONDITION])


def _propose(stack: str, target: Path, as_json: bool) -> None:
    from automation.session.runs import execute_proposal

    proposed = execute_proposal(_project_for(stack), stack, target)
    proposal = proposed.proposal
    if as_json:
        _emit_json(
            {"cluster": proposal.cluster, "notes": proposal.notes, "problems": proposal.problems,
             "written": None if proposal.problems else str(target),
             "files": [str(path) for path in proposed.written]}
        )  # fmt: skip
    else:
        for note in proposal.notes:
            err.print(f"check: {note}", markup=False, highlight=False)
        for problem in proposal.problems:
            err.print(f"problem: {problem}", markup=False, highlight=False)
        if not proposal.problems:
            pools = proposal.cluster.get("worker_pools", [])
            members = proposal.cluster.get("control_plane", {}).get("members", 0)
            out.print(
                f"{stack}: proposed {len(pools)} worker pools from {proposed.groups} groups and "
                f"{members} control-plane members; wrote "
                f"{' and '.join(str(path) for path in proposed.written)}",
                markup=False,
            )
    if proposal.problems:
        raise typer.Exit(EXIT_CODES[ErrorKind.PRECONDITION])


def _print_adoption(report: AdoptReport) -> None:
    from automation.engine.property_paths import shown

    found = report.discovery.resources
    table = Table(
        "type", "name", "live id", title=f"{report.stack} @ {report.phase}: {len(found)} live"
    )
    for resource in found:
        how = resource.import_id or "(attached live; recorded)"
        table.add_row(resource.type.rsplit(":", 1)[-1], resource.name, Text(how))
    out.print(table)
    unmodelled = Counter(r.kind for r in report.discovery.unmodelled)
    if unmodelled:
        listed = ", ".join(f"{count} {kind}" for kind, count in sorted(unmodelled.items()))
        out.print(f"Live but not modelled (left alone): {listed}")
    for name, kept in report.kept.items():
        for attribute, value in kept.items():
            declared = "nothing" if value.declared is None else shown(value.declared)
            out.print(
                f"keeps live: {name} {attribute} = {shown(value.live)} "
                f"(kubeshift declares {declared})",
                markup=False, highlight=False,
            )  # fmt: skip
    for difference in report.differences:
        err.print(f"differs: {difference.line()}", markup=False, highlight=False)
    for refusal in report.refusals:
        err.print(f"refused: {refusal}", markup=False, highlight=False)
    verdict = {
        "planned": f"would import {len(report.imported)} resources"
        + (f" and record {len(report.recorded)}" if report.recorded else "")
        + "; nothing changed (dry run)",
        "refused": "nothing was imported: fix the stack file (or the cloud) and run adopt again",
        "adopted": f"imported {len(report.imported)} resources"
        + (f", recorded {len(report.recorded)}" if report.recorded else "")
        + f"; {report.message}",
        "unchanged": f"already adopted: all {len(report.already)} resources are in the stack",
    }[report.outcome]
    out.print(f"{report.stack}: {verdict}")


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
    from automation.session.recovery import recover as run_recovery

    name = _stack_name(ctx, stack)
    as_json = json_output or _globals(ctx).json
    interactive = sys.stdin.isatty() and not as_json
    confirm = (lambda _q: True) if yes else (typer.confirm if interactive else None)
    recovery = run_recovery(_project_for(name), name, force=force, confirm=confirm)
    if as_json:
        _emit_json(dataclasses.asdict(recovery))
        return
    out.print(f"Recovered stack '{name}': {len(recovery.pending)} pending operation(s) cleared.")
    for lock in recovery.stale_locks:
        out.print(f"  removed the stale lock of {lock}")
    for urn, live_id in recovery.taken.items():
        out.print(f"  its create had completed; taken into the state as {live_id}: {urn}")
    for create in recovery.pending_creates:
        out.print(f"  check the cloud for a copy of: {create}")
    out.print(f"Run `kubeshift --stack {name} run` to continue.")


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
    from automation.run.journal import Journal, state_dir
    from automation.run.stack_progress import read_recorded

    name = _stack_name(ctx, stack)
    project = _project_for(name)
    path = state_dir(project) / f"{name}.journal.json"
    as_json = json_output or _globals(ctx).json
    if recorded:
        _print_recorded(name, read_recorded(project, name), as_json, required=True)
        return
    if not path.exists():
        stack_record = read_recorded(project, name) if not (as_json or phases) else None
        if stack_record is None or stack_record.progress is None:
            raise UserError(
                f"Stack '{name}' has no journal yet ({path}) and no progress recorded with "
                f"the stack could be read; nothing has run from here (`kubeshift --stack "
                f"{name} status --recorded` says why the stack's record cannot be read)."
            )
        _print_recorded(name, stack_record, False, required=True)
        return
    journal = Journal(path, name)
    records = sorted(journal.records(), key=lambda r: r.started or 0.0)
    if phases:
        _print_phase_report(name, records, as_json)
        return
    if as_json:
        _emit_json([dataclasses.asdict(r) for r in records])
        return
    cells = [
        (r.phase, r.step, r.status.value, _executions_text(r), _changed_text(r), r.message)
        for r in records
    ]
    columns = ("phase", "step", "status", "runs", "changed", "message")
    out.print(_table(f"journal of {name}", columns, cells))
    placement = cronjob_placement(records)
    if placement:
        rows = [(key, side) for key, side in sorted(placement.items())]
        out.print(_table("CronJobs: the cluster that runs each", ("cronjob", "runs on"), rows))
    if journal.data.stopped_at:
        out.print(
            f"Stopped on Ctrl-C at {journal.data.stopped_at}; "
            f"`kubeshift --stack {name} run` continues from there."
        )
    _print_recorded(name, read_recorded(project, name), False, required=False)


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
        _emit_json([dataclasses.asdict(r) for r in rows])
        return
    cells = [(r.phase, r.before, r.update, r.after, r.override) for r in rows]
    columns = ("phase", "before", "update", "after", "override")
    out.print(_table(f"progress recorded with {name}", columns, cells))


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

    order = build_scenario(load_stack(_project_for(stack), stack).config).ids()
    rows = phase_rows(records, order)
    availability = availability_lines(records)
    if as_json:
        _emit_json({"phases": [r.as_dict() for r in rows], "availability": availability})
        return
    cells = [
        (row.phase, f"{row.seconds:.1f}", f"{row.engine_seconds:.1f}", row.changes,
         "\n".join(row.steps) or "-")
        for row in rows
    ]  # fmt: skip
    columns = ("phase", "wall s", "engine s", "resources", "hooks and gates")
    out.print(_table(f"run of {stack}, per phase", columns, cells, lines=True))
    total, engine = sum(r.seconds for r in rows), sum(r.engine_seconds for r in rows)
    out.print(f"total {total:.0f}s, engine {engine:.0f}s")
    out.print("availability (probed Services, and the API per phase):", markup=False)
    for line in availability or ["  no probed step recorded"]:
        out.print(f"  {line}", markup=False)


def main() -> None:
    app()
