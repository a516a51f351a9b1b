"""A kept value for nothing the program declares is refused, naming the nearest key the
program looked up; every kept value adoption writes is for something."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from automation.config.project import StackInfo
from automation.core.errors import ConfigError
from automation.review.render import render_program
from automation.run.kept_check import kept_for_nothing, refuse_kept_for_nothing
from components.contract.loading import load_config
from tests.components.conftest import stack_values
from tests.components.test_existing_names import KEPT as NAMES
from tests.components.test_kept_descriptions import KEPT as DESCRIPTIONS
from tests.components.test_kept_user_data import KEPT as USER_DATA

KEPT: dict[str, dict[str, Any]] = {
    "names": NAMES,
    "descriptions": DESCRIPTIONS,
    "user_data": USER_DATA,
    "kept_tags": {"demo-source-network-vpc": {"SubnetType": "x"}},
    "kept_inputs": {"demo-api-tg-6443": {"deregistrationDelay": {"live": 300, "declared": 30}}},
}


def _values(**sections: dict[str, Any]) -> dict[str, Any]:
    values = copy.deepcopy(stack_values("vpc-move-small"))
    values["kubeshift:cluster"].update(sections)
    return values


def _problems(values: dict[str, Any]) -> list[str]:
    config = load_config(values)
    rendering = render_program(values, config.phase_ids[0])
    return kept_for_nothing(config.cluster, rendering.kept_looked_up)


def test_every_kind_of_kept_value_for_a_declared_resource_passes() -> None:
    assert _problems(_values(**KEPT)) == []


@pytest.mark.parametrize(
    ("section", "typo", "meant"),
    [
        ("names", "demo-nodes", "demo-node"),
        (
            "names",
            "autoscaling-group:demo-control-plan-1",
            "autoscaling-group:demo-control-plane-1",
        ),
        ("descriptions", "demo-api-lbb", "demo-api-lb"),
        ("user_data", "demo-workers-generl-spot", "demo-workers-general-spot"),
        ("kept_tags", "demo-source-network-vcp", "demo-source-network-vpc"),
        ("kept_inputs", "demo-api-tg-6444", "demo-api-tg-6443"),
    ],
)
def test_a_key_the_program_never_looks_up_is_named_with_the_nearest(
    section: str, typo: str, meant: str
) -> None:
    kept = {**KEPT, section: {typo: next(iter(KEPT[section].values()))}}
    assert _problems(_values(**kept)) == [
        f"kubeshift:cluster.{section} {typo!r} is for nothing the program declares "
        f"(did you mean {meant!r}?)"
    ]


def test_a_refusal_writes_no_render_and_a_pass_caches_one(tmp_path: Path) -> None:
    def info(values: dict[str, Any]) -> StackInfo:
        return StackInfo("t", tmp_path / "Pulumi.t.yaml", values, load_config(values))

    cache = tmp_path / "render-cache"
    typo = _values(kept_tags={"demo-source-network-vcp": {"a": "b"}})
    with pytest.raises(ConfigError, match=r"^kubeshift:cluster\.kept_tags 'demo-source"):
        refuse_kept_for_nothing(info(typo), cache)
    assert not cache.exists()

    refuse_kept_for_nothing(info(_values(**KEPT)), cache)
    assert len(list(cache.glob("*.json"))) == 1
