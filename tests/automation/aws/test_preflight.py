"""Preflight checks for what AWS refuses and moto accepts (cross-VPC targets, SG
references into unpeered VPCs, overlapping peered CIDRs): moto builds the bad state."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from automation.aws.clients import AwsClients
from automation.aws.preflight import (
    address_problems,
    overlapping,
    peering_cidr_problems,
    planned_peering_problems,
    preflight,
    sg_reference_problems,
    target_group_vpc_problems,
)
from automation.core.errors import PreconditionFailed
from tests.support.moto_world import make_network, make_target_group, run_instances


def _peer(ec2: Any, a: str, b: str, *, accept: bool = True) -> str:
    pcx = ec2.create_vpc_peering_connection(VpcId=a, PeerVpcId=b)["VpcPeeringConnection"]
    pcx_id = pcx["VpcPeeringConnectionId"]
    if accept:
        ec2.accept_vpc_peering_connection(VpcPeeringConnectionId=pcx_id)
    return str(pcx_id)


@pytest.mark.moto
def test_instances_from_another_vpc_in_a_target_group(aws: AwsClients) -> None:
    """moto accepts the cross-VPC registration AWS refuses; the preflight catches it."""
    old, new = make_network(aws.ec2, "10.0.0.0/16"), make_network(aws.ec2, "10.1.0.0/16")
    mine = run_instances(aws.ec2, new, 1)[0]["InstanceId"]
    foreign = run_instances(aws.ec2, old, 1)[0]["InstanceId"]
    arn = make_target_group(aws.elbv2, new.vpc_id, "web-new", [mine, foreign])
    assert target_group_vpc_problems(aws.elbv2, aws.ec2, [arn]) == [
        f"target group web-new (in {new.vpc_id}) has instance {foreign} from {old.vpc_id}; "
        "AWS refuses targets from another VPC"
    ]
    clean = make_target_group(aws.elbv2, new.vpc_id, "web-clean", [mine])
    assert target_group_vpc_problems(aws.elbv2, aws.ec2, [clean]) == []


@pytest.mark.moto
def test_ip_targets_outside_the_vpc_need_az_all(aws: AwsClients) -> None:
    net = make_network(aws.ec2, "10.1.0.0/16")
    arn = aws.elbv2.create_target_group(
        Name="ip-tg", Protocol="HTTP", Port=80, VpcId=net.vpc_id, TargetType="ip"
    )["TargetGroups"][0]["TargetGroupArn"]
    aws.elbv2.register_targets(
        TargetGroupArn=arn,
        Targets=[
            {"Id": "10.1.1.5"},
            {"Id": "10.0.1.5"},
        ],
    )
    problems = target_group_vpc_problems(aws.elbv2, aws.ec2, [arn])
    assert len(problems) == 1 and "IP target 10.0.1.5 outside the VPC" in problems[0]


def test_ip_targets_in_az_all_may_live_outside_the_vpc() -> None:
    """moto drops a target's ``AvailabilityZone``: Stubber plays ELBv2 and EC2."""

    def client(service: str) -> Any:
        return boto3.client(
            service, region_name="eu-west-1", aws_access_key_id="x", aws_secret_access_key="x"
        )

    elbv2, ec2 = client("elbv2"), client("ec2")
    arn = "arn:aws:elasticloadbalancing:eu-west-1:1:targetgroup/ip-tg/1"
    with Stubber(elbv2) as lb, Stubber(ec2) as compute:
        lb.add_response(
            "describe_target_groups",
            {"TargetGroups": [{"TargetGroupArn": arn, "VpcId": "vpc-1", "TargetType": "ip"}]},
        )
        lb.add_response(
            "describe_target_health",
            {
                "TargetHealthDescriptions": [
                    {"Target": {"Id": "10.0.1.6", "AvailabilityZone": "all"}},
                    {"Target": {"Id": "10.9.1.6", "AvailabilityZone": "eu-west-1a"}},
                ]
            },
        )
        compute.add_response(
            "describe_vpcs", {"Vpcs": [{"VpcId": "vpc-1", "CidrBlock": "10.9.0.0/16"}]}
        )
        assert target_group_vpc_problems(elbv2, ec2, [arn]) == []


@pytest.mark.moto
@pytest.mark.parametrize(
    ("peering", "problem"),
    [("active", False), ("none", True), ("pending", True)],
    ids=["peered", "not-peered", "peering-not-accepted"],
)
def test_sg_references_need_an_active_peering(aws: AwsClients, peering: str, problem: bool) -> None:
    """moto accepts references into any VPC; AWS only into the same or a peered one."""
    ec2 = aws.ec2
    old, new = make_network(ec2, "10.0.0.0/16"), make_network(ec2, "10.1.0.0/16")
    shared = ec2.create_security_group(GroupName="shared", Description="s", VpcId=old.vpc_id)
    nodes = ec2.create_security_group(GroupName="nodes", Description="n", VpcId=new.vpc_id)
    same = ec2.create_security_group(GroupName="same", Description="s", VpcId=old.vpc_id)
    for source in (nodes["GroupId"], same["GroupId"]):
        ec2.authorize_security_group_ingress(
            GroupId=shared["GroupId"],
            IpPermissions=[
                {
                    "IpProtocol": "tcp",
                    "FromPort": 443,
                    "ToPort": 443,
                    "UserIdGroupPairs": [{"GroupId": source}],
                }
            ],
        )
    if peering != "none":
        _peer(ec2, old.vpc_id, new.vpc_id, accept=peering == "active")
    problems = sg_reference_problems(ec2, [shared["GroupId"]])
    expected = [
        f"security group {shared['GroupId']} (in {old.vpc_id}) references {nodes['GroupId']} "
        f"in {new.vpc_id}, which is not actively peered with it"
    ]
    assert problems == (expected if problem else [])


