"""The etcd volumes are never replaced or deleted by an update: a stack-file change that
would is one sentence before anything is declared, and the engine protects them too."""

from __future__ import annotations

import copy
from typing import Any

import pulumi
import pytest

from automation.review.render import record, render_program
from components import program
from components.contract.etcd_volumes import ETCD_VOLUMES_OUTPUT
from components.contract.keys import PHASE_KEY
from components.contract.loading import load_config
from components.contract.model_base import ConfigError
from tests.components.conftest import by_type, rendered, stack_values

VOLUME = "aws:ebs/volume:Volume"


def _deployed(values: dict[str, Any], upto: str = "baseline") -> dict[str, Any]:
    """The outputs an update of ``values`` leaves at ``upto``, every phase before it
    finished (so the progress check lets ``upto`` through)."""
    outputs = record(program.main, config={**values, PHASE_KEY: upto}).outputs
    phases = load_config(values).phase_ids
    done = phases[: phases.index(upto) + 1]
    milestones = ("before", "update", "after")
    marks = [{"phase": p, "milestone": m, "by": "t"} for p in done for m in milestones]
    return {**outputs, "progress": {"marks": marks}}


def test_the_program_records_each_members_volume_as_declared() -> None:
    values = stack_values("vpc-move-small")
    outputs = rendered("vpc-move-small", "baseline").outputs
    volumes = outputs[ETCD_VOLUMES_OUTPUT]
    cp = values["kubeshift:cluster"]["control_plane"]
    assert sorted(volumes, key=int) == [str(i) for i in range(1, cp["members"] + 1)]
    declared = {
        r.inputs["tags"]["Name"]: r.inputs["availabilityZone"]
        for r in by_type(rendered("vpc-move-small", "baseline").resources, VOLUME)
    }
    assert {v["name"]: v["az"] for v in volumes.values()} == declared


def test_the_primarys_volumes_are_protected_and_the_mirrors_are_not() -> None:
    primary = by_type(rendered("vpc-move-small", "control-plane-2").resources, VOLUME)
    assert primary and all(r.options.get("protect") for r in primary)
    both = by_type(rendered("cni-swap-example", "mirror-cluster").resources, VOLUME)
    mirror = [r for r in both if "-mirror-" in r.name]
    assert mirror and not any(r.options.get("protect") for r in mirror)
    assert all(r.options.get("protect") for r in both if r not in mirror)


def _refusal(values: dict[str, Any], change: dict[str, Any], phase: str = "baseline") -> str:
    deployed = _deployed(values, phase)
    changed = copy.deepcopy({**values, PHASE_KEY: phase})
    changed["kubeshift:cluster"]["control_plane"].update(change)
    with pytest.raises(pulumi.RunError) as caught:
        record(program.main, config=changed, stack_outputs=deployed)
    return str(caught.value)


def test_moving_a_member_to_another_az_is_refused_naming_volume_and_setting() -> None:
    values = copy.deepcopy(stack_values("vpc-move-small"))
    azs = values["kubeshift:cluster"]["network"]["azs"]
    message = _refusal(values, {"azs": [azs[1], azs[0], *azs[2:]]})
    assert "demo-etcd-1 would be replaced to move it from" in message
    assert "kubeshift:cluster.control_plane.azs" in message
    assert "\n" not in message and message.endswith("put the stack file back.")


@pytest.mark.parametrize("phase", load_config(stack_values("vpc-move-small")).phase_ids)
def test_a_volume_replacement_is_refused_at_every_phase(phase: str) -> None:
    values = copy.deepcopy(stack_values("vpc-move-small"))
    azs = values["kubeshift:cluster"]["network"]["azs"]
    message = _refusal(values, {"azs": [azs[1], azs[0], *azs[2:]]}, phase)
    assert "demo-etcd-1 would be replaced" in message


def test_fewer_members_or_a_smaller_volume_is_refused() -> None:
    values = copy.deepcopy(stack_values("vpc-move-small"))
    message = _refusal(values, {"etcd_volume_size": 10})
    assert "cannot shrink" in message and "etcd_volume_size" in message
    five = copy.deepcopy(values)
    five["kubeshift:cluster"]["control_plane"]["members"] = 5
    lost = r"members 5 → 3 would delete demo-etcd-4, demo-etcd-5"
    with pytest.raises(pulumi.RunError, match=lost):
        record(program.main, config=values, stack_outputs=_deployed(five))


def test_a_bigger_volume_and_an_unchanged_stack_go_through() -> None:
    values = copy.deepcopy(stack_values("vpc-move-small"))
    deployed = _deployed(values)
    assert record(program.main, config=values, stack_outputs=deployed).resources
    values["kubeshift:cluster"]["control_plane"]["etcd_volume_size"] = 200
    grown = record(program.main, config=values, stack_outputs=deployed)
    assert grown.outputs[ETCD_VOLUMES_OUTPUT]["1"]["size"] == 200


def test_releasing_the_volumes_is_refused_before_the_last_phase() -> None:
    values = copy.deepcopy(stack_values("vpc-move-small"))
    values["kubeshift:cluster"]["control_plane"]["release_etcd_volumes"] = True
    with pytest.raises(ConfigError) as caught:
        load_config({**values, PHASE_KEY: "control-plane-3"})
    message = str(caught.value)
    assert "release_etcd_volumes" in message and "'cleanup'" in message
    assert "'control-plane-3'" in message and "\n" not in message


def test_released_at_cleanup_the_volumes_lose_their_protection_and_the_stack_says_so() -> None:
    values = copy.deepcopy(stack_values("vpc-move-small"))
    values["kubeshift:cluster"]["control_plane"]["release_etcd_volumes"] = True
    released = render_program(values, "cleanup")
    volumes = by_type(released.resources, VOLUME)
    assert volumes and not any(r.options.get("protect") for r in volumes)
    assert {v["protected"] for v in released.outputs[ETCD_VOLUMES_OUTPUT].values()} == {False}
    kept = rendered("vpc-move-small", "cleanup")
    assert {v["protected"] for v in kept.outputs[ETCD_VOLUMES_OUTPUT].values()} == {True}
