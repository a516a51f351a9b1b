"""IAM roles, instance profiles, inline policies and managed-policy attachments."""

from __future__ import annotations

from botocore.exceptions import ClientError

from automation.aws.lookup.model import Found, Lookup, Missing, Props, finds


def _missing(exc: ClientError) -> bool:
    return exc.response.get("Error", {}).get("Code") == "NoSuchEntity"


@finds("aws:iam/role:Role")
def role(lookup: Lookup, name: str, inputs: Props) -> Found:
    """The role with the declared name (unique per account); id = its name."""
    role_name = inputs["name"]
    try:
        live = lookup.clients.iam.get_role(RoleName=role_name)["Role"]
    except ClientError as exc:
        if _missing(exc):
            raise Missing(f"{name}: no live IAM role {role_name}.") from None
        raise
    return Found(role_name, role_name, {"arn": live["Arn"], "name": role_name})


@finds("aws:iam/instanceProfile:InstanceProfile")
def instance_profile(lookup: Lookup, name: str, inputs: Props) -> Found:
    """The instance profile with the declared name; id = its name."""
    profile_name = inputs["name"]
    try:
        live = lookup.clients.iam.get_instance_profile(InstanceProfileName=profile_name)
    except ClientError as exc:
        if _missing(exc):
            raise Missing(f"{name}: no live instance profile {profile_name}.") from None
        raise
    arn = live["InstanceProfile"]["Arn"]
    return Found(profile_name, profile_name, {"arn": arn, "name": profile_name})


@finds("aws:iam/rolePolicy:RolePolicy")
def role_policy(lookup: Lookup, name: str, inputs: Props) -> Found:
    """The role's inline policy of the declared name; pulumi-aws's id ``<role>:<name>``."""
    role_name, policy_name = inputs["role"], inputs["name"]
    try:
        lookup.clients.iam.get_role_policy(RoleName=role_name, PolicyName=policy_name)
    except ClientError as exc:
        if _missing(exc):
            raise Missing(f"{name}: role {role_name} has no inline policy {policy_name}.") from None
        raise
    found = f"{role_name}:{policy_name}"
    return Found(found, found)


@finds("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
def role_policy_attachment(lookup: Lookup, name: str, inputs: Props) -> Found:
    """The managed policy attached to the role; pulumi-aws imports it as
    ``<role>/<policy ARN>``."""
    role_name, arn = inputs["role"], inputs["policyArn"]
    pages = lookup.clients.iam.get_paginator("list_attached_role_policies").paginate(
        RoleName=role_name
    )
    try:
        attached = [p["PolicyArn"] for page in pages for p in page["AttachedPolicies"]]
    except ClientError as exc:
        if _missing(exc):
            raise Missing(f"{name}: no live IAM role {role_name}.") from None
        raise
    if arn not in attached:
        raise Missing(f"{name}: {arn} is not attached to role {role_name}.")
    found = f"{role_name}/{arn}"
    return Found(found, found)
