"""The product imports only what its package brings: a module that imports a
distribution some other tool pulled into the development venv (click came with Flask,
the sandbox's, once typer stopped depending on it) works here and fails to start on a
user's fresh install."""

from __future__ import annotations

import ast
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, packages_distributions, requires
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
OWN = {"automation", "components"}
SANDBOX = REPO / "automation" / "sandbox"


def _installed_with(requirements: list[str]) -> set[str]:
    """The distributions installing ``requirements`` brings, their own included."""
    brought: set[str] = set()
    visited: set[tuple[str, frozenset[str]]] = set()
    todo = [Requirement(r) for r in requirements]
    while todo:
        wanted = todo.pop()
        name, extras = canonicalize_name(wanted.name), frozenset(wanted.extras)
        if (name, extras) in visited:
            continue
        visited.add((name, extras))
        brought.add(name)
        try:
            listed = requires(name) or []
        except PackageNotFoundError:
            continue
        for line in map(Requirement, listed):
            if line.marker is None or any(
                line.marker.evaluate({"extra": extra}) for extra in ("", *extras)
            ):
                todo.append(line)
    return brought


def _imported(path: Path) -> set[str]:
    """Top-level modules ``path`` imports at run time (not under ``TYPE_CHECKING``)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(), str(path)))
    return found - OWN - set(sys.stdlib_module_names) - {"__future__"}


def _unbrought(paths: list[Path], brought: set[str]) -> dict[str, list[str]]:
    owners = packages_distributions()
    missing: dict[str, list[str]] = {}
    for path in paths:
        for module in sorted(_imported(path)):
            if not {canonicalize_name(d) for d in owners.get(module, [module])} & brought:
                missing.setdefault(module, []).append(str(path.relative_to(REPO)))
    return missing


def test_the_product_imports_only_what_installing_it_brings() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    product = _installed_with(project["dependencies"])
    sandbox = _installed_with(project["dependencies"] + project["optional-dependencies"]["sandbox"])
    code = [p for root in OWN for p in (REPO / root).rglob("*.py")]
    outside = [p for p in code if SANDBOX not in p.parents]
    inside = [p for p in code if SANDBOX in p.parents]
    assert len(outside) > 100 and len(inside) > 20
    assert "click" not in product  # typer no longer brings it; the check can fail
    assert _unbrought(outside, product) == {}
    assert _unbrought(inside, sandbox) == {}
