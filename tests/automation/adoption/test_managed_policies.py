"""The live roles' attached policies are proposed where they are not kubeshift's."""

from __future__ import annotations

from typing import Any

from automation.adoption.live import LiveCluster
from automation.adoption.managed_policies import managed_policies
from components.identity import POLICIES


def _group(name: str, template: str, *, master: bool) -> dict[str, Any]:
    tags = [{"Key": "k8s.io/role/master", "Value": "1"}] if master else []
    return {
        "AutoScalingGroupName": name,
        "LaunchTemplate": {"LaunchTemplateId": template, "Version": "1"},
        "Tags": tags,
    }


def _live(nodes: list[str], masters: list[str]) -> LiveCluster:
    return LiveCluster(
        name="shop", vpc={}, subnets=[], nat_gateways=0, internet_gateway=True,
        groups=[_group("nodes", "lt-n", master=False), _group("master-a", "lt-m", master=True)],
        templates={
            "lt-n": {"IamInstanceProfile": {"Name": "nodes.shop"}},
            "lt-m": {"IamInstanceProfile": {"Arn": "arn:aws:iam::1:instance-profile/masters.shop"}},
        },
        volumes=[], interfaces=[],
        profile_roles={"nodes.shop": "nodes.shop", "masters.shop": "masters.shop"},
        attached_policies={"nodes.shop": nodes, "masters.shop": masters},
    )  # fmt: skip


def test_kops_roles_with_nothing_attached_are_proposed_empty() -> None:
    assert managed_policies(_live([], [])) == {"node": [], "control_plane": []}


def test_kubeshifts_own_attachments_in_any_order_are_not_proposed() -> None:
    node = list(reversed(POLICIES["node"].managed))
    assert managed_policies(_live(node, list(POLICIES["control-plane"].managed))) == {}


def test_a_role_with_other_attachments_keeps_them() -> None:
    own = "arn:aws:iam::123456789012:policy/payments-nodes"
    masters = list(POLICIES["control-plane"].managed)
    assert managed_policies(_live([own], masters)) == {"node": [own]}
