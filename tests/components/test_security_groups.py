"""Security groups: LB -> nodes and control plane, shared, peer access, no open ingress."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from automation.aws.nodes import cluster_tag_key
from automation.review.render import record, render_program
from components.contract import policy
from components.contract.naming import Namer
from components.contract.tags import cluster_tags
from components.security_groups import (
    PeerAccess,
    PeerAccessArgs,
    SecurityGroups,
    SecurityGroupsArgs,
)
from tests.components.conftest import by_type

RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"


def _args(**overrides: object) -> SecurityGroupsArgs:
    base: dict[str, object] = dict(
        namer=Namer("prod", "mig"),
        vpc_id="vpc-1",
        ingress_node_ports=[30080, 30443],
        ingress_ports=[80, 443],
        client_cidrs=["10.0.0.0/16"],
    )
    base.update(overrides)
    return SecurityGroupsArgs(**base)  # type: ignore[arg-type]


def _rules_into(resources: list, group_name: str) -> list[dict]:
    ids = {r.id for r in resources if r.inputs.get("name") == group_name}
    return [r.inputs for r in by_type(resources, RULE) if r.inputs["securityGroupId"] in ids]


def test_groups_and_rules() -> None:
    resources = record(lambda: SecurityGroups("sg", _args())).resources
    names = sorted(
        r.inputs["name"] for r in by_type(resources, "aws:ec2/securityGroup:SecurityGroup")
    )
    assert names == [
        "prod-api-lb-mig",
        "prod-control-plane-mig",
        "prod-ingress-lb-mig",
        "prod-node-mig",
        "prod-shared-mig",
    ]
    node_rules = _rules_into(resources, "prod-node-mig")
    assert sorted(r["fromPort"] for r in node_rules) == [30080, 30443]
    assert all(r["referencedSecurityGroupId"] == "sg-ingress-lb-id" for r in node_rules)
    shared = {r["referencedSecurityGroupId"] for r in _rules_into(resources, "prod-shared-mig")}
    assert shared == {"sg-node-id", "sg-control-plane-id"}
    assert policy.no_open_ingress(resources, public_ports=()) == []


def test_each_instance_has_one_group_tagged_for_the_cluster() -> None:
    """The AWS cloud provider opens a LoadBalancer Service's traffic in the one group of
    an instance that carries the cluster tag, and refuses an instance with two."""
    tags = cluster_tags("prod")
    resources = record(lambda: SecurityGroups("sg", _args(tags=tags))).resources
    tagged = {
        r.inputs["name"]
        for r in by_type(resources, "aws:ec2/securityGroup:SecurityGroup")
        if cluster_tag_key("prod") in r.inputs["tags"] or "KubernetesCluster" in r.inputs["tags"]
    }
    # Workers carry node + shared, members control-plane + shared.
    assert {"prod-node-mig", "prod-control-plane-mig"} <= tagged
    assert "prod-shared-mig" not in tagged


def test_public_ingress_opens_only_listener_ports() -> None:
    resources = record(lambda: SecurityGroups("sg", _args(public_ingress=True))).resources
    open_rules = [r for r in by_type(resources, RULE) if r.inputs.get("cidrIpv4") == "0.0.0.0/0"]
    assert sorted(r.inputs["fromPort"] for r in open_rules) == [80, 443]
    assert policy.no_open_ingress(resources, public_ports={80, 443}) == []
    # Undeclared, the same rules are violations.
    assert len(policy.no_open_ingress(resources, public_ports=())) == 2


@pytest.mark.parametrize("create_nodes", [True, False], ids=["with-nodes", "retired"])
def test_node_group_switch(create_nodes: bool) -> None:
    resources = record(
        lambda: SecurityGroups(
            "sg", _args(create_node_group=create_nodes, create_ingress_group=create_nodes)
        )
    ).resources
    names = {r.inputs["name"] for r in by_type(resources, "aws:ec2/securityGroup:SecurityGroup")}
    assert ("prod-node-mig" in names) is create_nodes
    assert ("prod-ingress-lb-mig" in names) is create_nodes


def test_peer_access_admits_the_other_vpc() -> None:
    peers = {"node": "sg-n", "control-plane": "sg-c"}
    resources = record(
        lambda: PeerAccess("pa", PeerAccessArgs({"shared": "sg-shared"}, peers))
    ).resources
    rules = by_type(resources, RULE)
    assert {r.inputs["referencedSecurityGroupId"] for r in rules} == {"sg-n", "sg-c"}
    assert all(r.inputs["securityGroupId"] == "sg-shared" for r in rules)
    assert all(r.inputs["ipProtocol"] == "-1" for r in rules)
    assert sorted(r.name for r in rules) == ["pa-from-control-plane", "pa-from-node"]


def test_a_side_without_a_shared_group_admits_peers_in_the_groups_its_instances_carry() -> None:
    """An adopted kops cluster's instances carry only ``masters`` or ``nodes``: a group
    added to their launch templates would reach only instances launched later."""
    resources = record(lambda: SecurityGroups("sg", _args(create_shared_group=False))).resources
    groups = by_type(resources, "aws:ec2/securityGroup:SecurityGroup")
    assert "prod-shared-mig" not in {g.inputs["name"] for g in groups}
    # no rule of kubeshift's between the side's own instances: the other tool's admit them
    for group, source in (("control-plane", "api-lb"), ("node", "ingress-lb")):
        rules_in = _rules_into(resources, f"prod-{group}-mig")
        assert {r["referencedSecurityGroupId"] for r in rules_in} == {f"sg-{source}-id"}

    def admitted() -> None:
        side = SecurityGroups("sg", _args(create_shared_group=False))
        assert side.shared_id is None
        PeerAccess("pa", PeerAccessArgs(side.admitting_peers(), {"node": "sg-n"}))

    rules = [r for r in by_type(record(admitted).resources, RULE) if r.name.startswith("pa-")]
    into = {(r.inputs["securityGroupId"], r.inputs["referencedSecurityGroupId"]) for r in rules}
    assert into == {("sg-control-plane-id", "sg-n"), ("sg-node-id", "sg-n")}


def test_a_range_allowed_to_both_load_balancers_is_one_rule_each(
    small_values: dict[str, Any],
) -> None:
    """The engine refuses two resources of one name; the mocks do not, so count them."""
    cluster = small_values["kubeshift:cluster"]
    cidr = str(cluster["network"]["cidr"])
    cluster["ingress"]["allowed_cidrs"] = ["172.16.0.0/12", cidr]
    cluster.setdefault("api", {})["allowed_cidrs"] = ["172.16.0.0/12"]
    rendered = render_program(small_values, "baseline").resources
    urns = Counter(r.urn for r in rendered)
    assert [urn for urn, n in urns.items() if n > 1] == []
    rules = [r.inputs for r in rendered if r.type == RULE and r.inputs.get("cidrIpv4")]
    per_group = Counter((r["securityGroupId"], r["fromPort"], r["cidrIpv4"]) for r in rules)
    assert set(per_group.values()) == {1}
    assert {r["cidrIpv4"] for r in rules} == {"172.16.0.0/12", cidr}
