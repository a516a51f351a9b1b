"""``aws:vpc`` security group rules: one ingress or egress rule a resource.

``force_new`` is what the Terraform AWS provider
(``internal/service/ec2/vpc_security_group_ingress_rule.go``, whose schema the egress
rule shares) marks ``RequiresReplace``: the group; source, ports, protocol and
description change in place with ModifySecurityGroupRules. A change of the *kind* of
source replaces the rule, as the provider's ModifyPlan does.
"""

from typing import Any, ClassVar

from automation.sandbox.provider.diffing import contains_unknown
from automation.sandbox.provider.model import (
    REGION,
    Aws,
    ForceNew,
    NotFound,
    Props,
    Request,
    ResourceType,
    register,
)
from automation.sandbox.provider.types.ec2_calls import (
    SRC,
    Raw,
    account_id,
    changed,
    ec2_arn,
    ignore_gone,
    integer,
    one,
    retag,
    some,
    tag_outputs,
    tag_spec,
    until,
)
from automation.sandbox.provider.types.security_groups import find_group

_RULE = SRC + "vpc_security_group_ingress_rule.go"
_SOURCES = ("cidrIpv4", "cidrIpv6", "prefixListId", "referencedSecurityGroupId")
_RULE_FIELDS = ("description", "fromPort", "ipProtocol", "toPort", *_SOURCES)


# protocolForValue: names for the numbers AWS also accepts.
_PROTOCOLS = {"all": "-1", "-1": "-1", "1": "icmp", "6": "tcp", "17": "udp", "58": "icmpv6"}


def protocol(value: str) -> str:
    """An IP protocol in the spelling AWS reports (``6`` -> ``tcp``, ``all`` -> ``-1``)."""
    return _PROTOCOLS.get(value.lower(), value.lower())


def _source(props: Props) -> str | None:
    """Which kind of source a rule has (AWS cannot change it in place)."""
    return next((k for k in _SOURCES if props.get(k)), None)


def _permission(inputs: Props) -> Raw:
    """The rule as one IpPermission (``expandIPPermission``)."""
    perm = some(
        {
            "IpProtocol": inputs["ipProtocol"],
            "FromPort": integer(inputs.get("fromPort")),
            "ToPort": integer(inputs.get("toPort")),
        }
    )
    described = some({"Description": inputs.get("description")})
    if cidr := inputs.get("cidrIpv4"):
        perm["IpRanges"] = [{"CidrIp": cidr, **described}]
    if cidr := inputs.get("cidrIpv6"):
        perm["Ipv6Ranges"] = [{"CidrIpv6": cidr, **described}]
    if prefix_list := inputs.get("prefixListId"):
        perm["PrefixListIds"] = [{"PrefixListId": prefix_list, **described}]
    if ref := inputs.get("referencedSecurityGroupId"):
        user, _, group = str(ref).rpartition("/")  # [UserID/]GroupID
        perm["UserIdGroupPairs"] = [some({"GroupId": group, "UserId": user, **described})]
    return perm


def _port(value: Any) -> int:
    return -1 if value is None else int(value)


def _referenced(rule: Raw, owner: str) -> str | None:
    info = rule.get("ReferencedGroupInfo") or {}
    if not info.get("GroupId"):
        return None
    user = info.get("UserId")
    return f"{user}/{info['GroupId']}" if user and user != owner else str(info["GroupId"])


def _pair_description(aws: Aws, rule: Raw) -> str | None:
    """The description of a group-referencing rule as DescribeSecurityGroups reports it
    (moto leaves it out of DescribeSecurityGroupRules; AWS does not)."""
    group = find_group(aws, rule["GroupId"])
    referenced = (rule.get("ReferencedGroupInfo") or {}).get("GroupId")
    wanted = (rule["IpProtocol"], rule.get("FromPort", -1), rule.get("ToPort", -1))
    for perm in group.get("IpPermissionsEgress" if rule.get("IsEgress") else "IpPermissions", []):
        if (perm["IpProtocol"], perm.get("FromPort", -1), perm.get("ToPort", -1)) != wanted:
            continue
        for pair in perm.get("UserIdGroupPairs", []):
            if pair.get("GroupId") == referenced:
                return pair.get("Description")
    return None


