"""Load balancers, target groups and listeners found by name and port, on moto."""

from __future__ import annotations

import pytest

from automation.aws.lookup import Lookup, Missing, find
from tests.support.moto_fixtures import MotoServer


def test_a_load_balancer_its_target_group_and_listener(moto: MotoServer, lookup: Lookup) -> None:
    ec2, elbv2 = moto.client("ec2"), moto.client("elbv2")
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    subnets = [
        ec2.create_subnet(VpcId=vpc, CidrBlock=cidr, AvailabilityZone=az)["Subnet"]["SubnetId"]
        for cidr, az in (("10.0.0.0/20", "eu-west-1a"), ("10.0.16.0/20", "eu-west-1b"))
    ]
    lb = elbv2.create_load_balancer(Name="shop-api", Type="network", Scheme="internal",
                                    Subnets=subnets)["LoadBalancers"][0]  # fmt: skip
    group = elbv2.create_target_group(Name="shop-api-6443", Protocol="TCP", Port=6443,
                                      VpcId=vpc)["TargetGroups"][0]  # fmt: skip
    listener = elbv2.create_listener(
        LoadBalancerArn=lb["LoadBalancerArn"], Protocol="TCP", Port=6443,
        DefaultActions=[{"Type": "forward", "TargetGroupArn": group["TargetGroupArn"]}],
    )["Listeners"][0]  # fmt: skip

    found = find(lookup, "aws:lb/loadBalancer:LoadBalancer", "api-lb", {"name": "shop-api"})
    assert found.id == lb["LoadBalancerArn"]
    assert found.outputs["dnsName"] == lb["DNSName"]
    assert find(lookup, "aws:lb/targetGroup:TargetGroup", "tg", {"name": "shop-api-6443"}
                ).id == group["TargetGroupArn"]  # fmt: skip
    on_port = find(lookup, "aws:lb/listener:Listener", "listener",
                   {"loadBalancerArn": lb["LoadBalancerArn"], "port": 6443.0})  # fmt: skip
    assert on_port.id == listener["ListenerArn"]
    with pytest.raises(Missing, match=r"no live listener on port 443"):
        find(lookup, "aws:lb/listener:Listener", "listener",
             {"loadBalancerArn": lb["LoadBalancerArn"], "port": 443})  # fmt: skip


def test_names_nothing_carries_are_missing(moto: MotoServer, lookup: Lookup) -> None:
    with pytest.raises(Missing, match=r"api-lb: no live load balancer shop-api"):
        find(lookup, "aws:lb/loadBalancer:LoadBalancer", "api-lb", {"name": "shop-api"})
    with pytest.raises(Missing, match=r"tg: no live target group shop-api-6443"):
        find(lookup, "aws:lb/targetGroup:TargetGroup", "tg", {"name": "shop-api-6443"})
