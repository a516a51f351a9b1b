"""The program entry: reads Pulumi config, dispatches on scenario, exports, and turns a
bad config into the engine's one-line RunError."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from automation.render import record
from components import program
from tests.components.conftest import stack_values


@pytest.mark.parametrize(
    ("stack", "top"),
    [
        ("vpc-move-small", "kubeshift:scenario:VpcMove"),
        ("cni-swap-example", "kubeshift:scenario:CniSwap"),
        ("overlay-switch-example", "kubeshift:scenario:OverlaySwitch"),
    ],
)
def test_main_builds_the_scenario_and_exports(stack: str, top: str) -> None:
    rendering = record(program.main, config=stack_values(stack))
    tops = [r for r in rendering.resources if r.parent is None]
    assert [r.type for r in tops] == [top]
    assert rendering.outputs["phase"] == "baseline"
    assert rendering.outputs["source_vpc_id"].endswith("-vpc-id")


def test_bad_config_is_one_line_run_error(small_values: dict[str, Any]) -> None:
    small_values["kubeshift:cluster"]["control_plane"]["members"] = 2
    with pytest.raises(pulumi.RunError) as caught:
        record(program.main, config=small_values)
    message = str(caught.value)
    assert message.startswith("kubeshift:cluster.control_plane.members is 2;")
    assert "\n" not in message
