"""Every setting a stack file can hold, given a value of the wrong kind, is refused in
one sentence that names it, before anything is written.

The settings are read from the models themselves (``StackConfig`` and
``RuntimeSettings``), so a setting added later gets its case here without anyone
remembering to write one; the hand-written cases in ``test_hostile_input.py`` try each
setting's meaning (ranges, whole-value patterns, settings that contradict each other).
"""

from __future__ import annotations

import copy
import itertools
import shutil
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel
from typer.testing import CliRunner

from automation.cli.app import app
from automation.config.settings import RuntimeSettings
from components.contract.keys import (
    CLUSTER_KEY,
    MIGRATION_KEY,
    PHASE_KEY,
    REGION_KEY,
    RUNTIME_KEY,
    SCENARIO_KEY,
    SKIP_PROGRESS_KEY,
)
from components.contract.models import StackConfig

REPO = Path(__file__).resolve().parents[3]
TOP_KEYS = {
    "scenario": SCENARIO_KEY,
    "phase": PHASE_KEY,
    "region": REGION_KEY,
    "cluster": CLUSTER_KEY,
    "migration": MIGRATION_KEY,
    "skip_progress_check": SKIP_PROGRESS_KEY,
}
# The example stack that already holds a setting's parents (the first prefix that fits).
BASES = (
    (f"{MIGRATION_KEY}.mirror", "cni-swap-example"),
    (f"{RUNTIME_KEY}.mirror", "cni-swap-example"),
    (f"{MIGRATION_KEY}.overlay", "overlay-switch-example"),
    ("", "vpc-move-small"),
)
# A collection's members are reached through one of them.
MEMBER = {dict: "primary", list: 0, tuple: 0}
# What a setting's fresh parent holds besides it, so that it is the one thing wrong.
SEEDS: dict[str, dict[str, Any]] = {
    f"{CLUSTER_KEY}.worker_pools.0.taints.0": {"key": "dedicated", "value": "x"},
    f"{CLUSTER_KEY}.ingress.listeners.0": {"port": 80, "node_port": 30080},
    f"{RUNTIME_KEY}.retiring_taint": {"key": "kubeshift.io/migration"},
}
NOT_A_SETTING = {"not": ["a", "setting"]}
NOT_A_MAPPING = ["not", "a mapping"]


@dataclass(frozen=True)
class Setting:
    """One setting: its path in the stack file's config, as keys and list indexes."""

    path: tuple[str | int, ...]
    mapping: bool  # it holds a mapping (a model or a dict), so a list is the wrong kind

    @property
    def name(self) -> str:
        return ".".join(str(p) for p in self.path)

    @property
    def base(self) -> str:
        return next(stack for prefix, stack in BASES if self.name.startswith(prefix))

    @property
    def bad_value(self) -> Any:
        return NOT_A_MAPPING if self.mapping else NOT_A_SETTING


def _shapes(annotation: Any) -> list[Any]:
    """The types a field's annotation names, unions and Annotated unwrapped."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _shapes(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [shape for arg in typing.get_args(annotation) for shape in _shapes(arg)]
    return [annotation]


def _settings(model: type[BaseModel], path: tuple[str | int, ...]) -> list[Setting]:
    found = []
    for name, field in model.model_fields.items():
        here = (*path, field.alias or name)
        shapes = [s for s in _shapes(field.annotation) if s is not type(None)]
        mapping = any(
            typing.get_origin(s) is dict or (isinstance(s, type) and issubclass(s, BaseModel))
            for s in shapes
        )
        found.append(Setting(here, mapping))
        for shape in shapes:
            origin = typing.get_origin(shape)
            if isinstance(shape, type) and issubclass(shape, BaseModel):
                found += _settings(shape, here)
            elif origin in MEMBER:
                inner = typing.get_args(shape)
                member = inner[-1] if origin is dict else inner[0]
                member = _shapes(member)[0]
                if isinstance(member, type) and issubclass(member, BaseModel):
                    found += _settings(member, (*here, MEMBER[origin]))
    return found


def all_settings() -> list[Setting]:
    stack = [
        Setting((TOP_KEYS[s.path[0]], *s.path[1:]), s.mapping)  # type: ignore[index]
        for s in _settings(StackConfig, ())
    ]
    return stack + _settings(RuntimeSettings, (RUNTIME_KEY,))


SETTINGS = all_settings()


def _place(config: dict[str, Any], path: tuple[str | int, ...], value: Any) -> None:
    """Put ``value`` at ``path``, making the parents on the way (seeded where a parent
    needs more than the setting)."""
    node: Any = config
    for depth, (step, after) in enumerate(itertools.pairwise(path), start=1):
        seed = copy.deepcopy(SEEDS.get(".".join(str(p) for p in path[:depth]), {}))
        if isinstance(node, list):
            while len(node) <= step:  # type: ignore[operator]
                node.append(seed)
        elif not isinstance(node.get(step), (dict, list)):
            node[step] = [] if isinstance(after, int) else seed
        node = node[step]  # type: ignore[index]
    if isinstance(node, list):
        while len(node) <= path[-1]:  # type: ignore[operator]
            node.append(copy.deepcopy(SEEDS.get(".".join(str(p) for p in path), {})))
    node[path[-1]] = value  # type: ignore[index]


def test_every_model_setting_is_listed() -> None:
    names = {s.name for s in SETTINGS}
    assert len(names) == len(SETTINGS)
    # a few that must be there whatever the models become: the walk reaches them
    for expected in (
        f"{CLUSTER_KEY}.worker_pools.0.taints.0.effect",
        f"{RUNTIME_KEY}.clusters.primary.kubeconfig",
        f"{RUNTIME_KEY}.mirror.registry_rewrites.0.source",
        f"{MIGRATION_KEY}.mirror.zone_name",
        SKIP_PROGRESS_KEY,
    ):
        assert expected in names


@pytest.mark.parametrize("setting", SETTINGS, ids=[s.name for s in SETTINGS])
def test_a_setting_of_the_wrong_kind_is_one_sentence_naming_it(
    setting: Setting, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, state = tmp_path / "project", tmp_path / "state"
    (project / "stacks").mkdir(parents=True)
    shutil.copy(REPO / "Pulumi.yaml", project / "Pulumi.yaml")
    document = yaml.safe_load((REPO / "stacks" / f"Pulumi.{setting.base}.yaml").read_text())
    _place(document["config"], setting.path, setting.bad_value)
    stack_file = project / "stacks" / "Pulumi.t.yaml"
    stack_file.write_text(yaml.safe_dump(document, sort_keys=False))
    monkeypatch.setenv("KUBESHIFT_PROJECT_DIR", str(project))
    monkeypatch.setenv("KUBESHIFT_STATE_DIR", str(state))
    monkeypatch.delenv("KUBESHIFT_SANDBOX", raising=False)
    written = stack_file.read_bytes()

    result = CliRunner().invoke(app, ["--stack", "t", "plan"])

    text = result.stderr.strip()
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert "Traceback" not in result.output
    assert len(text.splitlines()) == 1 and text.startswith("error: "), text
    leaf = next(str(p) for p in reversed(setting.path) if not isinstance(p, int))
    assert leaf.split(":")[-1] in text, text
    assert stack_file.read_bytes() == written and not state.exists()