@pytest.mark.moto
def test_peered_cidrs_must_not_overlap(aws: AwsClients) -> None:
    """moto peers overlapping VPCs without complaint; AWS refuses."""
    ec2 = aws.ec2
    a = make_network(ec2, "10.0.0.0/16")
    b = make_network(ec2, "10.0.0.0/16", subnet="10.0.128.0/24")
    c = make_network(ec2, "10.2.0.0/16")
    bad = _peer(ec2, a.vpc_id, b.vpc_id)
    _peer(ec2, a.vpc_id, c.vpc_id)
    assert peering_cidr_problems(ec2, [a.vpc_id]) == [
        f"peering {bad}: {a.vpc_id} 10.0.0.0/16 overlaps {b.vpc_id} 10.0.0.0/16"
    ]
    assert planned_peering_problems(ec2, b.vpc_id, c.vpc_id) == []
    ec2.associate_vpc_cidr_block(VpcId=c.vpc_id, CidrBlock="10.0.64.0/18")
    assert planned_peering_problems(ec2, b.vpc_id, c.vpc_id) == [
        f"planned peering {b.vpc_id} - {c.vpc_id}: 10.0.0.0/16 overlaps 10.0.64.0/18"
    ]


@pytest.mark.moto
def test_preflight_gathers_every_problem_and_refuses(aws: AwsClients) -> None:
    old, new = make_network(aws.ec2, "10.0.0.0/16"), make_network(aws.ec2, "10.0.0.0/16")
    foreign = run_instances(aws.ec2, old, 1)[0]["InstanceId"]
    arn = make_target_group(aws.elbv2, new.vpc_id, "web-new", [foreign])
    _peer(aws.ec2, old.vpc_id, new.vpc_id)
    report = preflight(aws.ec2, aws.elbv2, target_group_arns=[arn], vpc_ids=[new.vpc_id])
    assert report.checks == ("target-group VPCs", "peered CIDRs")
    assert len(report.problems) == 2
    with pytest.raises(PreconditionFailed, match=r"^Preflight found 2 problem\(s\) AWS would"):
        report.require()
    assert preflight(aws.ec2, aws.elbv2).message() == "Preflight passed: ."


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (["10.0.0.0/16"], ["10.1.0.0/16"], []),
        (["10.0.0.0/16"], ["10.0.5.0/24"], [("10.0.0.0/16", "10.0.5.0/24")]),
        (["10.0.0.0/8"], ["2600:1f18::/56"], []),
        (["2600:1f18::/56"], ["2600:1f18:0:10::/64"], [("2600:1f18::/56", "2600:1f18:0:10::/64")]),
    ],
    ids=["disjoint", "nested", "v4-vs-v6", "v6-nested"],
)
def test_overlapping(a: list[str], b: list[str], expected: list[tuple[str, str]]) -> None:
    assert overlapping(a, b) == expected


@pytest.mark.moto
def test_a_planned_fixed_address_another_interface_holds_is_a_problem(aws: AwsClients) -> None:
    """The primary's nodes hold addresses in the subnets a mirror shares: AWS would
    refuse the mirror member's interface there (``InvalidIPAddress.InUse``)."""
    net = make_network(aws.ec2, "10.4.0.0/16")
    [node] = run_instances(aws.ec2, net, 1)
    taken = node["PrivateIpAddress"]
    free = "10.4.1.200"
    ours = aws.ec2.create_network_interface(
        SubnetId=net.subnet_id, PrivateIpAddress="10.4.1.201", Description="etcd member 2 of c"
    )
    planned = {taken: "etcd member 1 of c", "10.4.1.201": "etcd member 2 of c",
               free: "etcd member 3 of c"}  # fmt: skip
    assert address_problems(aws.ec2, net.vpc_id, planned) == [
        f"{taken} (for etcd member 1 of c) is held by {node['InstanceId']}"
    ]
    report = preflight(aws.ec2, aws.elbv2, fixed_addresses=(net.vpc_id, planned))
    assert report.checks == ("fixed addresses free",) and not report.ok
    other_vpc = make_network(aws.ec2, "10.5.0.0/16")
    assert address_problems(aws.ec2, other_vpc.vpc_id, planned) == []
    assert ours["NetworkInterface"]["PrivateIpAddress"] == "10.4.1.201"
