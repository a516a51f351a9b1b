"""Markdown for pull requests: the phase tables in README.md and docs/ are `plan --markdown`
output."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from automation.cli.app import app
from components.contract import registry

REPO = Path(__file__).resolve().parents[3]
BLOCK = re.compile(r"<!-- plan --markdown: (\S+) -->\n(.*?)<!-- end plan -->", re.S)


def _kubeshift(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def _pages() -> list[Path]:
    """Every page a phase table may live in (what scripts/doc-tables rewrites)."""
    return [REPO / "README.md", *sorted((REPO / "docs").glob("**/*.md"))]


def test_phase_tables_are_plan_markdown() -> None:
    blocks = [
        (page, stack, table)
        for page in _pages()
        for stack, table in BLOCK.findall(page.read_text())
    ]
    assert {stack for _, stack, _ in blocks} >= {
        "local",
        "cni-swap-example",
        "overlay-switch-example",
    }
    for page, stack, table in blocks:
        assert table == _kubeshift("--stack", stack, "plan", "--markdown"), (
            f"{page.relative_to(REPO)}'s {stack} table drifted: run scripts/doc-tables"
        )


def test_plan_markdown_is_one_row_per_phase_with_ids_to_type_back() -> None:
    text = _kubeshift("--stack", "vpc-move-small", "plan", "--markdown")
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    ids = [row.split("`")[1] for row in rows]
    assert tuple(ids) == registry.spec("vpc-move").phase_ids(3)
    assert all(row.count(" | ") == 4 for row in rows), "a cell broke the table"


@pytest.mark.parametrize(("before", "after"), [("shared-resources", "target-workers")])
def test_diff_markdown_counts_what_the_json_lists(before: str, after: str) -> None:
    import json

    text = _kubeshift("--stack", "local", "diff", "--from", before, "--to", after, "--markdown")
    data = json.loads(
        _kubeshift("--stack", "local", "--json", "diff", "--from", before, "--to", after)
    )
    assert f"`{before}` → `{after}`" in text
    assert f"**{len(data['added'])} to add, {len(data['removed'])} to remove" in text
    counted = sum(
        int(line.split(" | ")[1]) for line in text.splitlines() if line.startswith("| add |")
    )
    assert counted == len(data["added"]) > 0


LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchors(text: str) -> set[str]:
    """The anchors GitHub gives a page's headings (lower case, punctuation dropped,
    spaces to hyphens, a repeated one numbered)."""
    found: set[str] = set()
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if fenced or not line.startswith("#"):
            continue
        title = line.lstrip("#").strip().lower()
        slug = re.sub(r"[^\w\- ]", "", title).replace(" ", "-")
        anchor, n = slug, 0
        while anchor in found:
            n += 1
            anchor = f"{slug}-{n}"
        found.add(anchor)
    return found


def test_links_between_pages_resolve() -> None:
    broken = []
    for page in _pages():
        for target in LINK.findall(page.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.relative_to(REPO)}: {target}")
            elif anchor and anchor not in _anchors(linked.read_text()):
                broken.append(f"{page.relative_to(REPO)}: {target} (no such heading)")
    assert broken == []
