"""The stack file's rules across fields: names that fit AWS's limits, networks that do not
overlap, members placed in their zones, kept values that apply; each broken rule is one
:class:`ConfigError` sentence naming its key.

:func:`check` runs them all, in order; the network rules live in
``components.contract.network_checks`` and those for what adoption keeps in
``components.contract.kept_checks``, the cluster's names, pools, members, volumes and
tags here."""

from __future__ import annotations

import re
from collections.abc import Mapping

from components.contract import registry
from components.contract.cluster_models import (
    ClusterConfig,
    ControlPlaneConfig,
    NetworkConfig,
)
from components.contract.kept_checks import (
    MANAGED_POLICIES_DEFAULT_QUOTA,
    check_descriptions,
    check_existing_names,
    check_kept_inputs,
    check_managed_policies,
    check_user_data,
)
from components.contract.keys import CLUSTER_KEY, MIGRATION_KEY, PHASE_KEY, SKIP_PROGRESS_KEY
from components.contract.model_base import ConfigError
from components.contract.models import StackConfig
from components.contract.network_checks import (
    check_dns,
    check_ingress,
    check_member_azs,
    check_mirror_addresses,
    check_network,
)
from components.contract.validation import show

CLUSTER_NAME_MAX = 40
SUFFIX_MAX = 12
_CLUSTER_NAME = re.compile(r"^[a-z][a-z0-9-]*[a-z0-9]$")
_SUFFIX = re.compile(r"^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$")
POOL_NAME = re.compile(r"^[a-z][a-z0-9-]{0,23}$")
"""A worker pool's name: it goes into the names of its groups and templates."""
_ETCD_NAME = re.compile(r"[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?")
_INSTANCE_TYPE = re.compile(r"^[a-z][a-z0-9-]*\.[a-z0-9]+$")
# Kubernetes qualified names (label and taint keys): optional DNS-subdomain prefix.
_LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
MAX_MEMBERS = 7  # etcd: more members only slow every write down


def _fail(key: str, message: str) -> None:
    raise ConfigError(key, message)


def check(config: StackConfig) -> None:
    """Every rule of the stack file that one field alone cannot say; the first broken
    one is a :class:`ConfigError` naming its key."""
    cluster, migration = config.cluster, config.migration
    _check_cluster_name(cluster.name)
    _check_suffix(migration.suffix)
    _check_control_plane(cluster.control_plane)
    if config.phase not in config.phase_ids:
        _fail(
            PHASE_KEY,
            f"{PHASE_KEY} {config.phase!r} is not a phase of {config.scenario} "
            f"(choose one of {', '.join(config.phase_ids)}).",
        )
    skip = config.skip_progress_check
    if skip is not None and skip not in config.phase_ids:
        _fail(
            SKIP_PROGRESS_KEY,
            f"{SKIP_PROGRESS_KEY} {skip!r} is not a phase of {config.scenario} "
            f"(choose one of {', '.join(config.phase_ids)}).",
        )
    if cluster.control_plane.release_etcd_volumes and config.phase != config.phase_ids[-1]:
        key = f"{CLUSTER_KEY}.control_plane.release_etcd_volumes"
        _fail(
            key,
            f"{key} lifts the etcd volumes' protection and is honoured only at the last "
            f"phase, {config.phase_ids[-1]!r} (the stack is at {config.phase!r}); set it "
            "there, and only when the cluster's state may be deleted.",
        )
    source_key = f"{CLUSTER_KEY}.network"
    check_network(cluster.network, source_key, config.region)
    spec = registry.spec(config.scenario)
    networks = [(source_key, cluster.network), *spec.check(config)]
    _check_pools(cluster, networks)
    # A mirror shares the subnets: its members sit right after the primary's, unless
    # migration.mirror.host_index places them elsewhere.
    check_member_azs(cluster.control_plane, networks, spec.member_copies)
    check_mirror_addresses(config)
    _check_mirror_image(config)
    check_dns(cluster.dns)
    check_ingress(cluster.ingress)
    _check_tags(cluster.tags)
    for resource, kept in cluster.kept_tags.items():
        _check_tags(kept, f"{CLUSTER_KEY}.kept_tags.{resource}")
    check_kept_inputs(cluster)
    check_managed_policies(cluster.managed_policies)
    _check_volumes(cluster)
    check_existing_names(cluster)
    check_descriptions(cluster)
    check_user_data(cluster)
    _check_names_fit(config)


def config_warnings(config: StackConfig) -> list[str]:
    """What the stack asks that AWS may refuse on some accounts only: one sentence each,
    said (not refused) wherever the stack is loaded."""
    said = []
    for role in ("node", "control_plane"):
        arns = getattr(config.cluster.managed_policies, role) or []
        if len(arns) > MANAGED_POLICIES_DEFAULT_QUOTA:
            key = f"{CLUSTER_KEY}.managed_policies.{role}"
            said.append(
                f"{key} lists {len(arns)} policies; IAM attaches at most "
                f"{MANAGED_POLICIES_DEFAULT_QUOTA} to a role unless the account's quota "
                "was raised (Service Quotas, IAM 'Managed policies per role')."
            )
    return said


