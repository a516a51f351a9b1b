"""The vpc-move program, phase by phase, rendered under Pulumi mocks.

Expected numbers are derived from the stack's config (pools x types x AZs x capacity
types), not copied from a render.
"""

from __future__ import annotations

import copy
from collections import Counter

import pytest

from automation.review.render import RenderedResource, Rendering, render_program
from components.contract import policy
from components.contract.loading import load_config
from components.contract.scenarios.vpc_move import plan_phase
from tests.components.conftest import (
    by_name,
    by_type,
    rendered,
    stack_values,
    template_groups,
)

EXAMPLE = "vpc-move-example"
SMALL = "vpc-move-small"
ASG = "aws:autoscaling/group:Group"
LB = "aws:lb/loadBalancer:LoadBalancer"
SG = "aws:ec2/securityGroup:SecurityGroup"
VPC = "aws:ec2/vpc:Vpc"
ROUTE = "aws:ec2/route:Route"
ROUTE_TABLE = "aws:ec2/routeTable:RouteTable"
RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
RECORD = "aws:route53/record:Record"
SUBNET = "aws:ec2/subnet:Subnet"
ENI = "aws:ec2/networkInterface:NetworkInterface"
RESERVATION = "aws:ec2/subnetCidrReservation:SubnetCidrReservation"

SMALL_PHASES = load_config(stack_values(SMALL)).phase_ids
EXAMPLE_PHASES = load_config(stack_values(EXAMPLE)).phase_ids


def _tags(resource: RenderedResource) -> dict[str, str]:
    tags = resource.inputs.get("tags") or {}
    if isinstance(tags, list):
        return {t["key"]: t["value"] for t in tags}
    return tags


def _worker_groups(resources: list[RenderedResource], side: str) -> list[RenderedResource]:
    return [
        r
        for r in by_type(resources, ASG)
        if _tags(r).get("kubeshift.io/network") == side and "kubeshift.io/pool" in _tags(r)
    ]


def _expected_worker_groups(stack: str) -> int:
    config = load_config(stack_values(stack))
    return sum(
        len(p.instance_types) * len(p.azs or config.cluster.network.azs) * len(p.capacity_types)
        for p in config.cluster.worker_pools
    )


def _vpc_of(resources: list[RenderedResource], subnet_id: str) -> str:
    subnets = {r.id: r for r in by_type(resources, SUBNET)}
    return subnets[subnet_id].inputs["vpcId"]


def _vpc_ids(resources: list[RenderedResource]) -> dict[str, str]:
    """``source``/``target`` -> mock VPC id."""
    found = {}
    for r in by_type(resources, VPC):
        found["target" if "target-network" in r.name else "source"] = r.id
    return found


# --- counts --------------------------------------------------------------------------


def test_example_models_the_seed() -> None:
    """72 worker ASGs, about 200 workers, 3 control-plane members."""
    config = load_config(stack_values(EXAMPLE))
    assert _expected_worker_groups(EXAMPLE) == 72
    types = {t for p in config.cluster.worker_pools for t in p.instance_types}
    assert len(types) == 12
    workers = sum(
        p.desired_size * len(p.instance_types) * 3 * len(p.capacity_types)
        for p in config.cluster.worker_pools
    )
    assert 180 <= workers <= 220
    assert config.cluster.control_plane.members == 3


def test_target_workers_has_144_worker_groups() -> None:
    resources = rendered(EXAMPLE, "target-workers").resources
    assert len(_worker_groups(resources, "source")) == 72
    assert len(_worker_groups(resources, "target")) == 72


