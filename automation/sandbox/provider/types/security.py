"""``aws:ec2`` security groups and the per-rule ``aws:vpc`` security group rules.

``force_new`` is what the Terraform AWS provider (hashicorp/terraform-provider-aws
``internal/service/ec2/``) marks ``ForceNew``/``RequiresReplace``; pulumi-aws replaces on
exactly those. Everything else changes in place.

Security groups behave as ``aws_security_group`` does: the default allow-all egress rule
is revoked on create (rules come from separate rule resources), and with
``revokeRulesOnDelete`` a delete first revokes every rule of the group and every rule of
another group that references it, so cross-referencing groups can go.
"""

from __future__ import annotations

import functools
import secrets
from typing import Any, ClassVar

from botocore.exceptions import ClientError

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
    autoname,
    changed,
    ec2_arn,
    error_code,
    ignore_gone,
    integer,
    is_gone,
    one,
    retag,
    retry,
    some,
    tag_outputs,
    tag_spec,
    until,
    until_gone,
)

# --- security group -------------------------------------------------------------------

_SG = SRC + "vpc_security_group.go"
_BUSY = ("DependencyViolation", "InvalidGroup.InUse")
_SG_DELETE = 15 * 60.0  # the Terraform provider's delete timeout
_FIRST_TRY = 60.0  # its short first delete attempt, before revoking every referencing rule

# protocolForValue: names for the numbers AWS also accepts.
_PROTOCOLS = {"all": "-1", "-1": "-1", "1": "icmp", "6": "tcp", "17": "udp", "58": "icmpv6"}


def protocol(value: str) -> str:
    """An IP protocol in the spelling AWS reports (``6`` -> ``tcp``, ``all`` -> ``-1``)."""
    return _PROTOCOLS.get(value.lower(), value.lower())


def find_group(aws: Aws, id_: str) -> Raw:
    return one(lambda: aws.ec2.describe_security_groups(GroupIds=[id_])["SecurityGroups"])


def _gather(group_id: str, perms: list[Raw] | None, owner: str) -> list[Props]:
    """IpPermissions as Terraform's ``ingress``/``egress`` blocks: one per protocol,
    port range and description (``securityGroupIPPermGather``)."""
    rules: dict[tuple[Any, ...], Props] = {}

    def rule(perm: Raw, source: Raw) -> Props:
        description = source.get("Description", "")
        ports = (perm.get("FromPort", 0), perm.get("ToPort", 0))
        key = (perm["IpProtocol"], *ports, description)
        return rules.setdefault(
            key,
            {
                "cidrBlocks": [],
                "description": description,
                "fromPort": ports[0],
                "ipv6CidrBlocks": [],
                "prefixListIds": [],
                "protocol": perm["IpProtocol"],
                "securityGroups": [],
                "self": False,
                "toPort": ports[1],
            },
        )

    for perm in perms or []:
        for r in perm.get("IpRanges", []):
            rule(perm, r)["cidrBlocks"].append(r["CidrIp"])
        for r in perm.get("Ipv6Ranges", []):
            rule(perm, r)["ipv6CidrBlocks"].append(r["CidrIpv6"])
        for r in perm.get("PrefixListIds", []):
            rule(perm, r)["prefixListIds"].append(r["PrefixListId"])
        for pair in perm.get("UserIdGroupPairs", []):
            entry = rule(perm, pair)
            if pair.get("GroupId") == group_id:
                entry["self"] = True
            else:
                user = pair.get("UserId")
                ref = f"{user}/{pair['GroupId']}" if user and user != owner else pair["GroupId"]
                entry["securityGroups"] = sorted([*entry["securityGroups"], ref])
    return list(rules.values())


def _revoke_touching(aws: Aws, id_: str, search_all: bool) -> None:
    """Revoke the group's rules and every rule of another group that references it
    (``forceRevokeSecurityGroupRules``). Without ``search_all`` only the groups this one
    references are searched; with it, every group."""
    query: Raw = {}
    if not search_all:
        group = find_group(aws, id_)
        perms = group.get("IpPermissions", []) + group.get("IpPermissionsEgress", [])
        related = {id_} | {
            pair["GroupId"]
            for perm in perms
            for pair in perm.get("UserIdGroupPairs", [])
            if pair.get("GroupId")
        }
        query["Filters"] = [{"Name": "group-id", "Values": sorted(related)}]
    for page in aws.ec2.get_paginator("describe_security_group_rules").paginate(**query):
        for rule in page["SecurityGroupRules"]:
            referenced = (rule.get("ReferencedGroupInfo") or {}).get("GroupId")
            if id_ not in (rule.get("GroupId"), referenced):
                continue
            revoke = (
                aws.ec2.revoke_security_group_egress
                if rule.get("IsEgress")
                else aws.ec2.revoke_security_group_ingress
            )
            ignore_gone(
                functools.partial(
                    revoke,
                    GroupId=rule["GroupId"],
                    SecurityGroupRuleIds=[rule["SecurityGroupRuleId"]],
                )
            )


