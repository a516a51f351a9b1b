"""IAM: roles, instance profiles, inline role policies and managed-policy attachments.

Each type follows the Terraform AWS provider's resource of the same name (the source
files named in ``force_new``): ids, which properties replace, what Read reports and
what Delete cleans up first. IAM is global, so these types take no ``region``.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote

from botocore.exceptions import ClientError
from pulumi.runtime import rpc

from automation.sandbox.provider.model import (
    Aws,
    ForceNew,
    NotFound,
    Props,
    Request,
    ResourceType,
    register,
    tags_dict,
    tags_list,
)

ROLE_GO = "internal/service/iam/role.go"
PROFILE_GO = "internal/service/iam/instance_profile.go"
ROLE_POLICY_GO = "internal/service/iam/role_policy.go"
ATTACHMENT_GO = "internal/service/iam/role_policy_attachment.go"
NAME_CHARS = re.compile(r"^[\w+=,.@-]+$")


# -- helpers ---------------------------------------------------------------------------


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def _missing_ok(call: Callable[..., Any], **kwargs: Any) -> bool:
    """Run ``call``; False when IAM answers NoSuchEntity (already gone), True otherwise."""
    try:
        call(**kwargs)
    except ClientError as exc:
        if _code(exc) == "NoSuchEntity":
            return False
        raise
    return True


def _pages(iam: Any, operation: str, key: str, **kwargs: Any) -> Iterator[Any]:
    for page in iam.get_paginator(operation).paginate(**kwargs):
        yield from page[key]


def _attached(iam: Any, role: str) -> list[str]:
    """ARNs of the managed policies attached to ``role``."""
    pages = _pages(iam, "list_attached_role_policies", "AttachedPolicies", RoleName=role)
    return [p["PolicyArn"] for p in pages]


def _inline(iam: Any, role: str) -> list[str]:
    """Names of ``role``'s inline policies."""
    return list(_pages(iam, "list_role_policies", "PolicyNames", RoleName=role))