@pytest.mark.parametrize("phase", EXAMPLE_PHASES)
def test_counts_per_phase(phase: str) -> None:
    config = load_config({**stack_values(EXAMPLE), "kubeshift:phase": phase})
    plan = plan_phase(config)
    resources = rendered(EXAMPLE, phase).resources
    groups = _expected_worker_groups(EXAMPLE)
    assert len(_worker_groups(resources, "source")) == (groups if plan.old_workers else 0)
    assert len(_worker_groups(resources, "target")) == (groups if plan.target_workers else 0)
    members = [r for r in by_type(resources, ASG) if "kubeshift.io/member" in _tags(r)]
    assert len(members) == 3
    moved = [m for m in members if _tags(m)["kubeshift.io/network"] == "target"]
    assert len(moved) == plan.members_moved
    assert len(by_type(resources, VPC)) == (2 if plan.target_network else 1)
    lbs = Counter(r.inputs["name"].rsplit("-", 1)[-1] for r in by_type(resources, LB))
    expected_lbs = (
        int(plan.old_workers)
        + int(plan.target_common)
        + int(plan.source_api_lb)
        + int(plan.target_api_lb)
    )
    assert sum(lbs.values()) == expected_lbs
    sgs = len(by_type(resources, SG))
    source_sgs = (5 if plan.old_workers else 3) if plan.source_common else 0
    assert sgs == source_sgs + (5 if plan.target_common else 0)
    tables = 1 + 3  # public + one private per AZ, per VPC
    peering_routes = [r for r in by_type(resources, ROUTE) if "vpcPeeringConnectionId" in r.inputs]
    assert len(peering_routes) == (2 * tables if plan.peering else 0)


# --- placement -------------------------------------------------------------------------


def test_new_worker_groups_live_in_target_subnets() -> None:
    resources = rendered(EXAMPLE, "target-workers").resources
    vpcs = _vpc_ids(resources)
    for side in ("source", "target"):
        groups = _worker_groups(resources, side)
        assert len(groups) == _expected_worker_groups(EXAMPLE), side
        for group in groups:
            assert group.inputs["vpcZoneIdentifiers"], group.name
            for subnet in group.inputs["vpcZoneIdentifiers"]:
                assert _vpc_of(resources, subnet) == vpcs[side], group.name


@pytest.mark.parametrize("phase", [p for p in SMALL_PHASES if p.startswith("control-plane")])
def test_members_move_one_per_phase(phase: str) -> None:
    resources = rendered(SMALL, phase).resources
    moved_up_to = int(phase.rsplit("-", 1)[-1])
    vpcs = _vpc_ids(resources)
    enis = by_type(resources, ENI)
    members = load_config(stack_values(SMALL)).cluster.control_plane.members
    assert sorted(int(_tags(e)["kubeshift.io/member"]) for e in enis) == list(range(1, members + 1))
    for eni in enis:
        index = int(_tags(eni)["kubeshift.io/member"])
        side = "target" if index <= moved_up_to else "source"
        assert _vpc_of(resources, eni.inputs["subnetId"]) == vpcs[side], eni.name


def test_members_target_addresses_are_reserved_before_any_worker_launches_there() -> None:
    """From target-network on, each member's address in the target VPC is an explicit
    reservation in the subnet its interface will take, so no worker launched there
    first can hold it; the same reservations in every phase (none replaced)."""
    moved = rendered(SMALL, "cleanup").resources
    subnets = {r.id: r for r in by_type(moved, SUBNET)}
    addresses = {
        _tags(e)["kubeshift.io/member"]: (
            subnets[e.inputs["subnetId"]].name,
            f"{e.inputs['privateIps'][0]}/32",
        )
        for e in by_type(moved, ENI)
    }
    assert len(addresses) == load_config(stack_values(SMALL)).cluster.control_plane.members
    assert by_type(rendered(SMALL, "baseline").resources, RESERVATION) == []
    names = set()
    for phase in SMALL_PHASES[1:]:
        resources = rendered(SMALL, phase).resources
        subnet_names = {r.id: r.name for r in by_type(resources, SUBNET)}
        reservations = by_type(resources, RESERVATION)
        assert {r.inputs["reservationType"] for r in reservations} == {"explicit"}
        reserved = {
            r.name: (subnet_names[r.inputs["subnetId"]], r.inputs["cidrBlock"])
            for r in reservations
        }
        assert sorted(reserved.values()) == sorted(addresses.values()), phase
        names.add(frozenset(reserved))
    assert len(names) == 1