class _Rule(ResourceType):
    """One ingress or egress rule of a security group; its id is the rule id (sgr-…).

    ``vpc_security_group_ingress_rule.go`` (whose schema the egress rule shares):
    ``security_group_id`` RequiresReplace; source, ports, protocol and description change
    with ModifySecurityGroupRules. Terraform also replaces when the *kind* of source
    changes (its ModifyPlan: "you cannot change the rule's source type"), which
    :meth:`forced_new` says.
    """

    egress: ClassVar[bool]
    computed = ("arn", "securityGroupRuleId", "tagsAll")

    def check(self, req: Request, news: Props) -> Props:
        if len([k for k in _SOURCES if news.get(k)]) != 1:
            raise ValueError(f"set exactly one of {', '.join(_SOURCES)}")
        if not news.get("ipProtocol") or not news.get("securityGroupId"):
            raise ValueError("ipProtocol and securityGroupId are required")
        for port in ("fromPort", "toPort"):
            value = news.get(port)
            if isinstance(value, int | float) and not -1 <= value <= 65535:
                raise ValueError(f"{port} must be between -1 and 65535, not {value}")
        return news

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        authorize = (
            aws.ec2.authorize_security_group_egress
            if self.egress
            else aws.ec2.authorize_security_group_ingress
        )
        added = authorize(
            GroupId=inputs["securityGroupId"],
            IpPermissions=[_permission(inputs)],
            **tag_spec("security-group-rule", inputs.get("tags")),
        )
        id_ = added["SecurityGroupRules"][0]["SecurityGroupRuleId"]
        return id_, until(lambda: self.read(aws, req, id_, inputs))

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        rule = self._rule(aws, id_)
        owner = str(rule.get("GroupOwnerId") or account_id(aws))
        declared = state.get("ipProtocol")
        live = rule["IpProtocol"]
        keep = isinstance(declared, str) and protocol(declared) == protocol(live)
        description = rule.get("Description")
        if description is None and rule.get("ReferencedGroupInfo"):
            description = _pair_description(aws, rule)
        outputs = {
            "arn": ec2_arn(aws, owner, f"security-group-rule/{id_}"),
            "cidrIpv4": rule.get("CidrIpv4"),
            "cidrIpv6": rule.get("CidrIpv6"),
            "description": description,
            "ipProtocol": declared if keep else live,
            "prefixListId": rule.get("PrefixListId"),
            "referencedSecurityGroupId": _referenced(rule, owner),
            "securityGroupId": rule["GroupId"],
            "securityGroupRuleId": rule["SecurityGroupRuleId"],
            **tag_outputs(rule.get("Tags")),
        }
        # AWS reports -1 for ports the rule does not have; unset stays unset.
        for prop, key in (("fromPort", "FromPort"), ("toPort", "ToPort")):
            if not (rule.get(key) == -1 and state.get(prop) is None):
                outputs[prop] = rule.get(key)
        return some(outputs)

    def forced_new(self, olds: Props, old_inputs: Props, news: Props) -> tuple[str, ...]:
        """Upstream decides on known values only: one still unknown forces nothing."""
        old, new = _source(old_inputs), _source(news)
        if old == new or new is None or contains_unknown(news.get(new)):
            return ()
        return tuple(k for k in (old, new) if k)

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        if any(changed(olds, news, prop) for prop in _RULE_FIELDS):
            # Ports a rule does not have are -1 (AWS's own reading; moto insists on both).
            rule = some(
                {
                    "CidrIpv4": news.get("cidrIpv4"),
                    "CidrIpv6": news.get("cidrIpv6"),
                    "Description": news.get("description"),
                    "FromPort": _port(news.get("fromPort")),
                    "IpProtocol": news["ipProtocol"],
                    "PrefixListId": news.get("prefixListId"),
                    "ReferencedGroupId": news.get("referencedSecurityGroupId"),
                    "ToPort": _port(news.get("toPort")),
                }
            )
            aws.ec2.modify_security_group_rules(
                GroupId=news["securityGroupId"],
                SecurityGroupRules=[{"SecurityGroupRuleId": id_, "SecurityGroupRule": rule}],
            )
        retag(aws, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        group = state.get("securityGroupId")
        if not group:
            try:
                group = self._rule(aws, id_)["GroupId"]
            except NotFound:
                return
        revoke = (
            aws.ec2.revoke_security_group_egress
            if self.egress
            else aws.ec2.revoke_security_group_ingress
        )
        ignore_gone(lambda: revoke(GroupId=group, SecurityGroupRuleIds=[id_]))

    def _rule(self, aws: Aws, id_: str) -> Raw:
        rule = one(
            lambda: aws.ec2.describe_security_group_rules(SecurityGroupRuleIds=[id_])[
                "SecurityGroupRules"
            ]
        )
        if bool(rule.get("IsEgress")) != self.egress:
            raise NotFound(f"{id_} is not an {'egress' if self.egress else 'ingress'} rule")
        return rule


@register
class SecurityGroupIngressRule(_Rule):
    """``aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule``."""

    token = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
    not_read = {"region": REGION}
    force_new = (ForceNew("securityGroupId", _RULE + ": security_group_id RequiresReplace"),)
    egress = False


@register
class SecurityGroupEgressRule(_Rule):
    """``aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule`` (schema shared with the
    ingress rule in ``vpc_security_group_ingress_rule.go``)."""

    token = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
    not_read = {"region": REGION}
    force_new = (
        ForceNew(
            "securityGroupId",
            _RULE + " (securityGroupRuleResource, shared by vpc_security_group_egress_rule.go)"
            ": security_group_id RequiresReplace",
        ),
    )
    egress = True