# GiB an EBS volume of each type may hold (EC2 CreateVolume / launch template block
# devices); io1 and io2 also need provisioned IOPS, which kubeshift does not set.
VOLUME_SIZES = {"gp2": (1, 16384), "gp3": (1, 16384), "io1": (4, 16384), "io2": (4, 65536)}
_PROVISIONED_IOPS = frozenset({"io1", "io2"})


def _check_volumes(cluster: ClusterConfig) -> None:
    cp = cluster.control_plane
    key = f"{CLUSTER_KEY}.control_plane"
    if cp.etcd_volume_type in _PROVISIONED_IOPS:
        _fail(
            f"{key}.etcd_volume_type",
            f"{key}.etcd_volume_type {cp.etcd_volume_type} needs provisioned IOPS, which "
            "kubeshift does not set (EC2 refuses the volume without them); use gp3, which "
            "takes 3,000 IOPS and more.",
        )
    low, high = VOLUME_SIZES[cp.etcd_volume_type]
    if not low <= cp.etcd_volume_size <= high:
        _fail(
            f"{key}.etcd_volume_size",
            f"{key}.etcd_volume_size {cp.etcd_volume_size}: a {cp.etcd_volume_type} volume "
            f"holds {low} to {high} GiB.",
        )
    roots = [(f"{key}.root_volume_size", cp.root_volume_size)] + [
        (f"{CLUSTER_KEY}.worker_pools[{i}].root_volume_size", pool.root_volume_size)
        for i, pool in enumerate(cluster.worker_pools)
    ]
    for where, size in roots:
        if size is not None and size > VOLUME_SIZES["gp3"][1]:
            _fail(where, f"{where} {size}: a gp3 root volume holds at most 16384 GiB.")


def _check_cluster_name(name: str) -> None:
    key = f"{CLUSTER_KEY}.name"
    if len(name) > CLUSTER_NAME_MAX or len(name) < 2 or not _CLUSTER_NAME.fullmatch(name):
        _fail(
            key,
            f"{key} {name!r} must be 2-{CLUSTER_NAME_MAX} lower-case letters, digits or "
            "hyphens, starting with a letter and not ending with a hyphen.",
        )


def _check_suffix(suffix: str) -> None:
    key = f"{MIGRATION_KEY}.suffix"
    if not (1 <= len(suffix) <= SUFFIX_MAX) or not _SUFFIX.fullmatch(suffix):
        _fail(
            key,
            f"{key} {suffix!r} cannot be carried by AWS names: use 1-{SUFFIX_MAX} lower-case "
            "letters, digits or inner hyphens.",
        )


def _check_control_plane(cp: ControlPlaneConfig) -> None:
    key = f"{CLUSTER_KEY}.control_plane.members"
    if cp.members < 3 or cp.members % 2 == 0 or cp.members > MAX_MEMBERS:
        _fail(
            key,
            f"{key} is {cp.members}; etcd needs an odd number of members from 3 to "
            f"{MAX_MEMBERS}, to keep quorum while one moves.",
        )
    if cp.azs is not None and len(set(cp.azs)) != len(cp.azs):
        key = f"{CLUSTER_KEY}.control_plane.azs"
        _fail(key, f"{key} lists an AZ twice.")
    if not _INSTANCE_TYPE.fullmatch(cp.instance_type):
        key = f"{CLUSTER_KEY}.control_plane.instance_type"
        _fail(key, f"{key} {cp.instance_type!r} is not an EC2 instance type.")
    if cp.etcd_names is not None:
        key = f"{CLUSTER_KEY}.control_plane.etcd_names"
        if cp.membership != "etcd-manager":
            _fail(key, f"{key} names etcd-manager's members; set membership: etcd-manager too.")
        if len(cp.etcd_names) != cp.members or len(set(cp.etcd_names)) != cp.members:
            _fail(key, f"{key} needs {cp.members} different names, one per member.")
        for name in cp.etcd_names:
            if not _ETCD_NAME.fullmatch(name):
                _fail(
                    key,
                    f"{key} has {name!r}; etcd-manager's names are lower-case letters, "
                    "digits and inner hyphens (they end up in DNS names).",
                )


