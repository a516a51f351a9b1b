"""The sandbox's live cluster built with boto3 under kops's names: no engine, no state,
and what ``kubeshift adopt`` reads back from it is the cluster that was built."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from automation.adoption.discovery import discover
from automation.adoption.stack_file import propose_stack
from automation.aws.clients import AwsAccess, AwsClients
from automation.sandbox.moto_gaps import reserve_interface_addresses
from automation.sandbox.provider.model import Aws
from automation.sandbox.world.build import build, foreign_names, with_names
from components.config import load_stack_file
from tests.support.moto_fixtures import MotoServer

LOCAL = Path(__file__).resolve().parents[4] / "stacks" / "Pulumi.local.yaml"
REGION = "us-west-2"


@pytest.fixture
def values(moto: MotoServer, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The local stack, its hosted zone made in moto; moto as the sandbox runs it (AWS's
    managed policies loaded, interfaces' fixed addresses taken)."""
    from moto.ec2.models.elastic_network_interfaces import NetworkInterface

    monkeypatch.setenv("MOTO_IAM_LOAD_MANAGED_POLICIES", "true")  # the server is in-process
    monkeypatch.setattr(NetworkInterface, "__init__", NetworkInterface.__init__)  # undone after
    reserve_interface_addresses()
    moto.reset()
    values = load_stack_file(LOCAL)
    route53 = moto.client("route53")
    zone = route53.create_hosted_zone(Name="local-demo.example.internal", CallerReference="t")
    values["kubeshift:cluster"]["dns"]["zone_id"] = zone["HostedZone"]["Id"].rsplit("/", 1)[-1]
    return values


@pytest.fixture
def built(values: dict[str, Any], moto: MotoServer) -> list[Any]:
    return build(values, Aws(REGION, moto.endpoint_url))


def test_the_cluster_runs_under_kops_names(built: list[Any], moto: MotoServer) -> None:
    assert len(built) == 98
    aws = Aws(REGION, moto.endpoint_url)
    listed = aws.client("autoscaling").describe_auto_scaling_groups()["AutoScalingGroups"]
    groups = {g["AutoScalingGroupName"]: g for g in listed}
    assert "master-us-west-2b-2.masters.local-demo.k8s.local" in groups
    assert all(name.endswith(".local-demo.k8s.local") for name in groups)
    running = sum(len(g["Instances"]) for g in groups.values())
    assert running == 11  # 3 members and one worker in each of the 8 worker groups
    # the groups launched last: no instance holds a member interface's fixed address
    interfaces = aws.ec2.describe_network_interfaces()["NetworkInterfaces"]
    addresses = [i["PrivateIpAddress"] for i in interfaces]
    assert len(addresses) == len(set(addresses))
    names = {g["GroupName"] for g in aws.ec2.describe_security_groups()["SecurityGroups"]}
    assert {"nodes.local-demo.k8s.local", "masters.local-demo.k8s.local"} <= names


def test_write_config_reads_back_every_name_kops_gave(
    built: list[Any], values: dict[str, Any], tmp_path: Path
) -> None:
    clients = AwsClients(AwsAccess(region=REGION))
    proposed = propose_stack(values, tmp_path / "Pulumi.local.yaml", clients)
    assert proposed.proposal.problems == []
    cluster = proposed.values["kubeshift:cluster"]
    assert cluster["names"] == foreign_names(values)
    # kops's own tags, which kubeshift does not declare, are kept: its 11 groups, 4 subnets
    kept = cluster["kept_tags"]
    assert len(kept) == 15
    member = kept["local-demo-control-plane-asg-2"]
    assert member == {"kops.k8s.io/instancegroup": "master-us-west-2b-2"}
    worker = kept["local-demo-workers-general-m5a-large-us-west-2b-spot"]
    assert worker == {
        "k8s.io/role/node": "1",
        "kops.k8s.io/instancegroup": "general-m5a-large-us-west-2b-spot",
    }
    assert kept["local-demo-source-network-private-us-west-2a"] == {"SubnetType": "Private"}


def test_with_the_names_every_resource_is_found_and_without_them_none_named_is(
    built: list[Any], values: dict[str, Any]
) -> None:
    clients = AwsClients(AwsAccess(region=REGION))
    named = discover(with_names(values, foreign_names(values)), clients, "local")
    assert named.problems == [] and named.skipped == []
    assert len(named.resources) == len(built)
    unnamed = discover(values, clients, "local")
    assert "local-demo-common-sg-node: no live security group local-demo-node in" in " ".join(
        unnamed.problems
    )
    assert len(unnamed.resources) < len(built)
    # the refusal says where the missing names are
    hint = re.match(r"(\d+) resources tagged for local-demo \(", unnamed.problems[-1])
    assert hint and int(hint.group(1)) > 0, unnamed.problems[-1]
    assert "`kubeshift adopt --write-config FILE` proposes" in unnamed.problems[-1]


def test_up_keeps_a_whole_world_and_refuses_to_finish_one_cut_short(
    values: dict[str, Any], moto: MotoServer, tmp_path: Path
) -> None:
    from automation.sandbox.commands import SandboxError, _build_as_kops
    from automation.sandbox.layout import SandboxPaths
    from automation.sandbox.state import SandboxState

    paths = SandboxPaths(tmp_path / "sandbox")
    paths.root.mkdir()
    state = SandboxState(
        stack="local", scenario="vpc-move", region=REGION, supervisor_pid=0,
        moto_endpoint=moto.endpoint_url, processes=[], clusters=[], pulumi_bin="pulumi",
        started_at=0.0,
    )  # fmt: skip
    said: list[str] = []
    _build_as_kops(values, paths, state, said.append)
    assert paths.world_built.exists() and "98 AWS resources" in said[-1]
    _build_as_kops(values, paths, state, said.append)  # an `up` cut short after the build
    assert said[-1] == "  the live cluster local-demo is already built"
    vpcs = Aws(REGION, moto.endpoint_url).ec2.describe_vpcs()["Vpcs"]
    assert len([v for v in vpcs if not v.get("IsDefault")]) == 1  # nothing built twice
    paths.world_built.unlink()  # as if the build itself had been cut short
    with pytest.raises(SandboxError, match=r"was cut short\. Run `kubeshift sandbox down`"):
        _build_as_kops(values, paths, state, said.append)
