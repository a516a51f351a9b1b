"""overlay-switch: from the routes phase nodes disable source/dest check and a
route-managing identity exists; route tables are tagged for the cloud provider."""

from __future__ import annotations

import base64

import pytest

from components import policy
from components.config import load_config
from tests.components.conftest import by_type, rendered, stack_values

STACK = "overlay-switch-example"
PHASES = load_config(stack_values(STACK)).phase_ids


@pytest.mark.parametrize("phase", PHASES)
def test_source_dest_check_follows_the_phase(phase: str) -> None:
    rendering = rendered(STACK, phase)
    resources = rendering.resources
    routed = PHASES.index(phase) >= PHASES.index("routes")
    templates = [
        base64.b64decode(r.inputs["userData"]).decode()
        for r in by_type(resources, "aws:ec2/launchTemplate:LaunchTemplate")
        if r.parent == "data-use1-primary-workers"
    ]
    assert templates
    assert all(("--no-source-dest-check" in t) is routed for t in templates)
    roles = {r.inputs["name"] for r in by_type(resources, "aws:iam/role:Role")}
    assert ("data-use1-routes-role" in roles) is routed
    assert rendering.outputs["native_routing"] is routed
    assert policy.check_all(resources, "data-use1") == []


def test_route_tables_are_tagged_for_the_cluster() -> None:
    tables = by_type(rendered(STACK, "routes").resources, "aws:ec2/routeTable:RouteTable")
    assert len(tables) == 3
    assert all(t.inputs["tags"]["kubernetes.io/cluster/data-use1"] == "owned" for t in tables)
