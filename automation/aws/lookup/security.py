"""Security groups and their rules (the ``aws:vpc`` rule resources, one rule each)."""

from __future__ import annotations

from typing import Any

from automation.aws.lookup.model import Found, Lookup, Props, by, finds, only


@finds("aws:ec2/securityGroup:SecurityGroup")
def security_group(lookup: Lookup, name: str, inputs: Props) -> Found:
    """The group with the declared name in the VPC (unique per VPC in AWS)."""
    vpc_id, group_name = inputs["vpcId"], inputs["name"]
    groups = lookup.clients.ec2.describe_security_groups(
        Filters=[by("vpc-id", vpc_id), by("group-name", group_name)]
    )["SecurityGroups"]
    found = only(
        name, f"security group {group_name} in {vpc_id}", [g["GroupId"] for g in groups]
    )
    return Found(found, found)


def _rules(lookup: Lookup, group_id: str) -> list[dict[str, Any]]:
    def load() -> list[dict[str, Any]]:
        pages = lookup.clients.ec2.get_paginator("describe_security_group_rules").paginate(
            Filters=[by("group-id", group_id)]
        )
        return [dict(r) for page in pages for r in page["SecurityGroupRules"]]

    return list(lookup.memo(f"sg-rules:{group_id}", load))


def _port(value: Any) -> int:
    return int(value) if value is not None else -1


def _matches(rule: dict[str, Any], inputs: Props) -> bool:
    protocol = str(inputs["ipProtocol"])
    if str(rule.get("IpProtocol")) != protocol:
        return False
    if protocol != "-1" and (
        _port(rule.get("FromPort")) != _port(inputs.get("fromPort"))
        or _port(rule.get("ToPort")) != _port(inputs.get("toPort"))
    ):
        return False
    referenced = (rule.get("ReferencedGroupInfo") or {}).get("GroupId")
    return (
        rule.get("CidrIpv4") == inputs.get("cidrIpv4")
        and rule.get("CidrIpv6") == inputs.get("cidrIpv6")
        and rule.get("PrefixListId") == inputs.get("prefixListId")
        and referenced == inputs.get("referencedSecurityGroupId")
    )


def _rule(lookup: Lookup, name: str, inputs: Props, egress: bool) -> Found:
    group_id = inputs["securityGroupId"]
    peer = (
        inputs.get("cidrIpv4")
        or inputs.get("cidrIpv6")
        or inputs.get("prefixListId")
        or inputs.get("referencedSecurityGroupId")
    )
    ports = (
        "all traffic"
        if str(inputs["ipProtocol"]) == "-1"
        else f"{inputs['ipProtocol']} {_port(inputs.get('fromPort'))}-{_port(inputs.get('toPort'))}"
    )
    rules = [
        r["SecurityGroupRuleId"]
        for r in _rules(lookup, group_id)
        if bool(r.get("IsEgress")) == egress and _matches(r, inputs)
    ]
    direction = "egress" if egress else "ingress"
    found = only(name, f"{direction} rule of {group_id} for {ports} with {peer}", rules)
    return Found(found, found)


@finds("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
def ingress_rule(lookup: Lookup, name: str, inputs: Props) -> Found:
    """The group's ingress rule for the declared protocol, ports and peer."""
    return _rule(lookup, name, inputs, egress=False)


@finds("aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule")
def egress_rule(lookup: Lookup, name: str, inputs: Props) -> Found:
    """The group's egress rule for the declared protocol, ports and peer."""
    return _rule(lookup, name, inputs, egress=True)


def rules_besides(lookup: Lookup, group_ids: list[str], known: set[str]) -> list[str]:
    """ARNs of the rules of ``group_ids`` whose id is not in ``known``: rules another
    tool or a person added to groups adoption takes, which the program does not declare."""
    arns = []
    for group_id in group_ids:
        for rule in _rules(lookup, group_id):
            if rule["SecurityGroupRuleId"] in known:
                continue
            arn = rule.get("SecurityGroupRuleArn") or (
                f"arn:aws:ec2:{lookup.clients.region}:{rule.get('GroupOwnerId', '')}:"
                f"security-group-rule/{rule['SecurityGroupRuleId']}"
            )
            arns.append(str(arn))
    return arns
