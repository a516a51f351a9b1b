"""Offline renders are reused only while everything that decides them is unchanged."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from automation.review.render import render
from automation.review.render_cache import cached_render, cached_rendering, program_digest
from components.contract.engine_vars import IMPORTS_VAR
from components.contract.loading import load_stack_file

SMALL = Path(__file__).resolve().parents[3] / "stacks" / "Pulumi.vpc-move-small.yaml"


@pytest.fixture
def values() -> dict[str, Any]:
    return copy.deepcopy(load_stack_file(SMALL))


def test_a_repeated_render_comes_from_the_cache_and_equals_a_fresh_one(
    values: dict[str, Any], tmp_path: Path
) -> None:
    first, cached = cached_render(values, "target-workers", tmp_path)
    assert not cached
    again, cached = cached_render(values, "target-workers", tmp_path)
    assert cached
    assert again == first == render(values, "target-workers")


def test_another_phase_or_config_renders_anew(values: dict[str, Any], tmp_path: Path) -> None:
    cached_render(values, "baseline", tmp_path)
    assert not cached_render(values, "target-network", tmp_path)[1]
    values["kubeshift:cluster"]["tags"] = {"team": "other"}
    resources, cached = cached_render(values, "baseline", tmp_path)
    assert not cached
    vpc = next(r for r in resources if r.type == "aws:ec2/vpc:Vpc")
    assert vpc.inputs["tags"]["team"] == "other"


def test_the_phase_the_stack_file_is_at_does_not_matter_to_another_phases_render(
    values: dict[str, Any], tmp_path: Path
) -> None:
    cached_render(values, "baseline", tmp_path)
    values["kubeshift:phase"] = "dns-cutover"  # the stack moved on; its baseline did not
    assert cached_render(values, "baseline", tmp_path)[1]


def test_a_render_keeps_the_kept_keys_the_program_looked_up(
    values: dict[str, Any], tmp_path: Path
) -> None:
    fresh = cached_rendering(values, "baseline", tmp_path)
    again = cached_rendering(values, "baseline", tmp_path)
    assert again.hit and not fresh.hit
    assert again.kept_looked_up == fresh.kept_looked_up
    assert "demo-node" in fresh.kept_looked_up["names"]  # the nodes' security group


def test_an_edit_of_the_program_changes_the_key(tmp_path: Path) -> None:
    (tmp_path / "components").mkdir()
    (tmp_path / "__main__.py").write_text("import components\n")
    module = tmp_path / "components" / "network.py"
    module.write_text("CIDR = '10.0.0.0/16'\n")
    before = program_digest(tmp_path)
    assert program_digest(tmp_path) == before
    module.write_text("CIDR = '10.1.0.0/16'\n")
    assert program_digest(tmp_path) != before


def test_nothing_is_cached_while_the_engine_steers_the_program(
    values: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(IMPORTS_VAR, "")  # empty: the program ignores it
    cached_render(values, "baseline", tmp_path)
    monkeypatch.setenv(IMPORTS_VAR, str(tmp_path / "imports.json"))
    with pytest.raises(Exception, match="not a kubeshift import file"):
        cached_render(values, "baseline", tmp_path)  # rendered, not read from the cache


def test_an_unreadable_entry_is_rendered_again(values: dict[str, Any], tmp_path: Path) -> None:
    cached_render(values, "baseline", tmp_path)
    (entry,) = tmp_path.glob("*.json")
    entry.write_text("{not json")
    resources, cached = cached_render(values, "baseline", tmp_path)
    assert not cached and resources == render(values, "baseline")
    assert cached_render(values, "baseline", tmp_path)[1]
