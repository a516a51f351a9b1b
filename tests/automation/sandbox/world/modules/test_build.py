"""The modules' world: seed 001's cluster built with boto3 under its Terraform modules'
names, with no kops or kubeshift tag on it, and what ``kubeshift adopt`` reads back."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from automation.adoption.discovery import discover
from automation.adoption.stack_file import propose_stack
from automation.aws.clients import AwsAccess, AwsClients
from automation.aws.terraform_state import claims_in, release_commands, still_claimed
from automation.sandbox.provider.model import Aws
from automation.sandbox.world.modules.build import ModulesWorld, build_modules
from tests.support.moto_fixtures import MotoServer

REGION = "us-west-2"
CLUSTER_TAG = "kubernetes.io/cluster/local-demo"


@pytest.fixture
def values(kops_values: dict[str, Any]) -> dict[str, Any]:
    """The local stack as the modules' cluster: no kops ID, the modules' own name."""
    stack = copy.deepcopy(kops_values)
    del stack["kubeshift:cluster"]["cluster_id"]
    return stack


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "terraform.tfstate"


@pytest.fixture
def world(values: dict[str, Any], moto: MotoServer, state: Path) -> ModulesWorld:
    return build_modules(values, Aws(REGION, moto.endpoint_url), state)


def test_the_modules_build_per_type_zone_and_capacity_under_their_own_names(
    world: ModulesWorld, moto: MotoServer
) -> None:
    aws = Aws(REGION, moto.endpoint_url)
    listed = aws.client("autoscaling").describe_auto_scaling_groups()["AutoScalingGroups"]
    groups = {g["AutoScalingGroupName"]: g for g in listed}
    # a control-plane group per member, a workers module per type x AZ x capacity
    members = sorted(n for n in groups if n.startswith("local-demo-control-plane-"))
    assert members == [f"local-demo-control-plane-{n}" for n in (1, 2, 3)]
    workers = [g for n, g in groups.items() if n not in members]
    assert len(workers) == 2 * 2 * 2
    assert all(len(g["VPCZoneIdentifier"].split(",")) == 1 for g in workers)
    # each group its own template, named as its group
    templates = {g["LaunchTemplate"]["LaunchTemplateId"] for g in groups.values()}
    assert len(templates) == len(groups)
    # nothing of kops's or kubeshift's to lean on: the cluster tag, Name and the stack's
    for group in groups.values():
        keys = {t["Key"] for t in group["Tags"]}
        assert keys == {CLUSTER_TAG, "Name", "team"}, keys
    volumes = aws.ec2.describe_volumes()["Volumes"]
    assert sorted(t["Value"] for v in volumes for t in v.get("Tags", []) if t["Key"] == "Name") == [
        "local-demo-control-plane-etcd-1", "local-demo-control-plane-etcd-2",
        "local-demo-control-plane-etcd-3",
    ]  # fmt: skip
    # the API's record is a CNAME to the API load balancer the modules named
    elb = aws.client("elbv2")
    balancers = {b["LoadBalancerName"] for b in elb.describe_load_balancers()["LoadBalancers"]}
    assert balancers == {"local-demo-api", "local-demo-ingress"}
    zone = next(b.id.split("_")[0] for b in world.built if b.kind == "route53:record")
    records = aws.client("route53").list_resource_record_sets(HostedZoneId=zone)
    api = next(r for r in records["ResourceRecordSets"] if r["Name"].startswith("api."))
    assert api["Type"] == "CNAME"


def test_terraform_state_records_every_resource_under_its_module_address(
    world: ModulesWorld, state: Path
) -> None:
    claims = claims_in(state.read_text(), str(state))
    claimed = {i for c in claims for i in c.ids}
    assert {b.id for b in world.built} <= claimed
    addresses = {c.address for c in claims}
    assert "module.control-plane.aws_autoscaling_group.this[1]" in addresses
    assert 'module.vpc.aws_subnet.private["us-west-2b"]' in addresses
    assert (
        "module.workers-general-m5-large-us-west-2a-spot.aws_autoscaling_group.this" in addresses
    )
    assert len(addresses) == len(claims)  # one instance per address


def test_adoption_proposes_a_stack_that_finds_everything_without_any_tag_to_lean_on(
    world: ModulesWorld, values: dict[str, Any], tmp_path: Path, state: Path
) -> None:
    clients = AwsClients(AwsAccess(region=REGION))
    proposed = propose_stack(values, tmp_path / "Pulumi.local.yaml", clients)
    assert proposed.proposal.problems == []
    cluster = proposed.values["kubeshift:cluster"]
    # the members are the single-instance groups behind the API, noted for review
    notes = " ".join(proposed.proposal.notes)
    assert "No group carries k8s.io/role/master" in notes
    # the members' etcd volumes and fixed interfaces, tagged for the cluster alone, are
    # told from the instances' own by being made apart from any; each numbered by its
    # name where its AZ holds two members (3 members over 2 AZs)
    declared = values["kubeshift:cluster"]["control_plane"]
    plane = cluster["control_plane"]
    assert plane["members"] == 3 and plane["etcd_volume_size"] == declared["etcd_volume_size"]
    assert plane["host_index"] == declared.get("host_index", 10)  # read from the interfaces
    kept = {k: v for k, v in cluster["names"].items() if k.startswith("tag:")}
    assert sorted(kept.values()) == [f"local-demo-control-plane-etcd-{n}" for n in (1, 2, 3)]
    # the workers, one pool by the modules' names less type, AZ and capacity, split so
    (pool,) = cluster["worker_pools"]
    assert pool["name"] == "workers-general"
    assert pool.get("group_per", "type-zone-capacity") == "type-zone-capacity"
    assert sorted(pool["capacity_types"]) == ["on-demand", "spot"]
    assert cluster["own_tags"] is False
    # the modules wrote only the current cluster tag: the legacy ones are left off too
    assert cluster["legacy_tags"] is False
    assert cluster["autoscaler_tags"] is False  # and ran no cluster-autoscaler
    assert pool["template_per"] == "group"  # a template per module, spot by its market
    # with the proposal, discovery finds every resource the program declares; nothing
    # is missing and nothing needs adding
    named = discover(proposed.values, clients, "local")
    assert named.problems == [] and named.skipped == [] and named.additions == []
    found = {r.id: r for r in named.resources}
    groups = {b.id for b in world.built if b.kind == "autoscaling:group"}
    assert groups <= set(found)
    # every resource adoption imports, Terraform's state still claims: released by
    # addresses read from the state, never guessed
    claims = claims_in(state.read_text(), str(state))
    adopted = {r.id for r in named.resources} | {r.import_id for r in named.resources} - {None}
    held = still_claimed(claims, adopted)  # type: ignore[arg-type]
    claimed = {i for c in held for i in c.ids}
    unclaimed = [r for r in named.resources if not {r.id, r.import_id} & claimed]
    # what the modules do not record: the attachments (kubeshift records them, imports none)
    assert {r.type for r in unclaimed} == {"aws:autoscaling/attachment:Attachment"}
    commands = release_commands(held)
    assert commands and all(c.startswith("terraform state rm ") for c in commands)
    assert "'module.control-plane.aws_autoscaling_group.this[0]'" in " ".join(commands)


def test_sandbox_up_builds_the_modules_world_once_and_writes_terraforms_state_beside(
    values: dict[str, Any], moto: MotoServer, tmp_path: Path
) -> None:
    from automation.sandbox.world_up import SandboxError, _build_live
    from tests.support.kops_world import sandbox_without_services

    paths, state = sandbox_without_services(tmp_path / "sandbox", moto, REGION)
    said: list[str] = []
    _build_live(values, paths, state, said.append, "terraform-modules")
    assert paths.world_built.exists() and paths.terraform_state in paths.wipeable()
    claims = claims_in(paths.terraform_state.read_text(), str(paths.terraform_state))
    assert "module.common.aws_lb.api" in {c.address for c in claims}
    assert any("kubeshift:runtime.terraform_state" in line for line in said)
    _build_live(values, paths, state, said.append, "terraform-modules")
    assert said[-1] == "  the live cluster local-demo is already built"
    paths.world_built.unlink()  # as if the build itself had been cut short
    with pytest.raises(SandboxError, match=r"was cut short\. Run `kubeshift sandbox down`"):
        _build_live(values, paths, state, said.append, "terraform-modules")