def test_etcd_volumes_never_move() -> None:
    """Same logical name and AZ in every phase: the data stays."""
    seen = {}
    for phase in SMALL_PHASES:
        volumes = by_type(rendered(SMALL, phase).resources, "aws:ebs/volume:Volume")
        assert len(volumes) == 3
        for v in volumes:
            assert (
                seen.setdefault(v.name, v.inputs["availabilityZone"])
                == (v.inputs["availabilityZone"])
            )
    assert len(seen) == 3  # the same three volumes in every phase


# --- peering ----------------------------------------------------------------------------


@pytest.mark.parametrize("phase", SMALL_PHASES[1:])
def test_peering_routes_in_every_route_table(phase: str) -> None:
    resources = rendered(SMALL, phase).resources
    config = load_config(stack_values(SMALL))
    assert config.migration.target_network is not None
    cidrs = {
        "source": str(config.cluster.network.cidr),
        "target": str(config.migration.target_network.cidr),
    }
    vpcs = _vpc_ids(resources)
    peer = {"source": "target", "target": "source"}
    routes = [r for r in by_type(resources, ROUTE) if "vpcPeeringConnectionId" in r.inputs]
    tables = by_type(resources, ROUTE_TABLE)
    assert tables
    for table in tables:
        side = "source" if table.inputs["vpcId"] == vpcs["source"] else "target"
        mine = [r for r in routes if r.inputs["routeTableId"] == table.id]
        assert [r.inputs["destinationCidrBlock"] for r in mine] == [cidrs[peer[side]]], table.name
    options = by_type(resources, "aws:ec2/peeringConnectionOptions:PeeringConnectionOptions")
    assert options[0].inputs["requester"] == {"allowRemoteVpcDnsResolution": True}
    assert options[0].inputs["accepter"] == {"allowRemoteVpcDnsResolution": True}


# --- security groups -----------------------------------------------------------------------


def _group_id(resources: list[RenderedResource], side: str, role: str) -> str | None:
    suffix = "-mig" if side == "target" else ""
    for r in by_type(resources, SG):
        if r.inputs["name"] == f"demo-{role}{suffix}":
            return r.id
    return None


@pytest.mark.parametrize(
    "phase", ["shared-resources", "target-workers", "dns-cutover", "drain-workers"]
)
def test_shared_groups_admit_old_and_new_nodes(phase: str) -> None:
    resources = rendered(SMALL, phase).resources
    nodes = {_group_id(resources, s, "node") for s in ("source", "target")}
    assert None not in nodes
    for side in ("source", "target"):
        shared = _group_id(resources, side, "shared")
        sources = {
            r.inputs["referencedSecurityGroupId"]
            for r in by_type(resources, RULE)
            if r.inputs["securityGroupId"] == shared
        }
        assert nodes <= sources, side


LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"


def _without_shared_group(phase: str) -> Rendering:
    values = copy.deepcopy(stack_values(SMALL))
    values["kubeshift:cluster"]["shared_group"] = False
    return render_program(values, phase)


def _template_groups(resources: list[RenderedResource], side: str) -> list[set[str]]:
    own = [r for r in by_type(resources, LAUNCH_TEMPLATE) if r.inputs["name"].endswith("-mig")]
    templates = own if side == "target" else [
        r for r in by_type(resources, LAUNCH_TEMPLATE) if r not in own
    ]  # fmt: skip
    return [template_groups(template.inputs) for template in templates]


