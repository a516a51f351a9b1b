"""The local stack ready for the sandbox's world on the session's moto: the fixture
of the tests that build the world kops would have built, and adopt it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from automation.sandbox.moto_gaps.autoscaling import (
    grace_period_as_given,
    groups_spread_over_zones_and_types,
)
from automation.sandbox.moto_gaps.ec2 import (
    interface_groups_reach_instances,
    reserve_interface_addresses,
    rules_equal_whatever_their_descriptions,
)
from components.contract.loading import load_stack_file
from tests.support.moto_fixtures import MotoServer

LOCAL = Path(__file__).resolve().parents[2] / "stacks" / "Pulumi.local.yaml"
SANDBOX_PARTITION = "aws"
"""Every region the sandbox uses is in AWS's ``aws`` partition."""


def managed_policies_in_one_partition(monkeypatch: pytest.MonkeyPatch) -> None:
    """AWS's managed policies in the ``aws`` partition's IAM backend only.

    moto builds its 1,582 managed policies for each of six partitions' IAM backends, at
    every reset (9,492 policy objects, about 2.5 s of CPU). The reset between a test's
    two world builds then outlasted its 10 s deadline on a loaded CI machine (the unit
    shard runs at a lower priority beside three others). Built where they are used, a
    reset does a sixth of that work; no test reads another partition.
    """
    from moto.iam.models import IAMBackend

    original = IAMBackend._init_aws_policies

    def _init_aws_policies(self: IAMBackend) -> Any:
        return original(self) if self.region_name == SANDBOX_PARTITION else []

    monkeypatch.setattr(IAMBackend, "_init_aws_policies", _init_aws_policies)


@pytest.fixture
def kops_values(moto: MotoServer, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The local stack, its hosted zone made in moto; moto as the sandbox runs it (AWS's
    managed policies loaded, interfaces' fixed addresses taken)."""
    from moto.autoscaling.models import AutoScalingBackend, FakeAutoScalingGroup
    from moto.ec2.models.elastic_network_interfaces import NetworkInterface
    from moto.ec2.models.instances import InstanceBackend
    from moto.ec2.models.security_groups import SecurityGroupRule

    monkeypatch.setenv("MOTO_IAM_LOAD_MANAGED_POLICIES", "true")  # the server is in-process
    managed_policies_in_one_partition(monkeypatch)
    monkeypatch.setattr(NetworkInterface, "__init__", NetworkInterface.__init__)  # undone after
    spread = FakeAutoScalingGroup.replace_autoscaling_group_instances
    monkeypatch.setattr(FakeAutoScalingGroup, "replace_autoscaling_group_instances", spread)
    monkeypatch.setattr(SecurityGroupRule, "__eq__", SecurityGroupRule.__eq__)
    create = AutoScalingBackend.create_auto_scaling_group
    monkeypatch.setattr(AutoScalingBackend, "create_auto_scaling_group", create)
    monkeypatch.setattr(InstanceBackend, "run_instances", InstanceBackend.run_instances)
    grace_period_as_given()
    interface_groups_reach_instances()
    reserve_interface_addresses()
    groups_spread_over_zones_and_types()
    rules_equal_whatever_their_descriptions()
    moto.reset()
    values = load_stack_file(LOCAL)
    route53 = moto.client("route53")
    zone = route53.create_hosted_zone(Name="local-demo.example.internal", CallerReference="t")
    values["kubeshift:cluster"]["dns"]["zone_id"] = zone["HostedZone"]["Id"].rsplit("/", 1)[-1]
    return values


def sandbox_without_services(root: Path, moto: MotoServer, region: str) -> tuple[Any, Any]:
    """(paths, state) of a sandbox under ``root`` whose AWS is ``moto`` and which runs
    nothing else: what building a world needs of ``sandbox up``."""
    from automation.sandbox.layout import SandboxPaths
    from automation.sandbox.state import SandboxState

    paths = SandboxPaths(root)
    paths.root.mkdir()
    state = SandboxState(
        stack="local", scenario="vpc-move", region=region, supervisor_pid=0,
        moto_endpoint=moto.endpoint_url, processes=[], clusters=[], pulumi_bin="pulumi",
        started_at=0.0,
    )  # fmt: skip
    return paths, state