def _rfc3339(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _document(value: Any) -> Any:
    """A policy document as data: IAM answers URL-encoded JSON, boto3 often a dict."""
    return json.loads(unquote(value)) if isinstance(value, str) else value


def _canonical(value: Any) -> Any:
    """Order- and singleton-insensitive form, so equivalent policies compare equal."""
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        if len(value) == 1:
            return _canonical(value[0])
        return sorted((_canonical(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    return value


def _compact(policy: str) -> str:
    """Terraform's NormalizeJsonString: the same JSON without insignificant whitespace."""
    return json.dumps(json.loads(policy), separators=(",", ":"))


def policy_output(declared: str | None, live: Any) -> str:
    """The declared text when it means what AWS holds (Terraform's PolicyToSet), else AWS's."""
    document = _document(live)
    if declared:
        try:
            if _canonical(json.loads(declared)) == _canonical(document):
                return declared
        except ValueError:
            pass
    return json.dumps(document, separators=(",", ":"))


def _check_policy(props: Props, key: str) -> None:
    if props.get(key) == rpc.UNKNOWN:  # still unknown during a preview
        return
    try:
        json.loads(props[key])
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{key} must be a JSON policy document") from exc


def _autoname(req: Request, props: Props, limit: int) -> Props:
    """Fill ``name`` from ``namePrefix`` or the logical name; check IAM's name rules.

    The suffix is derived from the logical name, so it is stable across previews.
    """
    props = dict(props)
    if not props.get("name"):
        prefix = props.get("namePrefix") or f"{req.name}-"
        props["name"] = prefix + hashlib.sha256(req.name.encode()).hexdigest()[:8]
    name = props["name"]
    if name != rpc.UNKNOWN and (len(name) > limit or not NAME_CHARS.match(name)):
        raise ValueError(f"name {name!r} must be 1-{limit} characters of [A-Za-z0-9+=,.@_-]")
    return props


def _tag_delta(
    old: Mapping[str, str] | None, new: Mapping[str, str] | None
) -> tuple[dict[str, str], list[str]]:
    """Tags to set and tag keys to remove to go from ``old`` to ``new``."""
    old, new = old or {}, new or {}
    return {k: v for k, v in new.items() if old.get(k) != v}, [k for k in old if k not in new]


# -- aws:iam/role:Role -----------------------------------------------------------------


@register
class Role(ResourceType):
    """An IAM role; id = its name."""

    token = "aws:iam/role:Role"
    auto_named = "name"  # pulumi-aws autonames it: set here, replacements delete first
    force_new = (
        ForceNew("name", f"{ROLE_GO}: name ForceNew"),
        ForceNew("namePrefix", f"{ROLE_GO}: name_prefix ForceNew"),
        ForceNew("path", f"{ROLE_GO}: path ForceNew"),
    )
    computed = (
        "arn",
        "uniqueId",
        "createDate",
        "tagsAll",
        "managedPolicyArns",
        "inlinePolicies",
    )
    write_only = ("forceDetachPolicies",)
    defaults = {"forceDetachPolicies": False, "maxSessionDuration": 3600, "path": "/"}
    json_documents = ("assumeRolePolicy",)

    def check(self, req: Request, news: Props) -> Props:
        for deprecated in ("inlinePolicies", "managedPolicyArns"):
            if news.get(deprecated):
                raise ValueError(
                    f"{deprecated} is not served by the sandbox; use RolePolicy / "
                    "RolePolicyAttachment resources"
                )
        _check_policy(news, "assumeRolePolicy")
        return _autoname(req, news, 64)

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        args: dict[str, Any] = {
            "RoleName": inputs["name"],
            "AssumeRolePolicyDocument": _compact(inputs["assumeRolePolicy"]),
            "Path": inputs.get("path") or "/",
        }
        if inputs.get("description"):
            args["Description"] = inputs["description"]
        if inputs.get("maxSessionDuration"):
            args["MaxSessionDuration"] = int(inputs["maxSessionDuration"])
        if inputs.get("permissionsBoundary"):
            args["PermissionsBoundary"] = inputs["permissionsBoundary"]
        if inputs.get("tags"):
            args["Tags"] = tags_list(inputs["tags"])
        role = aws.client("iam").create_role(**args)["Role"]
        return role["RoleName"], self.read(aws, req, role["RoleName"], inputs)

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        iam = aws.client("iam")
        try:
            role = iam.get_role(RoleName=id_)["Role"]
            attached = _attached(iam, id_)
            inline = [
                {"name": name, "policy": policy_output(None, document)}
                for name in _inline(iam, id_)
                for document in [
                    iam.get_role_policy(RoleName=id_, PolicyName=name)["PolicyDocument"]
                ]
            ]
        except ClientError as exc:
            if _code(exc) == "NoSuchEntity":
                raise NotFound(id_) from exc
            raise
        tags = tags_dict(role.get("Tags"))
        outputs: Props = {
            "arn": role["Arn"],
            "assumeRolePolicy": policy_output(
                state.get("assumeRolePolicy"), role["AssumeRolePolicyDocument"]
            ),
            "createDate": _rfc3339(role["CreateDate"]),
            "forceDetachPolicies": bool(state.get("forceDetachPolicies", False)),
            "inlinePolicies": inline,
            "managedPolicyArns": attached,
            "maxSessionDuration": role.get("MaxSessionDuration", 3600),
            "name": role["RoleName"],
            "path": role["Path"],
            "tags": tags,
            "tagsAll": tags,
            "uniqueId": role["RoleId"],
        }
        if state.get("namePrefix"):
            outputs["namePrefix"] = state["namePrefix"]
        if role.get("Description"):
            outputs["description"] = role["Description"]
        if role.get("PermissionsBoundary"):
            outputs["permissionsBoundary"] = role["PermissionsBoundary"]["PermissionsBoundaryArn"]
        return outputs

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        iam = aws.client("iam")
        policy = news["assumeRolePolicy"]
        if policy_output(policy, json.loads(olds.get("assumeRolePolicy") or "{}")) != policy:
            iam.update_assume_role_policy(RoleName=id_, PolicyDocument=_compact(policy))
        if olds.get("description") != news.get("description"):
            iam.update_role_description(RoleName=id_, Description=news.get("description") or "")
        duration = int(news.get("maxSessionDuration") or 3600)
        if (olds.get("maxSessionDuration") or 3600) != duration:
            iam.update_role(RoleName=id_, MaxSessionDuration=duration)
        boundary = news.get("permissionsBoundary")
        if olds.get("permissionsBoundary") != boundary:
            if boundary:
                iam.put_role_permissions_boundary(RoleName=id_, PermissionsBoundary=boundary)
            else:
                iam.delete_role_permissions_boundary(RoleName=id_)
        put, remove = _tag_delta(olds.get("tags"), news.get("tags"))
        if remove:
            iam.untag_role(RoleName=id_, TagKeys=remove)
        if put:
            iam.tag_role(RoleName=id_, Tags=tags_list(put))
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        """Terraform's deleteRole: leave every instance profile; detach managed policies
        and delete inline ones only with ``forceDetachPolicies`` or when the last read
        saw some (its computed ``managed_policy_arns`` / ``inline_policy``); then delete.
        Anything else still attached makes IAM refuse with DeleteConflict."""
        iam = aws.client("iam")
        force = bool(state.get("forceDetachPolicies"))
        try:
            for profile in _pages(
                iam, "list_instance_profiles_for_role", "InstanceProfiles", RoleName=id_
            ):
                _missing_ok(
                    iam.remove_role_from_instance_profile,
                    InstanceProfileName=profile["InstanceProfileName"],
                    RoleName=id_,
                )
            if force or state.get("managedPolicyArns"):
                for arn in _attached(iam, id_):
                    _missing_ok(iam.detach_role_policy, RoleName=id_, PolicyArn=arn)
            if force or state.get("inlinePolicies"):
                for name in _inline(iam, id_):
                    _missing_ok(iam.delete_role_policy, RoleName=id_, PolicyName=name)
        except ClientError as exc:
            if _code(exc) == "NoSuchEntity":
                return
            raise
        _missing_ok(iam.delete_role, RoleName=id_)


# -- aws:iam/instanceProfile:InstanceProfile -------------------------------------------


@register
class InstanceProfile(ResourceType):
    """An IAM instance profile holding at most one role; id = its name."""

    token = "aws:iam/instanceProfile:InstanceProfile"
    auto_named = "name"  # pulumi-aws autonames it: set here, replacements delete first
    force_new = (
        ForceNew("name", f"{PROFILE_GO}: name ForceNew"),
        ForceNew("namePrefix", f"{PROFILE_GO}: name_prefix ForceNew"),
        ForceNew("path", f"{PROFILE_GO}: path ForceNew"),
    )
    computed = ("arn", "uniqueId", "createDate", "tagsAll")
    defaults = {"path": "/"}

    def check(self, req: Request, news: Props) -> Props:
        return _autoname(req, news, 128)

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        iam = aws.client("iam")
        args: dict[str, Any] = {
            "InstanceProfileName": inputs["name"],
            "Path": inputs.get("path") or "/",
        }
        if inputs.get("tags"):
            args["Tags"] = tags_list(inputs["tags"])
        name = iam.create_instance_profile(**args)["InstanceProfile"]["InstanceProfileName"]
        if inputs.get("role"):
            iam.add_role_to_instance_profile(InstanceProfileName=name, RoleName=inputs["role"])
        return name, self.read(aws, req, name, inputs)

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        try:
            profile = aws.client("iam").get_instance_profile(InstanceProfileName=id_)
        except ClientError as exc:
            if _code(exc) == "NoSuchEntity":
                raise NotFound(id_) from exc
            raise
        profile = profile["InstanceProfile"]
        tags = tags_dict(profile.get("Tags"))  # moto lacks ListInstanceProfileTags
        outputs: Props = {
            "arn": profile["Arn"],
            "createDate": _rfc3339(profile["CreateDate"]),
            "name": profile["InstanceProfileName"],
            "path": profile["Path"],
            "role": profile["Roles"][0]["RoleName"] if profile.get("Roles") else None,
            "tags": tags,
            "tagsAll": tags,
            "uniqueId": profile["InstanceProfileId"],
        }
        if state.get("namePrefix"):
            outputs["namePrefix"] = state["namePrefix"]
        return outputs

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        """A new role replaces the old one in place: remove it, then add the new one."""
        iam = aws.client("iam")
        old_role, new_role = olds.get("role"), news.get("role")
        if old_role != new_role:
            if old_role:
                _missing_ok(
                    iam.remove_role_from_instance_profile,
                    InstanceProfileName=id_,
                    RoleName=old_role,
                )
            if new_role:
                iam.add_role_to_instance_profile(InstanceProfileName=id_, RoleName=new_role)
        put, remove = _tag_delta(olds.get("tags"), news.get("tags"))
        if remove:
            iam.untag_instance_profile(InstanceProfileName=id_, TagKeys=remove)
        if put:
            iam.tag_instance_profile(InstanceProfileName=id_, Tags=tags_list(put))
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        iam = aws.client("iam")
        if state.get("role"):
            _missing_ok(
                iam.remove_role_from_instance_profile,
                InstanceProfileName=id_,
                RoleName=state["role"],
            )
        _missing_ok(iam.delete_instance_profile, InstanceProfileName=id_)


# -- aws:iam/rolePolicy:RolePolicy -----------------------------------------------------


@register
class RolePolicy(ResourceType):
    """An inline policy of a role; id = ``<role>:<name>``."""

    token = "aws:iam/rolePolicy:RolePolicy"
    auto_named = "name"  # pulumi-aws autonames it: set here, replacements delete first
    force_new = (
        ForceNew("name", f"{ROLE_POLICY_GO}: name ForceNew"),
        ForceNew("namePrefix", f"{ROLE_POLICY_GO}: name_prefix ForceNew"),
        ForceNew("role", f"{ROLE_POLICY_GO}: role ForceNew"),
    )
    computed = ()
    json_documents = ("policy",)

    def check(self, req: Request, news: Props) -> Props:
        _check_policy(news, "policy")
        if not news.get("role"):
            raise ValueError("role is required")
        return _autoname(req, news, 128)

    def _put(self, aws: Aws, inputs: Props) -> None:
        aws.client("iam").put_role_policy(
            RoleName=inputs["role"],
            PolicyName=inputs["name"],
            PolicyDocument=_compact(inputs["policy"]),
        )

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        self._put(aws, inputs)
        id_ = f"{inputs['role']}:{inputs['name']}"
        return id_, self.read(aws, req, id_, inputs)

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        role, sep, name = id_.partition(":")
        if not sep:
            raise ValueError(f"RolePolicy id {id_!r} is not <role name>:<policy name>")
        try:
            live = aws.client("iam").get_role_policy(RoleName=role, PolicyName=name)
        except ClientError as exc:
            if _code(exc) == "NoSuchEntity":
                raise NotFound(id_) from exc
            raise
        outputs: Props = {
            "name": name,
            "policy": policy_output(state.get("policy"), live["PolicyDocument"]),
            "role": role,
        }
        if state.get("namePrefix"):
            outputs["namePrefix"] = state["namePrefix"]
        return outputs

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        self._put(aws, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        role, _, name = id_.partition(":")
        _missing_ok(aws.client("iam").delete_role_policy, RoleName=role, PolicyName=name)


# -- aws:iam/rolePolicyAttachment:RolePolicyAttachment ---------------------------------


@register
class RolePolicyAttachment(ResourceType):
    """A managed policy attached to a role; id = ``<role>-<unique suffix>`` as Terraform's
    PrefixedUniqueId makes it (imports use ``<role>/<policy arn>``)."""

    token = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
    # pulumi-aws resources.go: "create followed by a delete actually deletes the same attachment"
    delete_before_replace = True
    force_new = (
        ForceNew("policyArn", f"{ATTACHMENT_GO}: policy_arn ForceNew"),
        ForceNew("role", f"{ATTACHMENT_GO}: role ForceNew"),
    )
    computed = ()

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        role, arn = inputs["role"], inputs["policyArn"]
        aws.client("iam").attach_role_policy(RoleName=role, PolicyArn=arn)
        stamp = datetime.now(UTC).strftime("%Y%m%d%H%M%S%f")
        id_ = f"{role}-{stamp}{secrets.randbelow(10**6):06d}"
        return id_, self.read(aws, req, id_, inputs)

    @staticmethod
    def _key(id_: str, state: Props) -> tuple[str, str]:
        """(role, policy ARN) from the state, or from an import id ``<role>/<arn>``."""
        if state.get("role") and state.get("policyArn"):
            return state["role"], state["policyArn"]
        role, _, arn = id_.partition("/")
        return role, arn

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        role, arn = self._key(id_, state)
        iam = aws.client("iam")
        try:
            attached = _attached(iam, role)
        except ClientError as exc:
            if _code(exc) == "NoSuchEntity":
                raise NotFound(id_) from exc
            raise
        if arn not in attached:
            raise NotFound(id_)
        return {"policyArn": arn, "role": role}

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        role, arn = self._key(id_, state)
        _missing_ok(aws.client("iam").detach_role_policy, RoleName=role, PolicyArn=arn)
