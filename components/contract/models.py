"""The stack file's typed models: what ``load_config`` returns, frozen, field by field.

``__main__.py`` (and the offline renderer) hand the raw ``kubeshift:*``/``aws:*``
values to :func:`load_config`; everything downstream receives frozen pydantic
models. Every problem is reported as one :class:`ConfigError` whose message is a
single sentence naming the key, e.g. ``kubeshift:migration.target_network.cidr
10.0.0.0/16 overlaps the source VPC 10.0.0.0/16.``

Keys (see ``stacks/Pulumi.vpc-move-example.yaml`` for a full example):

- ``kubeshift:scenario`` — a registered scenario (``components.contract.scenarios``): ``vpc-move``,
  ``cni-swap`` or ``overlay-switch``; its own rules run from its spec.
- ``kubeshift:phase`` — one of the scenario's phase ids.
- ``kubeshift:cluster`` — :class:`ClusterConfig`: ``name``, ``image_id``,
  ``network`` (the source VPC), ``control_plane``, ``worker_pools``, ``ingress``,
  ``api``, ``dns``, ``tags``.
- ``kubeshift:migration`` — :class:`MigrationConfig`: ``suffix`` for duplicated
  resources, ``target_network`` (vpc-move), ``mirror`` (cni-swap), ``overlay``
  (overlay-switch).
- ``aws:region`` — the region of both networks.

Other top-level ``kubeshift:`` keys (e.g. ``kubeshift:runtime``, owned by the
runner) are ignored here.

This module holds the stack's and the migration's models; the cluster's are in
``components.contract.cluster_models``, and :class:`ConfigError` with the models' base
in ``components.contract.model_base``.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from pydantic import Field, PrivateAttr

from components.contract import phases
from components.contract.cluster_models import ClusterConfig, NetworkConfig
from components.contract.model_base import _Model


class MirrorConfig(_Model):
    """cni-swap: the mirror cluster's DNS and the dependencies it must be granted."""

    zone_name: str = Field(
        description="Own (private) hosted zone of the mirror, e.g. mirror.example.com."
    )
    certificate_domains: list[str] = Field(
        default=[],
        description="Primary domains whose certificates get the mirror domains as SANs.",
    )
    dependency_security_group_ids: list[str] = Field(
        default=[],
        description="SGs (RDS, caches...) that must admit the mirror's nodes too: the "
        "mirror-cluster phase grants them, teardown-mirror revokes the grants.",
    )
    host_index: int | None = Field(
        default=None,
        ge=4,
        description="Mirror member k gets the fixed address host_index + k - 1 past the "
        "network address of its private subnet; default: right after the primary's members. "
        "The primary's "
        "nodes already hold addresses in those subnets (AWS hands them out anywhere in the "
        "subnet), so mirror-cluster first checks every one is free and names a taken one.",
    )
    image_id: str | None = Field(
        default=None,
        pattern=r"^ami-[0-9a-f]{8,17}$",
        description="The image the mirror's nodes boot: one built to read kubeshift's "
        "node.env (the mirror is kubeshift's own cluster). Default: the cluster's image_id; "
        "required when the cluster keeps another tool's boot scripts "
        "(kubeshift:cluster.user_data), as its image then runs that tool's bootstrap and "
        "nothing reads node.env.",
    )


class OverlayConfig(_Model):
    """overlay-switch: the pod CIDR and the route-table quota to precheck."""

    pod_cidr: ipaddress.IPv4Network = Field(
        description="The cluster's pod network (Calico's IP pool), whose per-node blocks "
        "become VPC routes; wider than node_pod_prefix, apart from the VPC.",
    )
    node_pod_prefix: int = Field(
        default=24,
        ge=16,
        le=28,
        description="Prefix length of each node's pod CIDR block (24: 256 pod addresses a "
        "node); the sandbox's controller-manager allocates node blocks with it.",
    )
    routes_per_table_quota: int = Field(
        default=50,
        ge=1,
        description="The routes-per-table quota you expect, exported as a stack output; the "
        "routes phase's capacity precheck reads the account's own quota from Service Quotas "
        "(AWS's default, 50, when it cannot).",
    )


class MigrationConfig(_Model):
    """``kubeshift:migration``: what the scenario builds beside the cluster."""

    suffix: str = Field(
        description="Suffix of the names kubeshift gives what a migration duplicates "
        "(vpc-move's target side, cni-swap's mirror): 1-12 lower-case letters, digits or "
        "inner hyphens.",
    )
    target_network: NetworkConfig | None = Field(
        default=None,
        description="vpc-move (required there): the new VPC the cluster moves to, in the "
        "region, apart from the source VPC, with the members' AZs, peered with the source.",
    )
    retire_source_network: bool = Field(
        default=False,
        description="vpc-move cleanup also deletes the peering and the source VPC (only "
        "when nothing else lives there).",
    )
    mirror: MirrorConfig | None = Field(
        default=None,
        description="cni-swap (required there): the mirror cluster's DNS and the "
        "dependencies it must be granted.",
    )
    overlay: OverlayConfig | None = Field(
        default=None,
        description="overlay-switch (required there): the pod CIDR and the route-table quota.",
    )


class StackConfig(_Model):
    """The whole validated configuration of one stack."""

    scenario: str = Field(
        description="The migration: one of the registered scenarios (kubeshift scenarios "
        "lists them)."
    )
    phase: str = Field(
        description="The phase whose configuration the program declares (kubeshift run sets "
        "it; by hand: pulumi config set kubeshift:phase <phase>)."
    )
    region: str = Field(description="The AWS region of every network of the stack.")
    cluster: ClusterConfig = Field(description="The cluster as it runs today.")
    migration: MigrationConfig = Field(description="What the scenario builds beside the cluster.")
    skip_progress_check: str | None = Field(
        default=None,
        description="The one phase allowed past the stack's progress check, with a warning "
        "(the override is recorded); remove the key afterwards.",
    )

    _phase_ids: tuple[str, ...] = PrivateAttr(default=())

    @property
    def phase_ids(self) -> tuple[str, ...]:
        """The scenario's phases in order for this control plane, from the scenario's
        spec (set by ``load_config``, which alone builds a stack's configuration)."""
        return self._phase_ids

    @classmethod
    def with_phases(cls, phase_ids: tuple[str, ...], **fields: Any) -> StackConfig:
        """The configuration of ``fields``, whose scenario has ``phase_ids``."""
        config = cls(**fields)
        config._phase_ids = phase_ids
        return config

    @property
    def cursor(self) -> phases.PhaseCursor:
        return phases.PhaseCursor(self.phase_ids, self.phase)
