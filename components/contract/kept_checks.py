"""The stack file's rules for what adoption keeps of the tool that built the cluster: the
managed policies attached to its roles (within IAM's limits), the live inputs kept in
place of kubeshift's, and the names, security-group descriptions and boot scripts kept,
each under a name kubeshift gives this cluster and in what AWS accepts. Run by
:func:`components.contract.checks.check`; each broken rule is one :class:`ConfigError`
sentence naming its key."""

from __future__ import annotations

import re

from components.contract.cluster_models import ClusterConfig, ManagedPolicies
from components.contract.keys import CLUSTER_KEY
from components.contract.model_base import ConfigError
from components.contract.validation import show

_POLICY_ARN = re.compile(r"^arn:aws(-cn|-us-gov)?:iam::(aws|\d{12}):policy/[\w+=,.@/-]{1,512}$")
MANAGED_POLICIES_PER_ROLE_MAX = 20
"""IAM's hard limit on managed policies attached to one role (the default quota is 10)."""
MANAGED_POLICIES_DEFAULT_QUOTA = 10
"""IAM's default quota of managed policies per role (an account may have it raised)."""
_PULUMI_NAME = re.compile(r"^[a-z][A-Za-z0-9]*$")
_NOT_KEPT_AS_INPUTS = frozenset({"tags", "tagsAll"})
"""Kept key by key, beside kubeshift's own (``kept_tags``)."""
_EXISTING_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/()+=,@ -]*$")
# What EC2 accepts in a VPC security group's description, up to 255 characters.
_GROUP_DESCRIPTION = re.compile(r"^[A-Za-z0-9 ._\-:/()#,@\[\]+=&;{}!$*]{1,255}$")
USER_DATA_MAX = 16384  # EC2's limit on user data before base64
RETIRED_INLINE_POLICY_KEY = "inline-policy:"
"""How a role's inline policy was once kept: kubeshift no longer takes one over."""


def _fail(key: str, message: str) -> None:
    raise ConfigError(key, message)


def check_managed_policies(policies: ManagedPolicies) -> None:
    for role in ("node", "control_plane"):
        arns = getattr(policies, role)
        key = f"{CLUSTER_KEY}.managed_policies.{role}"
        for arn in arns or []:
            if not _POLICY_ARN.fullmatch(arn):
                raise ConfigError(key, f"{key}: {show(arn)} is not an IAM policy ARN.")
        if arns and len(set(arns)) != len(arns):
            raise ConfigError(key, f"{key} lists a policy twice.")
        if arns and len(arns) > MANAGED_POLICIES_PER_ROLE_MAX:
            raise ConfigError(
                key,
                f"{key} lists {len(arns)} policies; IAM attaches at most "
                f"{MANAGED_POLICIES_PER_ROLE_MAX} to a role (10 unless the account's quota "
                "was raised).",
            )


def check_kept_inputs(cluster: ClusterConfig) -> None:
    for resource, kept in cluster.kept_inputs.items():
        for attribute in kept:
            where = f"{CLUSTER_KEY}.kept_inputs.{resource}.{attribute}"
            if not _PULUMI_NAME.fullmatch(attribute):
                raise ConfigError(
                    where,
                    f"{where}: an attribute is named as Pulumi names it (camelCase, as "
                    "`kubeshift adopt` shows it), e.g. deregistrationDelay.",
                )
            if attribute in _NOT_KEPT_AS_INPUTS:
                raise ConfigError(
                    where,
                    f"{where}: tags another tool set are kept key by key, under "
                    f"{CLUSTER_KEY}.kept_tags.{resource}.",
                )


def check_existing_names(cluster: ClusterConfig) -> None:
    """Each kept name replaces one kubeshift gives this cluster, and AWS could carry it."""
    key = f"{CLUSTER_KEY}.names"
    from components.contract.naming import NameKind, given_to, kind_key

    kinds = tuple(f"{kind_key(k)}:" for k in NameKind)
    for key_name, existing in cluster.names.items():
        if key_name.startswith(RETIRED_INLINE_POLICY_KEY):
            _fail(
                key,
                f"{key} {show(key_name)} would make kubeshift write over a role's inline "
                "policy, the grants of the tool that wrote it; kubeshift leaves those alone "
                "and grants what it needs in a policy of its own: remove the entry.",
            )
        derived = next(
            (key_name.removeprefix(k) for k in kinds if key_name.startswith(k)), key_name
        )
        if not given_to(cluster.name, derived):
            _fail(
                key,
                f"{key} {show(derived)} is not a name kubeshift gives cluster {cluster.name!r} "
                f"(those start with '{cluster.name}-', or with its head and a hash where the "
                "kind's limit cuts them; `kubeshift render --json` lists them).",
            )
        if not existing or len(existing) > 255 or not _EXISTING_NAME.fullmatch(existing):
            _fail(key, f"{key} {show(key_name)}: {show(existing)} is not a name AWS gives.")


def _check_kept_under_kubeshifts_name(
    cluster: ClusterConfig, key: str, name: str, kind: str
) -> None:
    """A kept value's key is a ``kind`` name kubeshift gives this cluster."""
    from components.contract.naming import given_to

    if not given_to(cluster.name, name):
        _fail(
            key,
            f"{key} {show(name)} is not a {kind} name kubeshift gives cluster "
            f"{cluster.name!r} (`kubeshift render --json` lists them).",
        )


def check_descriptions(cluster: ClusterConfig) -> None:
    """Each kept description is a group's that kubeshift names, in EC2's characters."""
    key = f"{CLUSTER_KEY}.descriptions"
    for group, description in cluster.descriptions.items():
        _check_kept_under_kubeshifts_name(cluster, key, group, "security group")
        if not _GROUP_DESCRIPTION.fullmatch(description):
            _fail(
                key,
                f"{key} {show(group)}: {show(description)} is not a description EC2 accepts "
                "(1-255 letters, digits, spaces and ._-:/()#,@[]+=&;{}!$*).",
            )


def check_user_data(cluster: ClusterConfig) -> None:
    """Each kept boot script is a template's that kubeshift names, within EC2's limit."""
    key = f"{CLUSTER_KEY}.user_data"
    for template, script in cluster.user_data.items():
        _check_kept_under_kubeshifts_name(cluster, key, template, "launch template")
        size = len(script.encode())
        if not 0 < size <= USER_DATA_MAX:
            _fail(
                key,
                f"{key} {show(template)} is {size} bytes; EC2 takes 1 to {USER_DATA_MAX} "
                "bytes of user data.",
            )
