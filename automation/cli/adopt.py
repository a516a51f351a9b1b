"""``kubeshift adopt``: take the live cluster into the stack, or propose its stack file."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

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
    from automation.adoption.models import AdoptReport

from automation.cli.root import app


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
    from automation.session.adoption import AdoptRequest, execute_adoption

    g = globals_of(ctx)
    name = chosen_stack(ctx, stack)
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
        project=project_for(name),
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
        emit_json(report.model_dump())
    else:
        print_adoption(report)
    if report.outcome == "refused":
        raise typer.Exit(EXIT_CODES[ErrorKind.PRECONDITION])


def _propose(stack: str, target: Path, as_json: bool) -> None:
    from automation.session.adoption import execute_proposal

    proposed = execute_proposal(project_for(stack), stack, target)
    proposal = proposed.proposal
    if as_json:
        emit_json(
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


def print_adoption(report: AdoptReport) -> None:
    from automation.engine.property_paths import shown

    found = report.discovery.resources
    rows = [
        (r.type.rsplit(":", 1)[-1], r.name, r.import_id or "(attached live; recorded)")
        for r in found
    ]
    title = f"{report.stack} @ {report.phase}: {len(found)} live"
    out.print(make_table(title, ("type", "name", "live id"), rows))
    why = {a.name: a.why for a in report.discovery.additions}
    for name in report.added:
        out.print(f"adds: {name} ({why.get(name, 'nothing live matches it')})",
                  markup=False, highlight=False)  # fmt: skip
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
        + (f" and add {len(report.added)}" if report.added else "")
        + "; nothing changed (dry run)",
        "refused": "nothing was imported: fix the stack file (or the cloud) and run adopt again",
        "adopted": f"imported {len(report.imported)} resources"
        + (f", recorded {len(report.recorded)}" if report.recorded else "")
        + (f", added {len(report.added)}" if report.added else "")
        + f"; {report.message}",
        "unchanged": f"already adopted: all {len(report.already)} resources are in the stack",
    }[report.outcome]
    out.print(f"{report.stack}: {verdict}")
    if report.terraform_claims:
        _print_claims(
            f"Terraform still manages {len(report.terraform_claims)} of these "
            "(kubeshift:runtime.terraform_state): its next apply would put them back, and a "
            "phase that changes one refuses to start until it is released with:",
            report.terraform_release,
        )
    if report.kops_claims:
        _print_claims(
            f"kops's state store still holds {len(report.kops_claims)} instance group(s) "
            f"of these ({', '.join(report.kops_claims)}; kubeshift:runtime.kops_state): its "
            "next `kops update cluster --yes` would put them back, and a phase that changes "
            "one refuses to start until `kubeshift release --yes` (or, by hand) releases it:",
            report.kops_release,
        )


def _print_claims(sentence: str, commands: list[str]) -> None:
    """What the tool that built the cluster still claims, and the commands that release it."""
    out.print(sentence, markup=False, highlight=False)
    for command in commands:
        out.print(f"  {command}", markup=False, highlight=False)
