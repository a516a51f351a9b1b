"""IAM roles, instance profiles, inline policies and managed-policy attachments."""

from __future__ import annotations

from botocore.exceptions import ClientError

from automation.aws.lookup.model import Found, Lookup, Missing, OwnAddition, Props, finds


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
    """The role's inline policy of the declared name; pulumi-aws's id ``<role>:<name>``.
    The program declares only kubeshift's grants: on a role another tool made, their
    absence is :class:`OwnAddition`, whose create the preview shows."""
    role_name, policy_name = inputs["role"], inputs["name"]
    try:
        names = _inline_policies(lookup, role_name)
    except ClientError as exc:
        if _missing(exc):
            raise Missing(f"{name}: no live IAM role {role_name}.") from None
        raise
    if policy_name not in names:
        # kubeshift's grants: another tool's policies on the role are its own, never these
        raise OwnAddition(f"{name}: role {role_name} has no inline policy {policy_name}.")
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


def role_policies_besides(lookup: Lookup, roles: list[str], known: set[str]) -> list[str]:
    """pulumi-aws's ids (``<role>:<policy>``) of the inline policies of ``roles`` that are
    not in ``known``: grants another tool or a person gave roles adoption takes, which
    the program does not declare."""
    found = [f"{role}:{policy}" for role in roles for policy in _inline_policies(lookup, role)]
    return [policy for policy in found if policy not in known]


def _inline_policies(lookup: Lookup, role: str) -> list[str]:
    """The names of the role's inline policies, listed once per lookup (the finder of
    kubeshift's own and the listing of the others' share them)."""

    def listed() -> list[str]:
        pages = lookup.clients.iam.get_paginator("list_role_policies").paginate(RoleName=role)
        return [policy for page in pages for policy in page["PolicyNames"]]

    names: list[str] = lookup.memo(f"iam:role-policies:{role}", listed)
    return names
