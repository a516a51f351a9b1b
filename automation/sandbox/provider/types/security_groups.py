"""``aws:ec2`` security groups (``aws:ec2/securityGroup:SecurityGroup``).

``force_new`` is what the Terraform AWS provider (hashicorp/terraform-provider-aws
``internal/service/ec2/vpc_security_group.go``) marks ``ForceNew``; pulumi-aws replaces
on exactly those, and only tags change in place. Groups behave as ``aws_security_group``
does: the default allow-all egress rule is revoked on create (rules come from the
separate rule resources of :mod:`.security_group_rules`), and with
``revokeRulesOnDelete`` a delete first revokes every rule of the group and every rule of
another group that references it, so cross-referencing groups can go.
"""

import functools
import secrets
from typing import Any

from botocore.exceptions import ClientError

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
    autoname,
    ec2_arn,
    error_code,
    ignore_gone,
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

_SG = SRC + "vpc_security_group.go"
_BUSY = ("DependencyViolation", "InvalidGroup.InUse")
_SG_DELETE = 15 * 60.0  # the Terraform provider's delete timeout
_FIRST_TRY = 60.0  # its short first delete attempt, before revoking every referencing rule


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
