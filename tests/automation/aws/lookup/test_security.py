"""Security groups and single rules found by what they allow, on moto."""

from __future__ import annotations

import pytest

from automation.aws.lookup import Lookup, Missing, find
from tests.support.moto_fixtures import MotoServer

INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"


def test_a_group_by_name_and_its_rules_by_protocol_ports_and_peer(
    moto: MotoServer, lookup: Lookup
) -> None:
    ec2 = moto.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    group = ec2.create_security_group(GroupName="shop-nodes", Description="n", VpcId=vpc)["GroupId"]
    peer = ec2.create_security_group(GroupName="shop-lb", Description="l", VpcId=vpc)["GroupId"]
    ec2.authorize_security_group_ingress(
        GroupId=group,
        IpPermissions=[
            {"IpProtocol": "tcp", "FromPort": 443, "ToPort": 443,
             "IpRanges": [{"CidrIp": "10.0.0.0/16"}]},
            {"IpProtocol": "tcp", "FromPort": 30080, "ToPort": 30080,
             "UserIdGroupPairs": [{"GroupId": peer}]},
        ],
    )  # fmt: skip
    rules = ec2.describe_security_group_rules(
        Filters=[{"Name": "group-id", "Values": [group]}]
    )["SecurityGroupRules"]
    by_port = {(r.get("FromPort"), r["IsEgress"]): r["SecurityGroupRuleId"] for r in rules}

    assert find(lookup, "aws:ec2/securityGroup:SecurityGroup", "sg",
                {"vpcId": vpc, "name": "shop-nodes"}).id == group  # fmt: skip
    https = find(lookup, INGRESS, "https", {"securityGroupId": group, "ipProtocol": "tcp",
                 "fromPort": 443.0, "toPort": 443.0, "cidrIpv4": "10.0.0.0/16"})  # fmt: skip
    assert https.id == by_port[(443, False)]
    from_lb = find(lookup, INGRESS, "lb", {"securityGroupId": group, "ipProtocol": "tcp",
                   "fromPort": 30080, "toPort": 30080,
                   "referencedSecurityGroupId": peer})  # fmt: skip
    assert from_lb.id == by_port[(30080, False)]
    egress = find(lookup, EGRESS, "out", {"securityGroupId": group, "ipProtocol": "-1",
                  "cidrIpv4": "0.0.0.0/0"})  # fmt: skip
    assert egress.id == by_port[(-1, True)]


def test_a_rule_open_to_another_range_than_declared_is_missing(
    moto: MotoServer, lookup: Lookup
) -> None:
    ec2 = moto.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    group = ec2.create_security_group(GroupName="g", Description="g", VpcId=vpc)["GroupId"]
    ec2.authorize_security_group_ingress(
        GroupId=group, IpProtocol="tcp", FromPort=443, ToPort=443, CidrIp="0.0.0.0/0"
    )

    with pytest.raises(Missing, match=r"https: no live ingress rule of .* for tcp 443-443 with "
                       "10.0.0.0/16"):  # fmt: skip
        find(lookup, INGRESS, "https", {"securityGroupId": group, "ipProtocol": "tcp",
             "fromPort": 443, "toPort": 443, "cidrIpv4": "10.0.0.0/16"})  # fmt: skip
