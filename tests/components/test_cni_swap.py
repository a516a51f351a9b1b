"""cni-swap: the mirror cluster exists only between mirror-cluster and teardown-mirror,
with unique names, its own zone and security groups; certificates carry mirror SANs."""

from __future__ import annotations

import copy

import pytest

from automation.review.render import render_program
from components.contract import policy
from components.contract.loading import load_config
from tests.components.conftest import by_type, rendered, stack_values, template_groups

STACK = "cni-swap-example"
PHASES = load_config(stack_values(STACK)).phase_ids
ASG = "aws:autoscaling/group:Group"
SG = "aws:ec2/securityGroup:SecurityGroup"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
ENI = "aws:ec2/networkInterface:NetworkInterface"
RESERVATION = "aws:ec2/subnetCidrReservation:SubnetCidrReservation"


def _mirror_alive(phase: str) -> bool:
    return PHASES.index("mirror-cluster") <= PHASES.index(phase) < PHASES.index("teardown-mirror")


@pytest.mark.parametrize("phase", PHASES)
def test_mirror_lifecycle_and_policies(phase: str) -> None:
    rendering = rendered(STACK, phase)
    resources = rendering.resources
    mirror = [r for r in resources if r.name.startswith("shop-euw1-mirror")]
    assert bool(mirror) is _mirror_alive(phase)
    zones = by_type(resources, "aws:route53/zone:Zone")
    assert len(zones) == int(_mirror_alive(phase))
    assert policy.check_all(resources, "shop-euw1.k8s.local", public_ports={80, 443}) == []
    if _mirror_alive(phase):
        assert rendering.outputs["mirror_node_security_group_ids"] == [
            "shop-euw1-mirror-common-sg-node-id"
        ]
        mirror_records = [
            r
            for r in by_type(resources, "aws:route53/record:Record")
            if r.parent == "shop-euw1-mirror-dns"
        ]
        assert {r.inputs["zoneId"] for r in mirror_records} == {"Zshop-euw1-mirror-zone"}


def test_mirror_names_are_suffixed_and_groups_distinct() -> None:
    resources = rendered(STACK, "mirror-cluster").resources
    mirror_groups = [r for r in by_type(resources, ASG) if r.parent.startswith("shop-euw1-mirror")]
    assert mirror_groups and all(r.inputs["name"].endswith("-mirror") for r in mirror_groups)
    sgs = by_type(resources, "aws:ec2/securityGroup:SecurityGroup")
    assert sum(r.inputs["name"].endswith("-mirror") for r in sgs) == 5
    roles = {r.inputs["name"] for r in by_type(resources, "aws:iam/role:Role")}
    assert "shop-euw1-node-role-mirror" in roles and "shop-euw1-node-role" in roles


def test_mirror_members_addresses_are_reserved_before_its_workers_launch() -> None:
    """The mirror's members join subnets the primary's instances launch into: each
    member's address is reserved (explicit) in its interface's subnet, and the mirror's
    worker groups launch only once every reservation exists."""
    resources = rendered(STACK, "mirror-cluster").resources
    mirror = [r for r in resources if r.name.startswith("shop-euw1-mirror")]
    interfaces = {
        (i.inputs["subnetId"], f"{i.inputs['privateIps'][0]}/32") for i in by_type(mirror, ENI)
    }
    reservations = by_type(mirror, RESERVATION)
    assert {(r.inputs["subnetId"], r.inputs["cidrBlock"]) for r in reservations} == interfaces
    assert {r.inputs["reservationType"] for r in reservations} == {"explicit"}
    primary = [r for r in resources if r not in mirror]
    assert by_type(primary, RESERVATION) == []
    workers = [r for r in by_type(mirror, ASG) if "-control-plane-" not in r.inputs["name"]]
    assert workers
    for group in workers:
        assert {r.name for r in reservations} <= set(group.options.get("dependsOn", [])), group.name


def test_certificates_cover_the_mirror() -> None:
    (cert,) = by_type(rendered(STACK, "certificates").resources, "aws:acm/certificate:Certificate")
    assert cert.inputs["domainName"] == "shop.example.com"
    assert "*.mirror.shop.example.com" in cert.inputs["subjectAlternativeNames"]
    assert cert.inputs["validationMethod"] == "DNS"


def test_nodes_doubled_during_the_swap_then_old_generation_goes() -> None:
    def generations(phase: str) -> set[str]:
        return {
            {t["key"]: t["value"] for t in r.inputs["tags"]}["kubeshift.io/generation"]
            for r in by_type(rendered(STACK, phase).resources, ASG)
            if r.parent.startswith("shop-euw1-primary-workers")
        }

    assert generations("dns-to-mirror") == {"original"}
    assert generations("cni-swap") == {"original", "cni"}
    assert generations("teardown-mirror") == {"cni"}


def test_an_adopted_primary_without_a_shared_group_beside_a_mirror_with_one() -> None:
    """``shared_group: false`` is the live cluster's: the mirror kubeshift builds beside it
    in the same VPC has its own shared group, which its instances carry."""
    values = copy.deepcopy(stack_values(STACK))
    values["kubeshift:cluster"]["shared_group"] = False
    resources = render_program(values, "mirror-cluster").resources
    groups = {r.id: r.inputs["name"] for r in by_type(resources, SG)}
    shared = sorted(name for name in groups.values() if "shared" in name)
    assert shared == ["shop-euw1-shared-mirror"], shared
    for template in by_type(resources, TEMPLATE):
        carried = {groups[g] for g in template_groups(template.inputs)}
        mirror = template.name.startswith("shop-euw1-mirror")
        assert ("shop-euw1-shared-mirror" in carried) is mirror, (template.name, carried)
        assert len(carried) == (2 if mirror else 1), (template.name, carried)
    assert policy.check_all(resources, "shop-euw1.k8s.local", public_ports={80, 443}) == []
