"""Every module of ``automation/`` sits in a layer of the import contracts."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

EXEMPT: dict[str, str] = {}
"""Module -> why no contract covers it (none today)."""


def _layered() -> set[str]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    contracts = config["tool"]["importlinter"]["contracts"]
    return {
        name.strip()
        for contract in contracts
        if contract["type"] == "layers"
        for layer in contract["layers"]
        for name in layer.split("|")
    }


def _modules() -> list[str]:
    root = REPO / "automation"
    return sorted(
        ".".join(path.relative_to(REPO).with_suffix("").parts)
        for path in root.rglob("*.py")
        if path.parent != root or path.name != "__init__.py"
    )


def uncovered(modules: list[str], layers: set[str]) -> list[str]:
    """The modules in no layer and not exempt."""
    return [
        module
        for module in modules
        if module not in EXEMPT
        and not any(module == layer or module.startswith(layer + ".") for layer in layers)
    ]


def test_every_automation_module_is_in_a_layer() -> None:
    modules = _modules()
    assert "automation.run.runner" in modules and "automation.sandbox.cli" in modules
    missing = uncovered(modules, _layered())
    assert not missing, f"modules no import contract covers: {missing}"


def test_a_module_outside_every_layer_is_named() -> None:
    new_room = ["automation.new_room.thing", "automation.loose", "automation.runner_notes"]
    assert uncovered([*new_room, "automation.run.runner"], _layered()) == new_room


def import_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every group of modules that import each other, directly or around a circle
    (Tarjan's strongly connected components of more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in edges.get(module, ()):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return cycles


def test_no_module_of_automation_or_components_is_in_an_import_circle() -> None:
    import grimp

    graph = grimp.build_graph("automation", "components")
    ours = {m for m in graph.modules if m.startswith(("automation", "components"))}
    edges = {m: graph.find_modules_directly_imported_by(m) & ours for m in ours}
    assert import_cycles(edges) == []


def test_a_circle_is_found_however_far_round_it_goes() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e2"}, "e2": {"e"}}
    assert sorted(import_cycles(edges)) == [["a", "b", "c"], ["e", "e2"]]