def _check_pools(cluster: ClusterConfig, networks: list[tuple[str, NetworkConfig]]) -> None:
    names: set[str] = set()
    for i, pool in enumerate(cluster.worker_pools):
        key = f"{CLUSTER_KEY}.worker_pools[{i}]"
        if not POOL_NAME.fullmatch(pool.name):
            _fail(
                f"{key}.name",
                f"{key}.name {pool.name!r} must be 1-24 lower-case letters, digits or hyphens.",
            )
        if pool.name in names:
            _fail(f"{key}.name", f"{key}.name {pool.name!r} is used by another pool.")
        names.add(pool.name)
        if not pool.instance_types:
            _fail(
                f"{key}.instance_types",
                f"{key}.instance_types is empty; list at least one EC2 instance type.",
            )
        for t in pool.instance_types:
            if not _INSTANCE_TYPE.fullmatch(t):
                _fail(f"{key}.instance_types", f"{key}.instance_types has {t!r}, not a type.")
        if len(set(pool.instance_types)) != len(pool.instance_types):
            _fail(f"{key}.instance_types", f"{key}.instance_types lists a type twice.")
        if not pool.capacity_types:
            _fail(f"{key}.capacity_types", f"{key}.capacity_types is empty.")
        if len(set(pool.capacity_types)) != len(pool.capacity_types):
            _fail(f"{key}.capacity_types", f"{key}.capacity_types lists a type twice.")
        if pool.azs is not None and len(set(pool.azs)) != len(pool.azs):
            _fail(f"{key}.azs", f"{key}.azs lists an AZ twice.")
        if pool.template_per == "group" and pool.group_per != "type-zone-capacity":
            # AWS refuses a mixed-instances policy over a template that asks for spot
            _fail(
                f"{key}.template_per",
                f"{key}.template_per group needs group_per type-zone-capacity: a group "
                "spanning types launches through a mixed-instances policy, which takes no "
                "template that names the spot market.",
            )
        for label, value in pool.labels.items():
            _check_label(f"{key}.labels", label, value)
        for j, taint in enumerate(pool.taints):
            _check_label(f"{key}.taints[{j}]", taint.key, taint.value)
        if not pool.min_size <= pool.desired_size <= pool.max_size:
            _fail(
                f"{key}.desired_size",
                f"{key}.desired_size {pool.desired_size} is not between min_size "
                f"{pool.min_size} and max_size {pool.max_size}.",
            )
        for net_key, net in networks:
            missing = [az for az in (pool.azs or []) if az not in net.azs]
            if missing:
                _fail(f"{key}.azs", f"{key}.azs {missing[0]} is not an AZ of {net_key}.")


def _check_mirror_image(config: StackConfig) -> None:
    """A mirror of a cluster whose nodes boot another tool's script names its own image:
    the cluster's image need not run kubeshift's node.env, so the mirror's kubelets
    would never start (kops's images run nodeup, fetched by its own script)."""
    mirror = config.migration.mirror
    if mirror is None or mirror.image_id is not None or not config.cluster.user_data:
        return
    key = f"{MIGRATION_KEY}.mirror.image_id"
    _fail(
        key,
        f"{key} is required: the cluster's nodes boot another tool's script "
        f"({CLUSTER_KEY}.user_data), so its image {config.cluster.image_id} need not read "
        "kubeshift's node.env, which the mirror's nodes boot; name an image built for it.",
    )


def _check_label(key: str, name: str, value: str) -> None:
    """A Kubernetes label or taint: qualified-name key, label-syntax value."""
    prefix, _, base = name.rpartition("/")
    if (
        not _LABEL_NAME.fullmatch(base)
        or (prefix and (len(prefix) > 253 or not DNS_SUBDOMAIN.fullmatch(prefix)))
        or name.count("/") > 1
    ):
        _fail(
            key,
            f"{key} key {name!r} is not a valid Kubernetes key ([prefix/]name, name at most "
            "63 letters, digits, '-', '_' or '.').",
        )
    if value and not _LABEL_NAME.fullmatch(value):
        _fail(key, f"{key} value {value!r} for {name!r} is not a valid Kubernetes label value.")


def _check_tags(tags: Mapping[str, str], key: str = f"{CLUSTER_KEY}.tags") -> None:
    for name, value in tags.items():
        if name.lower().startswith("aws:"):
            _fail(key, f"{key} key {name!r}: the 'aws:' prefix is reserved by AWS.")
        if not 1 <= len(name) <= 128 or len(value) > 256:
            _fail(key, f"{key} {show(name)}: AWS tag keys are 1-128 characters, values 256.")


def _check_names_fit(config: StackConfig) -> None:
    """Build every name once so a cluster/suffix combination AWS refuses fails here."""
    from components.contract.naming import NameKind, physical_name

    for suffix in ("", config.migration.suffix):
        for kind in NameKind:
            try:
                physical_name(config.cluster.name, "ingress-65535", suffix, kind=kind)
            except ValueError as exc:  # pragma: no cover - naming shortens everything valid
                _fail(f"{MIGRATION_KEY}.suffix", f"{MIGRATION_KEY}.suffix: {exc}.")