@register
class SecurityGroup(ResourceType):
    """``aws:ec2/securityGroup:SecurityGroup`` — ``vpc_security_group.go``: ``name``,
    ``name_prefix``, ``description`` (default "Managed by Pulumi" in pulumi-aws) and
    ``vpc_id`` ForceNew; only tags (and the provider-side ``revokeRulesOnDelete``)
    change in place. A missing name is autonamed at create."""

    token = "aws:ec2/securityGroup:SecurityGroup"
    not_read = {"region": REGION}
    auto_named = "name"  # pulumi-aws autonames it: set here, replacements delete first
    force_new = (
        ForceNew("description", _SG + ": description ForceNew"),
        ForceNew("name", _SG + ": name ForceNew"),
        ForceNew("namePrefix", _SG + ": name_prefix ForceNew"),
        ForceNew("vpcId", _SG + ": vpc_id ForceNew"),
    )
    computed = ("arn", "egress", "ingress", "name", "ownerId", "tagsAll", "vpcId")
    write_only = ("revokeRulesOnDelete",)
    optional_computed = ("egress", "ingress", "name", "vpcId")
    defaults = {"revokeRulesOnDelete": False}

    def check(self, req: Request, news: Props) -> Props:
        checked = {"description": "Managed by Pulumi", "revokeRulesOnDelete": False, **news}
        name = checked.get("name") or checked.get("namePrefix") or ""
        if isinstance(name, str) and (len(name) > 255 or name.startswith("sg-")):
            raise ValueError(f"security group name {name!r}: at most 255 characters, not sg-…")
        description = checked["description"]
        if isinstance(description, str) and len(description) > 255:
            raise ValueError("security group description: at most 255 characters")
        return checked

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        name = inputs.get("name") or (
            f"{inputs['namePrefix']}{secrets.token_hex(13)}"
            if inputs.get("namePrefix")
            else autoname(req)
        )
        args = some(
            {
                "GroupName": name,
                "Description": inputs.get("description"),
                "VpcId": inputs.get("vpcId"),
            }
        )
        created = aws.ec2.create_security_group(
            **args, **tag_spec("security-group", inputs.get("tags"))
        )
        id_ = created["GroupId"]
        until(lambda: find_group(aws, id_))
        # AWS gives every group an allow-all egress rule; Terraform revokes it.
        everything = {"IpProtocol": "-1", "FromPort": 0, "ToPort": 0}
        aws.ec2.revoke_security_group_egress(
            GroupId=id_, IpPermissions=[{**everything, "IpRanges": [{"CidrIp": "0.0.0.0/0"}]}]
        )
        try:
            aws.ec2.revoke_security_group_egress(
                GroupId=id_, IpPermissions=[{**everything, "Ipv6Ranges": [{"CidrIpv6": "::/0"}]}]
            )
        except ClientError as err:  # a group of a VPC without IPv6 has no such rule
            no_ipv6 = error_code(err) == "InvalidParameterValue" and "remote-ipv6-range" in str(err)
            if not (is_gone(err) or no_ipv6):
                raise
        return id_, self.read(aws, req, id_, inputs)

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        group = find_group(aws, id_)
        owner = group["OwnerId"]
        return some(
            {
                "arn": ec2_arn(aws, owner, f"security-group/{id_}"),
                "description": group.get("Description"),
                "egress": _gather(id_, group.get("IpPermissionsEgress"), owner),
                "ingress": _gather(id_, group.get("IpPermissions"), owner),
                "name": group["GroupName"],
                "namePrefix": state.get("namePrefix"),
                "ownerId": owner,
                "revokeRulesOnDelete": bool(state.get("revokeRulesOnDelete")),
                "vpcId": group.get("VpcId"),
                **tag_outputs(group.get("Tags")),
            }
        )

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        retag(aws, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        revoke = bool(state.get("revokeRulesOnDelete"))

        def delete() -> object:
            return aws.ec2.delete_security_group(GroupId=id_)

        try:
            if revoke:
                _revoke_touching(aws, id_, search_all=False)
            try:
                retry(delete, _BUSY, _FIRST_TRY)
            except ClientError as err:
                if error_code(err) not in _BUSY:
                    raise
                if revoke:  # a rule elsewhere still references the group: search them all
                    _revoke_touching(aws, id_, search_all=True)
                retry(delete, _BUSY, _SG_DELETE - _FIRST_TRY)
        except NotFound:
            return
        except ClientError as err:
            if not is_gone(err):
                raise
            return
        until_gone(lambda: find_group(aws, id_))


# --- security group rules -----------------------------------------------------------

_RULE = SRC + "vpc_security_group_ingress_rule.go"
_SOURCES = ("cidrIpv4", "cidrIpv6", "prefixListId", "referencedSecurityGroupId")
_RULE_FIELDS = ("description", "fromPort", "ipProtocol", "toPort", *_SOURCES)


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