def test_an_adopted_side_without_a_shared_group_admits_peers_in_its_instances_groups() -> None:
    """``shared_group: false`` (a kops cluster): the live side declares no shared group, its
    instances keep the one group each they carry, and the new VPC's groups are admitted
    in those; the side kubeshift builds has its shared group as always."""
    baseline = _without_shared_group("baseline").resources
    assert _group_id(baseline, "source", "shared") is None
    assert all(len(groups) == 1 for groups in _template_groups(baseline, "source"))

    rendering = _without_shared_group("target-workers")
    resources = rendering.resources
    assert _group_id(resources, "source", "shared") is None
    target_shared = _group_id(resources, "target", "shared")
    assert target_shared is not None
    target_templates = _template_groups(resources, "target")
    assert target_templates and all(target_shared in groups for groups in target_templates)
    new = {_group_id(resources, "target", role) for role in ("node", "control-plane")}
    old = {_group_id(resources, "source", role) for role in ("node", "control-plane")}
    admitted = {
        (r.inputs["securityGroupId"], r.inputs["referencedSecurityGroupId"])
        for r in by_type(resources, RULE)
        if r.inputs.get("referencedSecurityGroupId")
    }
    assert {(into, peer) for into in old for peer in new} <= admitted
    assert {(target_shared, peer) for peer in old} <= admitted
    # the preflight checks the groups that reference the other VPC's
    assert rendering.outputs["peer_admitting_security_group_ids"] == {
        "source": [_group_id(resources, "source", "control-plane"),
                   _group_id(resources, "source", "node")],
        "target": [target_shared],
    }  # fmt: skip
    assert policy.no_open_ingress(resources, public_ports=()) == []


def test_old_node_group_is_gone_after_retirement() -> None:
    resources = rendered(SMALL, "retire-old-workers").resources
    assert _group_id(resources, "source", "node") is None
    referenced = {r.inputs.get("referencedSecurityGroupId") for r in by_type(resources, RULE)}
    assert "demo-common-sg-node-id" not in referenced


# --- DNS -------------------------------------------------------------------------------------

DNS_TABLE = [
    # phase, ingress LB, API record type, API target
    ("baseline", "demo-ingress", "CNAME", "demo-api"),
    ("target-workers", "demo-ingress", "CNAME", "demo-api"),
    ("dns-cutover", "demo-ingress-mig", "CNAME", "demo-api"),
    ("retire-old-workers", "demo-ingress-mig", "CNAME", "demo-api"),
    ("control-plane-1", "demo-ingress-mig", "CNAME", "demo-api"),
    ("control-plane-2", "demo-ingress-mig", "CNAME", "demo-api-mig"),
    ("control-plane-3", "demo-ingress-mig", "CNAME", "demo-api-mig"),
    ("cleanup", "demo-ingress-mig", "CNAME", "demo-api-mig"),
]


@pytest.mark.parametrize(
    ("phase", "ingress", "api_type", "api_target"), DNS_TABLE, ids=[row[0] for row in DNS_TABLE]
)
def test_dns_per_phase(phase: str, ingress: str, api_type: str, api_target: str) -> None:
    resources = rendered(SMALL, phase).resources
    records = {r.inputs["name"]: r for r in by_type(resources, RECORD)}
    ingress_record = records["*.apps.demo.example.internal"]
    assert ingress_record.inputs["type"] == "CNAME"
    assert ingress_record.inputs["records"] == [f"{ingress}.elb.us-west-2.amazonaws.com"]
    api = records["api.demo.example.internal"]
    assert api.inputs["type"] == api_type  # never changes: no replacement to order
    assert not api.options.get("deleteBeforeReplace"), "a delete-first record leaves a gap"
    # While member 1 moves, the source load balancer's other members serve; from member
    # 2 on, the target one, which member 1 is behind by then.
    assert api.inputs["records"] == [f"{api_target}.elb.us-west-2.amazonaws.com"]
    assert set(records) == {"*.apps.demo.example.internal", "api.demo.example.internal"}


# --- aliases -----------------------------------------------------------------------------------


def _mock_urn(alias: dict[str, str], child_type: str, stack: str = "demo") -> str:
    """The URN an alias spec names, as the mock monitor would have built it.

    The mock keeps only the parent's own type in a child's URN (the engine keeps the
    whole chain), so the alias's parent chain is cut the same way.
    """
    parent_type = alias["parentUrn"].split("::")[2].split("$")[-1]
    return f"urn:pulumi:{stack}::kubeshift::{parent_type}${child_type}::{alias['name']}"


