"""automation.review.render: the real program under fresh mocks, repeatable in one process."""

from __future__ import annotations

import copy
import json
from typing import Any

import pulumi
import pulumi_aws as aws
import pytest

from automation.review.render import SECRET, RenderedResource, record, render, render_program
from components.contract.loading import load_stack_file
from components.contract.model_base import ConfigError
from tests.components.conftest import STACKS

ASG = "aws:autoscaling/group:Group"


@pytest.fixture(scope="module")
def small() -> dict[str, Any]:
    return load_stack_file(STACKS / "Pulumi.vpc-move-small.yaml")


def test_resources_carry_what_the_cli_prints(small: dict[str, Any]) -> None:
    resources = render(small)
    assert resources and all(isinstance(r, RenderedResource) for r in resources)
    vpc = next(r for r in resources if r.type == "aws:ec2/vpc:Vpc")
    assert vpc.name == "demo-source-network-vpc"
    assert vpc.parent == "demo-source-network"
    assert vpc.inputs["cidrBlock"] == "10.0.0.0/16"
    assert vpc.urn.endswith("::demo-source-network-vpc")
    top = next(r for r in resources if r.type == "kubeshift:scenario:VpcMove")
    assert top.parent is None and not top.custom
    json.dumps([r.to_json() for r in resources])  # JSON-safe as the CLI emits it


def test_repeated_renders_are_isolated_and_deterministic(small: dict[str, Any]) -> None:
    first = render(small, "target-workers")
    baseline = render(small, "baseline")
    again = render(small, "target-workers")
    assert [(r.urn, r.inputs) for r in first] == [(r.urn, r.inputs) for r in again]
    assert len(baseline) < len(first)
    assert sum(r.type == ASG for r in first) == 8 + 8 + 3


def test_phase_argument_overrides_the_stack_phase(small: dict[str, Any]) -> None:
    values = copy.deepcopy(small)
    values["kubeshift:phase"] = "cleanup"
    rendering = render_program(values, "baseline")
    assert rendering.outputs["phase"] == "baseline"
    assert rendering.outputs["target_vpc_id"] is None


def test_outputs_the_runner_needs(small: dict[str, Any]) -> None:
    outputs = render_program(small, "control-plane-1").outputs
    assert outputs["source_vpc_id"] == "demo-source-network-vpc-id"
    assert outputs["target_vpc_id"] == "demo-target-network-vpc-id"
    assert outputs["api_record_target"] == "source-lb"  # members 2 and 3 serve behind it
    assert outputs["control_plane_members"]["1"]["side"] == "target"
    assert outputs["control_plane_members"]["2"]["side"] == "source"
    assert outputs["records"]["api"]["type"] == "CNAME"
    assert set(outputs["records"]) == {"api", "ingress-0"}
    assert set(outputs["target_group_arns"]) == {"ingress-target", "api-source", "api-target"}
    assert len(outputs["worker_asg_names"]["target"]) == 8


def test_invalid_config_raises_config_error(small: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match="kubeshift:phase 'nope' is not a phase"):
        render(small, "nope")


def test_secrets_are_redacted() -> None:
    def program() -> None:
        aws.ssm.Parameter(
            "p", name="/x", type="SecureString", value=pulumi.Output.secret("hunter2")
        )

    (parameter,) = record(program).resources
    assert parameter.inputs["value"] == SECRET
    assert "hunter2" not in json.dumps(parameter.to_json())


def test_secure_config_values_never_reach_the_program() -> None:
    seen: dict[str, Any] = {}

    def program() -> None:
        seen["token"] = pulumi.Config("kubeshift").get("token")

    record(program, config={"kubeshift:token": {"secure": "v1:abc"}})
    assert seen["token"] == SECRET


def test_example_target_workers_lists_144_worker_groups() -> None:
    values = load_stack_file(STACKS / "Pulumi.vpc-move-example.yaml")
    resources = render(values, "target-workers")
    workers = [r for r in resources if r.type == ASG and "workers" in r.inputs["name"]]
    assert len(workers) == 144
    assert sum(r.inputs["name"].endswith("-migration") for r in workers) == 72
