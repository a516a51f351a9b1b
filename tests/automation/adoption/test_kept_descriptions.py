"""A live group's description is kept when it is not the one kubeshift gives its part."""

from __future__ import annotations

from typing import Any

from automation.adoption.kept_descriptions import kept_descriptions
from automation.adoption.live import Balancer, LiveCluster
from components.security_groups import DESCRIPTIONS


def _group(name: str, template: str, *, member: str = "") -> dict[str, Any]:
    tags = [{"Key": "kubernetes.io/cluster/shop", "Value": "owned"}]
    tags += [{"Key": "k8s.io/role/master", "Value": "1"}] if member else []
    return {
        "AutoScalingGroupName": name, "VPCZoneIdentifier": "subnet-a", "Tags": tags,
        "LaunchTemplate": {"LaunchTemplateId": template, "Version": "1"},
        "TargetGroupARNs": ["tg-api"] if member else [],
    }  # fmt: skip


def _live(descriptions: dict[str, str]) -> LiveCluster:
    api = Balancer(lb={"LoadBalancerName": "api", "SecurityGroups": ["sg-a"]},
                   listeners=[], target_groups={"tg-api": {}}, rules=[])  # fmt: skip
    return LiveCluster(
        name="shop",
        vpc={"VpcId": "vpc-1", "CidrBlock": "10.0.0.0/16"},
        subnets=[{"SubnetId": "subnet-a", "AvailabilityZone": "eu-west-1a"}],
        nat_gateways=1, internet_gateway=True,
        groups=[_group("nodes", "lt-n"), _group("master-1", "lt-m", member="1")],
        templates={"lt-n": {"SecurityGroupIds": ["sg-n", "sg-s"]},
                   "lt-m": {"SecurityGroupIds": ["sg-m", "sg-s"]}},
        volumes=[], interfaces=[],
        balancers={"lb-api": api},
        group_descriptions=descriptions,
    )  # fmt: skip


def test_each_group_kops_described_is_kept_under_kubeshifts_name() -> None:
    live = _live({
        "sg-n": "Security group for nodes", "sg-m": "Security group for masters",
        "sg-a": "Security group for api ELB", "sg-s": DESCRIPTIONS["shared"],
    })  # fmt: skip
    assert kept_descriptions(live) == {
        "shop-api-lb": "Security group for api ELB",
        "shop-control-plane": "Security group for masters",
        "shop-node": "Security group for nodes",
    }  # the shared group already says what kubeshift says


def test_groups_described_as_kubeshift_describes_them_keep_nothing() -> None:
    live = _live({
        "sg-n": DESCRIPTIONS["node"], "sg-m": DESCRIPTIONS["control-plane"],
        "sg-a": DESCRIPTIONS["api-lb"], "sg-s": DESCRIPTIONS["shared"],
    })  # fmt: skip
    assert kept_descriptions(live) == {}
