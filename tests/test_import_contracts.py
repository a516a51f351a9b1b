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
