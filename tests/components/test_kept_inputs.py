"""Live attributes kept at adoption are declared in place of kubeshift's, while the
program declares what it declared then; a phase that declares something else wins."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from automation.review.render import render_program
from components.contract.loading import load_config
from components.contract.model_base import ConfigError
from tests.components.conftest import stack_values

TARGET_GROUP = "demo-api-tg-6443"
GROUP = "demo-workers-general-m5-large-us-west-2a-on-demand"
POLICY = "demo-control-plane-identity-inline"


def _values(kept: dict[str, dict[str, Any]]) -> dict[str, Any]:
    values = copy.deepcopy(stack_values("vpc-move-small"))
    values["kubeshift:cluster"]["kept_inputs"] = kept
    return values


def _inputs(phase: str, kept: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r.name: r.inputs for r in render_program(_values(kept), phase).resources}


def test_a_kept_value_is_declared_and_nothing_else_changes() -> None:
    plain = _inputs("baseline", {})
    delay = {"deregistrationDelay": {"live": 300, "declared": 30}}
    kept = _inputs("baseline", {TARGET_GROUP: delay})
    assert kept[TARGET_GROUP]["deregistrationDelay"] == 300
    assert {name for name in plain if plain[name] != kept[name]} == {TARGET_GROUP}
    assert {k for k in plain[TARGET_GROUP] if plain[TARGET_GROUP][k] != kept[TARGET_GROUP][k]} == {
        "deregistrationDelay"
    }


def test_nested_and_document_values_are_kept_whole() -> None:
    plain = _inputs("baseline", {})
    check = plain[TARGET_GROUP]["healthCheck"]
    live_check = {**check, "interval": 30, "unhealthyThreshold": 3}
    policy = '{"Version":"2012-10-17","Statement":[]}'
    kept = _inputs(
        "baseline",
        {
            TARGET_GROUP: {"healthCheck": {"live": live_check, "declared": check}},
            POLICY: {"policy": {"live": policy, "declared": plain[POLICY]["policy"]}},
        },
    )
    assert kept[TARGET_GROUP]["healthCheck"] == live_check
    assert kept[POLICY]["policy"] == policy


@pytest.mark.parametrize("declared", [None, "1Minute"])
def test_an_attribute_kubeshift_does_not_declare_is_kept_too(declared: str | None) -> None:
    """Whether the engine showed nothing declared or the provider's default."""
    plain = _inputs("baseline", {})
    assert "enabledMetrics" not in plain[GROUP] and "metricsGranularity" not in plain[GROUP]
    metrics = ["GroupDesiredCapacity", "GroupInServiceInstances"]
    kept = _inputs(
        "baseline",
        {
            GROUP: {
                "enabledMetrics": {"live": metrics, "declared": None},
                "metricsGranularity": {"live": "1Minute", "declared": declared},
            }
        },
    )
    assert kept[GROUP]["enabledMetrics"] == metrics
    assert kept[GROUP]["metricsGranularity"] == "1Minute"


def test_kept_values_stay_declared_in_later_phases() -> None:
    kept = {TARGET_GROUP: {"deregistrationDelay": {"live": 300, "declared": 30}}}
    later = _inputs("dns-cutover", kept)
    assert later[TARGET_GROUP]["deregistrationDelay"] == 300


def test_where_the_program_declares_another_value_its_value_goes_through() -> None:
    """What a phase changes on purpose (here: anything but what was declared when the
    value was kept) is not held back by the kept one."""
    plain = _inputs("baseline", {})
    kept = _inputs("baseline", {GROUP: {"desiredCapacity": {"live": 3, "declared": 2}}})
    assert kept[GROUP]["desiredCapacity"] == plain[GROUP]["desiredCapacity"] != 3


@pytest.mark.parametrize(
    ("attribute", "says"),
    [
        ("deregistration_delay", "camelCase"),
        ("tags", "kept_tags"),
    ],
)
def test_an_attribute_named_otherwise_is_a_config_error(attribute: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says) as raised:
        load_config(_values({TARGET_GROUP: {attribute: {"live": 1, "declared": 2}}}))
    assert f"kept_inputs.{TARGET_GROUP}.{attribute}" in str(raised.value)


def test_an_attribute_the_resource_does_not_take_is_one_sentence() -> None:
    with pytest.raises(Exception, match="has no input 'nonsense'"):
        _inputs("baseline", {TARGET_GROUP: {"nonsense": {"live": 1, "declared": None}}})


def test_values_being_kept_by_an_adoption_join_those_kept_before() -> None:
    from components.contract.cluster_models import KeptInput
    from components.kept_inputs import merged

    before = {TARGET_GROUP: {"deregistrationDelay": KeptInput(live=300, declared=30)}}
    adopting = {
        TARGET_GROUP: {"slowStart": KeptInput(live=30, declared=None)},
        GROUP: {"healthCheckGracePeriod": KeptInput(live=0, declared=300)},
    }
    assert merged(before, adopting) == {
        TARGET_GROUP: {**before[TARGET_GROUP], **adopting[TARGET_GROUP]},
        GROUP: adopting[GROUP],
    }
