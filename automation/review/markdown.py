"""Markdown for pull requests: a stack's phase table and the diff between two phases.

Infrastructure teams read plans in pull-request comments (Atlantis, the Pulumi GitHub
app); ``plan --markdown`` and ``diff --markdown`` print the same shape of comment, and
the phase tables in README.md and docs/ are ``plan --markdown`` output.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from automation.review.diff import PhaseDiff, count_by_type


def cell(text: str) -> str:
    """A table cell: pipes escaped, line breaks as ``<br>``."""
    return text.replace("|", "\\|").replace("\n", "<br>") or "-"


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines


def plan_markdown(scenario: str, rows: Sequence[Mapping[str, Any]]) -> str:
    """One row per phase: id, what it does, destructive, gates, way back (as ``plan
    --json`` rows)."""
    body = table(
        ("phase", "what it does", "destructive", "gates", "way back"),
        (
            (
                f"`{row['id']}`",
                str(row["summary"]),
                "yes" if row["destructive"] else "no",
                _gates(row),
                str(row["way_back"] or "-") + (" (`kubeshift back`)" if row["back_runs"] else ""),
            )
            for row in rows
        ),
    )
    return "\n".join([f"#### {scenario}", "", *body]) + "\n"


def _gates(row: Mapping[str, Any]) -> str:
    parts = [f"before: {g}" for g in row["gates_before"]]
    parts += [f"after: {g}" for g in row["gates_after"]]
    if row.get("probe"):
        parts.append(f"throughout: {row['probe']}")
    return "<br>".join(parts)


def diff_markdown(stack: str, before: str, after: str, diff: PhaseDiff) -> str:
    """A pull-request comment: counts per change and type, then changed and moved resources."""
    summary = (
        f"**{len(diff.added)} to add, {len(diff.removed)} to remove, "
        f"{len(diff.changed)} to change, {len(diff.moved)} moved by alias (state kept)**"
    )
    lines = [f"#### kubeshift diff of `{stack}`: `{before}` → `{after}`", "", summary, ""]
    counts = [
        (label, str(count), f"`{type_token}`")
        for label, keys in (("add", diff.added), ("remove", diff.removed))
        for type_token, count in count_by_type(keys).items()
    ]
    if counts:
        lines += [*table(("change", "count", "type"), counts), ""]
    if diff.changed:
        lines += [f"<details><summary>changed resources ({len(diff.changed)})</summary>", ""]
        rows = [
            (f"`{key}`", ", ".join(f"`{f}`" for f in fields))
            for key, fields in diff.changed.items()
        ]
        lines += [*table(("resource", "inputs"), rows), "", "</details>", ""]
    if diff.moved:
        lines += [f"<details><summary>moved by alias ({len(diff.moved)})</summary>", ""]
        moved = [
            (f"`{old.name}`", f"`{new.name}`", f"`{new.type}`") for new, old in diff.moved.items()
        ]
        lines += [*table(("from", "to", "type"), moved), "", "</details>", ""]
    return "\n".join(lines).rstrip("\n") + "\n"
