"""Policy checks catch what they are for (each fed one bad resource set)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from components.contract import policy


@dataclass
class Fake:
    type: str
    name: str
    inputs: dict[str, Any]
    id: str = ""
    outputs: dict[str, Any] = field(default_factory=dict)


def _sg(name: str, role: str) -> Fake:
    return Fake(policy.SG, name, {"name": name, "tags": {"kubeshift.io/role": role}}, f"{name}-id")


def _rule(name: str, group: str, cidr: str, port: int) -> Fake:
    return Fake(
        policy.SG_RULE,
        name,
        {"securityGroupId": f"{group}-id", "cidrIpv4": cidr, "fromPort": port, "toPort": port},
    )


def _asg(name: str, subnet: str, tags: dict[str, str]) -> Fake:
    return Fake(
        policy.ASG,
        name,
        {
            "name": name,
            "vpcZoneIdentifiers": [subnet],
            "tags": [{"key": k, "value": v, "propagateAtLaunch": True} for k, v in tags.items()],
        },
    )


CLUSTER_TAGS = {"KubernetesCluster": "c", "kubernetes.io/cluster/c": "owned"}

CASES = [
    (
        "lb-across-vpcs",
        lambda: policy.load_balancers_in_one_vpc(
            [
                Fake(policy.SUBNET, "a", {"vpcId": "vpc-old"}, "a-id"),
                Fake(policy.SUBNET, "b", {"vpcId": "vpc-new"}, "b-id"),
                Fake(policy.LOAD_BALANCER, "lb", {"name": "lb", "subnets": ["a-id", "b-id"]}),
            ]
        ),
    ),
    (
        "open-node-port",
        lambda: policy.no_open_ingress(
            [_sg("node", "node"), _rule("r", "node", "0.0.0.0/0", 30080)], public_ports={30080}
        ),
    ),
    (
        "open-undeclared-listener",
        lambda: policy.no_open_ingress(
            [_sg("lb", "ingress-lb"), _rule("r", "lb", "0.0.0.0/0", 22)], public_ports={443}
        ),
    ),
    (
        "asg-without-cluster-tag",
        lambda: policy.asgs_tagged([_asg("a", "s", {"KubernetesCluster": "c"})], "c"),
    ),
    (
        "lb-name-too-long",
        lambda: policy.names_valid_and_unique(
            [
                Fake(
                    "aws:lb/loadBalancer:LoadBalancer",
                    "lb",
                    {"name": "x" * 33},
                )
            ]
        ),
    ),
    (
        "duplicate-asg-names",
        lambda: policy.names_valid_and_unique(
            [_asg("a", "s", {}), Fake(policy.ASG, "b", {"name": "a"})]
        ),
    ),
    ("asg-without-name", lambda: policy.names_valid_and_unique([Fake(policy.ASG, "a", {})])),
    (
        "attachment-across-vpcs",
        lambda: policy.attachments_same_vpc(
            [
                Fake(policy.SUBNET, "s", {"vpcId": "vpc-old"}, "s-id"),
                _asg("a", "s-id", {}),
                Fake(policy.TG, "tg", {"vpcId": "vpc-new"}, "tg-id", {"arn": "arn:tg"}),
                Fake(
                    policy.ATTACHMENT,
                    "att",
                    {"autoscalingGroupName": "a", "lbTargetGroupArn": "arn:tg"},
                ),
            ]
        ),
    ),
    (
        "cname-and-a",
        lambda: policy.records_consistent(
            [
                Fake(policy.RECORD, "r1", {"name": "api.x", "type": "CNAME", "records": ["lb"]}),
                Fake(policy.RECORD, "r2", {"name": "api.x", "type": "A", "records": ["10.0.0.1"]}),
            ]
        ),
    ),
    (
        "tags-over-aws-limit",
        lambda: policy.tags_within_aws_limit(
            [Fake(policy.SUBNET, "s", {"tags": {f"t{n}": "v" for n in range(51)}})]
        ),
    ),
    (
        "asg-tags-over-aws-limit",
        lambda: policy.tags_within_aws_limit([_asg("a", "s", {f"t{n}": "v" for n in range(51)})]),
    ),
    (
        "launch-tags-over-aws-limit",
        lambda: policy.tags_within_aws_limit(
            [
                Fake(
                    policy.LAUNCH_TEMPLATE,
                    "lt",
                    {
                        "tagSpecifications": [
                            {"resourceType": "instance", "tags": {f"t{n}": "v" for n in range(51)}}
                        ]
                    },
                )
            ]
        ),
    ),
    (
        "user-data-not-base64",
        lambda: policy.user_data_encoded(
            [Fake(policy.LAUNCH_TEMPLATE, "lt", {"userData": "#!/bin/bash\necho hi"})]
        ),
    ),
]


@pytest.mark.parametrize("check", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_violations_are_found(check: Any) -> None:
    violations = check()
    assert violations, "expected a violation"
    assert all(str(v).startswith("[") for v in violations)


def test_fifty_tags_are_within_awss_limit() -> None:
    fifty = {f"t{n}": "v" for n in range(50)}
    assert policy.tags_within_aws_limit([Fake(policy.SUBNET, "s", {"tags": fifty})]) == []
    assert policy.tags_within_aws_limit([_asg("a", "s", fifty)]) == []
    [over] = policy.tags_within_aws_limit([_asg("a", "s", {**fifty, "t50": "v"})])
    assert str(over) == "[tags] a: 51 tags; AWS takes 50"


def test_compliant_set_passes() -> None:
    resources = [
        _sg("lb", "ingress-lb"),
        _rule("r", "lb", "0.0.0.0/0", 443),
        Fake(policy.SUBNET, "s", {"vpcId": "vpc-1"}, "s-id"),
        _asg("a", "s-id", CLUSTER_TAGS),
        Fake(policy.TG, "tg", {"vpcId": "vpc-1", "name": "tg"}, "tg-id", {"arn": "arn:tg"}),
        Fake(policy.ATTACHMENT, "att", {"autoscalingGroupName": "a", "lbTargetGroupArn": "arn:tg"}),
    ]
    assert policy.check_all(resources, "c", public_ports={443}) == []