def _moves(resources: list[RenderedResource]) -> list[RenderedResource]:
    return [r for r in resources if any("name" in a for a in r.aliases)]


@pytest.mark.parametrize("phase", SMALL_PHASES[: SMALL_PHASES.index("retire-old-workers")])
def test_no_moves_before_retirement(phase: str) -> None:
    assert _moves(rendered(SMALL, phase).resources) == []


@pytest.mark.parametrize("phase", SMALL_PHASES[SMALL_PHASES.index("retire-old-workers") :])
def test_node_identity_moves_with_aliases(phase: str) -> None:
    before = {r.urn for r in rendered(SMALL, "drain-workers").resources}
    resources = rendered(SMALL, phase).resources
    moved = _moves(resources)
    # The identity component, its role, profile and two policy attachments.
    assert len(moved) == 5
    for r in moved:
        assert r.name.startswith("demo-common-mig-node-identity")
        (alias,) = [a for a in r.aliases if "name" in a]
        assert _mock_urn(alias, r.type) in before, r.name
    # Physical names do not change in a move: no replacement.
    old = by_name(rendered(SMALL, "drain-workers").resources)
    new = by_name(resources)
    assert (
        new["demo-common-mig-node-identity-role"].inputs["name"]
        == (old["demo-common-node-identity-role"].inputs["name"])
    )


# --- names and policies ------------------------------------------------------------------------


def _long_name_values() -> dict:
    values = copy.deepcopy(stack_values(SMALL))
    values["kubeshift:cluster"]["name"] = "payments-platform-eu-central-1-prod-blue"
    values["kubeshift:migration"]["suffix"] = "vpc-2025-q4"
    assert len(values["kubeshift:cluster"]["name"]) == 40
    return values


@pytest.mark.parametrize("phase", ["target-workers", "control-plane-1", "cleanup"])
def test_names_fit_for_a_40_character_cluster(phase: str) -> None:
    resources = render_program(_long_name_values(), phase).resources
    assert policy.names_valid_and_unique(resources) == []
    for r in by_type(resources, LB) + by_type(resources, "aws:lb/targetGroup:TargetGroup"):
        assert len(r.inputs["name"]) <= 32


@pytest.mark.parametrize("phase", SMALL_PHASES)
def test_policies_hold_in_every_phase(phase: str) -> None:
    resources = rendered(SMALL, phase).resources
    assert [str(v) for v in policy.check_all(resources, "demo")] == []


@pytest.mark.parametrize("phase", SMALL_PHASES)
def test_policies_hold_in_every_phase_without_a_shared_group(phase: str) -> None:
    resources = _without_shared_group(phase).resources
    assert [str(v) for v in policy.check_all(resources, "demo")] == []


@pytest.mark.parametrize("phase", ["baseline", "target-workers", "drain-workers", "cleanup"])
def test_policies_hold_for_the_example(phase: str) -> None:
    resources = rendered(EXAMPLE, phase).resources
    assert [str(v) for v in policy.check_all(resources, "prod-usw2.k8s.local")] == []


def test_draining_groups_stop_launching() -> None:
    before = _worker_groups(rendered(SMALL, "ingress-move").resources, "source")
    during = _worker_groups(rendered(SMALL, "drain-workers").resources, "source")
    assert len(before) == len(during) == _expected_worker_groups(SMALL)
    assert all(not g.inputs.get("suspendedProcesses") for g in before)
    assert all("Launch" in g.inputs["suspendedProcesses"] for g in during)


def test_phases_without_infrastructure_change_render_identically() -> None:
    """ingress-nodeport and ingress-move only run hooks."""
    for phase, previous in (
        ("ingress-nodeport", "shared-resources"),
        ("ingress-move", "dns-cutover"),
    ):
        now = {(r.urn, repr(r.inputs)) for r in rendered(SMALL, phase).resources}
        then = {(r.urn, repr(r.inputs)) for r in rendered(SMALL, previous).resources}
        assert now == then, phase
