"""Typed, validated stack configuration: the only door from Pulumi config into the program.

``__main__.py`` (and the offline renderer) hand the raw ``kubeshift:*``/``aws:*``
values to :func:`load_config`; everything downstream receives frozen pydantic
models. Every problem is reported as one :class:`ConfigError` whose message is a
single sentence naming the key, e.g. ``kubeshift:migration.target_network.cidr
10.0.0.0/16 overlaps the source VPC 10.0.0.0/16.``

Keys (see ``stacks/Pulumi.vpc-move-example.yaml`` for a full example):

- ``kubeshift:scenario`` — a registered scenario (``components.scenarios``): ``vpc-move``,
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
"""

from __future__ import annotations

import difflib
import ipaddress
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from components import kept_file, phases, registry
from components.user_files import (
    AliasBomb,
    BoundedLoader,
    UnreadableFile,
    alias_bomb_sentence,
    read_bounded,
)
from components.validation import join, sentence, show

PREFIX = "kubeshift:"
SCENARIO_KEY = "kubeshift:scenario"
PHASE_KEY = "kubeshift:phase"
CLUSTER_KEY = "kubeshift:cluster"
MIGRATION_KEY = "kubeshift:migration"
RUNTIME_KEY = "kubeshift:runtime"
SKIP_PROGRESS_KEY = "kubeshift:skipProgressCheck"
KNOWN_KEYS = (
    SCENARIO_KEY,
    PHASE_KEY,
    CLUSTER_KEY,
    MIGRATION_KEY,
    RUNTIME_KEY,
    SKIP_PROGRESS_KEY,
    kept_file.KEPT_KEY,
)
REGION_KEY = "aws:region"

CLUSTER_NAME_MAX = 40
SUFFIX_MAX = 12
_CLUSTER_NAME = re.compile(r"^[a-z][a-z0-9-]*[a-z0-9]$")
_SUFFIX = re.compile(r"^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$")
POOL_NAME = re.compile(r"^[a-z][a-z0-9-]{0,23}$")
"""A worker pool's name: it goes into the names of its groups and templates."""
_DNS_NAME = re.compile(r"^(\*\.)?([a-z0-9]([a-z0-9-]*[a-z0-9])?\.)+[a-z0-9-]+\.?$")
_INSTANCE_TYPE = re.compile(r"^[a-z][a-z0-9-]*\.[a-z0-9]+$")
_REGION = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d$")
# As AWS hands them out (Z1D633PJN98FT9, Z0123456789ABCDEFGHIJ; at most 32 characters);
# the sandbox's moto is patched to issue such ids too (automation/sandbox/moto_route53.py).
_ZONE_ID = re.compile(r"^(/hostedzone/)?Z[A-Z0-9]{1,31}$")
# Kubernetes qualified names (label and taint keys): optional DNS-subdomain prefix.
_LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_EXISTING_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/()+=,@ -]*$")
# What EC2 accepts in a VPC security group's description, up to 255 characters.
_GROUP_DESCRIPTION = re.compile(r"^[A-Za-z0-9 ._\-:/()#,@\[\]+=&;{}!$*]{1,255}$")
USER_DATA_MAX = 16384  # EC2's limit on user data before base64
MAX_MEMBERS = 7  # etcd: more members only slow every write down
VPC_PREFIXES = (16, 28)  # what CreateVpc accepts


class ConfigError(ValueError):
    """The stack configuration is invalid; ``key`` names the offending setting."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


_M = TypeVar("_M", bound=_Model)


class NetworkConfig(_Model):
    """One VPC: CIDR, AZs, and one public and one private subnet per AZ (same order)."""

    cidr: ipaddress.IPv4Network = Field(
        description="The VPC's IPv4 CIDR block, a /16 to a /28 (what AWS accepts)."
    )
    azs: list[str] = Field(
        min_length=1,
        description="Availability zones of the VPC, in the stack's region, each listed once: "
        "one public and one private subnet in each, in this order.",
    )
    public_subnets: list[ipaddress.IPv4Network] = Field(
        description="One public subnet per AZ, in the order of azs (load balancers, NAT "
        "gateways; tagged kubernetes.io/role/elb), inside the VPC, /28 or larger, "
        "overlapping no other subnet.",
    )
    private_subnets: list[ipaddress.IPv4Network] = Field(
        description="One private subnet per AZ, in the order of azs (nodes, members and "
        "their fixed addresses, internal load balancers; tagged "
        "kubernetes.io/role/internal-elb), inside the VPC, /28 or larger.",
    )
    enable_internet_gateway: bool = Field(
        default=True,
        description="An internet gateway and the public route table's default route "
        "through it; false: neither, and no NAT gateways.",
    )
    enable_nat_gateway: bool = Field(
        default=True,
        description="NAT gateways in the public subnets for the private subnets' default "
        "routes (only with the internet gateway).",
    )
    single_nat_gateway: bool = Field(
        default=False,
        description="One NAT gateway, in the first AZ, for every private subnet instead of "
        "one per AZ (cheaper, less available).",
    )

    def private_subnet_in(self, az: str) -> ipaddress.IPv4Network:
        return self.private_subnets[self.azs.index(az)]


class Taint(_Model):
    """A node taint, passed to the kubelet with ``--register-with-taints``."""

    key: str = Field(description="The taint's key, a Kubernetes qualified name.")
    value: str = Field(default="", description="The taint's value (a label value); may be empty.")
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = Field(
        default="NoSchedule", description="What the taint does to pods that do not tolerate it."
    )


GroupPer = Literal["type-zone-capacity", "capacity"]
"""How a pool is split into Auto Scaling groups: one per instance type x AZ x capacity
type (the seed's 72 groups), or one per capacity type spanning the pool's AZs and
instance types (a kops instance group)."""


class WorkerPoolConfig(_Model):
    """A worker pool: its Auto Scaling groups, by default one per instance type x AZ x
    capacity type (``group_per``)."""

    name: str = Field(
        description="The pool's name, unique in the cluster: 1-24 lower-case letters, digits "
        "or hyphens, starting with a letter; it goes into the names of its groups and "
        "templates and into the nodes' kubeshift.io/pool label.",
    )
    instance_types: list[str] = Field(
        description="EC2 instance types of the pool's nodes, each listed once (the launch "
        "template names the first; the groups' mixed-instances overrides the rest).",
    )
    azs: list[str] | None = Field(
        default=None,
        description="AZs of the pool, each an AZ of every network of the stack; default: "
        "every AZ of the network.",
    )
    capacity_types: list[Literal["on-demand", "spot"]] = Field(
        default=["on-demand", "spot"],
        description="Capacity types of the pool's groups, each listed once: a launch "
        "template and its own groups per capacity type.",
    )
    group_per: GroupPer = Field(
        default="type-zone-capacity",
        description="How the pool is split into Auto Scaling groups: type-zone-capacity, one "
        "per instance type x AZ x capacity type (the seed's 72 groups); capacity, one per "
        "capacity type spanning the pool's AZs and instance types (a kops instance group).",
    )
    min_size: int = Field(
        default=0,
        ge=0,
        description="Minimum size of EACH Auto Scaling group of the pool, in instances.",
    )
    desired_size: int = Field(
        default=1,
        ge=0,
        description="Starting size of EACH Auto Scaling group of the pool, between min_size "
        "and max_size; later updates leave the desired capacity to the cluster autoscaler.",
    )
    max_size: int = Field(
        default=3,
        ge=1,
        description="Maximum size of EACH Auto Scaling group of the pool, in instances.",
    )
    labels: dict[str, str] = Field(
        default={},
        description="Node labels of the pool's nodes (key -> value, Kubernetes label "
        "syntax), also declared as the cluster autoscaler's node-template tags.",
    )
    taints: list[Taint] = Field(
        default=[],
        description="Taints the pool's nodes register with (kubelet --register-with-taints).",
    )
    root_volume_size: int = Field(
        default=100,
        ge=8,
        description="Size of each node's root volume (gp3), GiB, at most 16384.",
    )
    metadata_hop_limit: int = Field(
        default=2,
        ge=1,
        le=64,
        description="Hops an IMDSv2 token's answer may travel: 2 lets pods on the node's "
        "network reach the instance metadata, 1 (kops's default) keeps them from it.",
    )

    def group_count(self, network_azs: list[str]) -> int:
        """How many Auto Scaling groups the pool has in a network of ``network_azs``."""
        groups = len(self.capacity_types)
        if self.group_per == "type-zone-capacity":
            groups *= len(self.instance_types) * len(self.azs or network_azs)
        return groups

    def starting_nodes(self, network_azs: list[str]) -> int:
        """Nodes the pool starts with: its desired size in each of its groups."""
        return self.desired_size * self.group_count(network_azs)


class ControlPlaneConfig(_Model):
    """The etcd/control-plane members: one single-instance ASG per member."""

    members: int = Field(
        default=3,
        description="Number of control-plane (etcd) members: odd, 3 to 7, so quorum holds "
        "while one moves; vpc-move has one control-plane phase per member.",
    )
    instance_type: str = Field(default="m5.xlarge", description="EC2 instance type of each member.")
    azs: list[str] | None = Field(
        default=None,
        description="AZs the members rotate over (member k in the k-th, round again), each "
        "listed once; default: every AZ of the network. Each must exist in both networks, "
        "because a member's etcd volume stays in its AZ when it moves.",
    )
    etcd_volume_size: int = Field(
        default=50,
        ge=1,
        description="Size of each member's etcd EBS volume, GiB (gp2/gp3: 1 to 16384). The "
        "volumes hold the cluster's state: a change that would shrink or replace one is "
        "refused.",
    )
    etcd_volume_type: Literal["gp3", "gp2", "io1", "io2"] = Field(
        default="gp3",
        description="EBS type of the etcd volumes; io1 and io2 are refused (they need "
        "provisioned IOPS, which kubeshift does not set).",
    )
    root_volume_size: int | None = Field(
        default=None,
        ge=8,
        description="Size of each member's root volume, GiB; default: the image's (kops: 64).",
    )
    host_index: int = Field(
        default=10,
        ge=4,
        description="Member k gets the fixed address host_index + k - 1 past the network "
        "address of its AZ's private subnet, on either side of a move (AWS keeps the first "
        "four addresses of a subnet).",
    )
    api_port: int = Field(
        default=6443,
        ge=1,
        le=65535,
        description="Port of the Kubernetes API: the API load balancer's listener and "
        "target port; clients reach https://<dns.api_record>:<api_port> (kops: 443).",
    )
    release_etcd_volumes: bool = Field(
        default=False,
        description="Lift the etcd volumes' protection (only at the scenario's last phase), "
        "so that a later delete (pulumi destroy of a decommissioned cluster) may take them.",
    )


class ListenerConfig(_Model):
    """A TCP listener of the ingress load balancer forwarding to a node port."""

    port: int = Field(
        ge=1, le=65535, description="The load balancer's listener port, unique among them."
    )
    node_port: int = Field(
        ge=30000,
        le=32767,
        description="The ingress Service's node port the listener forwards to (Kubernetes' "
        "default node-port range), unique among them.",
    )


class IngressConfig(_Model):
    """The ingress network load balancer in front of the workers' node ports."""

    internal: bool = Field(
        default=True,
        description="False makes the ingress LB internet-facing: its listener ports open "
        "to 0.0.0.0/0.",
    )
    listeners: list[ListenerConfig] = Field(
        default=[
            ListenerConfig(port=80, node_port=30080),
            ListenerConfig(port=443, node_port=30443),
        ],
        description="The ingress LB's TCP listeners, each forwarding to a node port through "
        "a target group of the workers.",
    )
    allowed_cidrs: list[ipaddress.IPv4Network] = Field(
        default=[],
        description="Who may reach an internal ingress LB besides both VPCs, which are "
        "always allowed; the ranges of ingress and api are admitted on both load balancers.",
    )


class ApiConfig(_Model):
    """The Kubernetes API's network load balancer in front of the members."""

    internal: bool = Field(
        default=True,
        description="False makes the API LB internet-facing: its port opens to 0.0.0.0/0.",
    )
    allowed_cidrs: list[ipaddress.IPv4Network] = Field(
        default=[],
        description="Who may reach an internal API LB besides both VPCs, which are always "
        "allowed; the ranges of ingress and api are admitted on both load balancers.",
    )


class DnsConfig(_Model):
    """Records kubeshift manages in an existing Route53 hosted zone."""

    zone_id: str = Field(
        description="The existing Route53 hosted zone holding the records ('Z' then "
        "upper-case letters and digits); kubeshift never creates it.",
    )
    api_record: str = Field(
        description="DNS name of the Kubernetes API, pointed at the API load balancer; the "
        "members' nodes and clients reach https://<api_record>:<control_plane.api_port>.",
    )
    ingress_records: list[str] = Field(
        default=[],
        description="DNS names pointed at the ingress load balancer (CNAMEs; a wildcard "
        "such as *.apps.example.com allowed), each listed once; vpc-move's dns-cutover points "
        "them at the new ingress load balancer.",
    )
    ttl: int = Field(
        default=60,
        ge=0,
        description="TTL of the CNAME records, seconds; the DNS drain waits it (plus a "
        "margin) before a load balancer whose records moved away is deleted.",
    )
    api_alias: bool = Field(
        default=False,
        description="The API record is an A record aliased to its load balancer, as kops "
        "makes it (no TTL of its own); false: a CNAME to the load balancer's DNS name.",
    )


class ManagedPolicies(_Model):
    """AWS managed (or the account's own) policies attached to each identity's role, by
    ARN; None: kubeshift's (``components.identity.POLICIES``). A cluster another tool
    built keeps what it attached: kops attaches none (its grants are inline)."""

    node: list[str] | None = Field(
        default=None,
        description="Policy ARNs attached to the workers' role (at most 20; 10 unless the "
        "account's quota was raised); unset: kubeshift's (ECR read-only and SSM core); []: "
        "none.",
    )
    control_plane: list[str] | None = Field(
        default=None,
        description="Policy ARNs attached to the members' role; unset: kubeshift's (SSM "
        "core); []: none.",
    )


class KeptInput(_Model):
    """A live attribute kept in place of the one kubeshift declares (``adopt
    --keep-live``): the program declares ``live`` wherever it would declare
    ``declared``, so a phase that means to change the attribute still does."""

    live: JsonValue = Field(
        description="The live value kept, as the import's preview showed it; the program "
        "declares it in place of declared."
    )
    declared: JsonValue = Field(
        description="What kubeshift declared when the live value was kept (None: nothing)."
    )


class ClusterConfig(_Model):
    """``kubeshift:cluster``: the cluster as it runs today, and what adoption keeps of the
    tool that built it."""

    name: str = Field(
        description="The cluster's name: 2-40 lower-case letters, digits or hyphens, "
        "starting with a letter; every AWS name kubeshift gives starts with it, and it is "
        "the <name> of the kubernetes.io/cluster/<name> tag.",
    )
    image_id: str = Field(
        pattern=r"^ami-[0-9a-f]{8,17}$",
        description="The AMI the cluster's nodes and members boot.",
    )
    network: NetworkConfig = Field(
        description="The VPC the cluster runs in (vpc-move's source VPC)."
    )
    control_plane: ControlPlaneConfig = Field(
        default=ControlPlaneConfig(),
        description="The etcd/control-plane members: one single-instance Auto Scaling group "
        "per member.",
    )
    worker_pools: list[WorkerPoolConfig] = Field(
        min_length=1, description="The worker pools (at least one), names unique."
    )
    ingress: IngressConfig = Field(
        default=IngressConfig(),
        description="The ingress network load balancer in front of the workers' node ports.",
    )
    api: ApiConfig = Field(
        default=ApiConfig(),
        description="The Kubernetes API's network load balancer in front of the members.",
    )
    dns: DnsConfig = Field(
        description="Records kubeshift manages in an existing Route53 hosted zone."
    )
    tags: dict[str, str] = Field(
        default={},
        description="Tags on every resource the program declares, beside the cluster's own "
        "(KubernetesCluster, kubernetes.io/cluster/<name>); keys 1-128 characters, values "
        "up to 256, no aws: prefix.",
    )
    names: dict[str, str] = Field(
        default={},
        description="Names the live cluster's resources already carry, keyed by the name "
        "kubeshift would give them (kubeshift render --json shows those), or by "
        "<kind>:<name> when two kinds share one (launch-template:<name>, "
        "autoscaling-group:<name>, ...): adoption keeps them, as renaming a load balancer, "
        "group, template, role or security group replaces it. adopt --write-config proposes "
        "them.",
        examples=[{"demo-node": "nodes.demo.k8s.local"}],
    )
    descriptions: dict[str, str] = Field(
        default={},
        description="Descriptions the live cluster's security groups carry, keyed by the "
        "name kubeshift would give the group: AWS cannot change a group's description, so "
        "adoption keeps it rather than replace the group.",
        examples=[{"local-demo-common-sg-node": "Security group for nodes"}],
    )
    user_data: dict[str, str] = Field(
        default={},
        description="Boot scripts the live cluster's launch templates carry, as text (at "
        "most 16384 bytes), keyed by the name kubeshift would give the template: adoption "
        "keeps them, so a node the old groups launch during the migration boots as the "
        "cluster's own tool set it up to.",
    )
    kept_tags: dict[str, dict[str, str]] = Field(
        default={},
        description="Tags another tool put on the live cluster's resources, keyed by the "
        "resource's logical name (kubeshift render lists them): the program declares them "
        "beside its own, so adoption changes no tag and no later update removes them.",
        examples=[{"demo-common-sg-node-egress": {"Name": "from-nodes.demo.k8s.local-egress-all"}}],
    )
    managed_policies: ManagedPolicies = Field(
        default=ManagedPolicies(),
        description="AWS managed (or the account's own) policies attached to the workers' "
        "and the members' roles, by ARN; kops attaches none (its grants are inline).",
    )
    kept_inputs: dict[str, dict[str, KeptInput]] = Field(
        default={},
        description="Live attributes another tool set that differ from kubeshift's and that "
        "AWS could change in place, keyed by the resource's logical name and then by the "
        "attribute's Pulumi name (deregistrationDelay): kept rather than changed, so "
        "adoption and every later update leave them as they run; adopt --keep-live writes "
        "them.",
    )
    own_tags: bool = Field(
        default=True,
        description="Whether the program marks what it declares with kubeshift's own tags "
        "(managed-by, kubeshift.io/*, the node-template labels of its labels). false for a "
        "cluster another tool built, which carries none: adopting it then retags nothing.",
    )
    shared_group: bool = Field(
        default=True,
        description="Whether the cluster's instances share kubeshift's shared security "
        "group, which admits all traffic between them. false for a cluster another tool "
        "built, whose own rules already admit its instances to each other (kops's masters "
        "and nodes groups): the program then declares no such group on the live side, and "
        "admits a peered VPC's groups in its control-plane and node groups. A side kubeshift "
        "builds (a vpc-move's target, a mirror) always has one.",
    )


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

    @property
    def phase_ids(self) -> tuple[str, ...]:
        return registry.spec(self.scenario).phase_ids(self.cluster.control_plane.members)

    @property
    def cursor(self) -> phases.PhaseCursor:
        return phases.PhaseCursor(self.phase_ids, self.phase)


# --- loading -------------------------------------------------------------------------


def load_config(values: Mapping[str, Any]) -> StackConfig:
    """Validate raw config values (``{"kubeshift:cluster": {...}, "aws:region": ...}``).

    Object values may be dicts or JSON strings (as ``pulumi.Config`` stores them).
    Raises :class:`ConfigError` with a one-sentence message naming the key. A kept
    file (``kubeshift:kept``, made absolute by :func:`load_stack_file`) is merged into
    the cluster block first.
    """
    _check_known_keys(values)
    try:
        values = kept_file.merge(values, CLUSTER_KEY)
    except kept_file.KeptFileError as exc:
        raise ConfigError(kept_file.KEPT_KEY, str(exc)) from None
    scenario = _require_str(values, SCENARIO_KEY)
    if scenario not in registry.ids():
        raise ConfigError(
            SCENARIO_KEY,
            f"{SCENARIO_KEY} {scenario!r} is not a known scenario "
            f"(choose one of {', '.join(registry.ids())}).",
        )
    phase = _require_str(values, PHASE_KEY)
    region = _require_str(values, REGION_KEY)
    if not _REGION.fullmatch(region):
        raise ConfigError(REGION_KEY, f"{REGION_KEY} {region!r} is not an AWS region name.")
    cluster = _parse(ClusterConfig, _require_object(values, CLUSTER_KEY), CLUSTER_KEY)
    migration = _parse(MigrationConfig, _require_object(values, MIGRATION_KEY), MIGRATION_KEY)
    skip = values.get(SKIP_PROGRESS_KEY)
    if skip is not None and not isinstance(skip, str):
        raise ConfigError(SKIP_PROGRESS_KEY, f"{SKIP_PROGRESS_KEY} must be a phase id.")
    config = StackConfig(
        scenario=scenario,
        phase=phase,
        region=region,
        cluster=cluster,
        migration=migration,
        skip_progress_check=skip,
    )
    _check(config)
    return config


class _UniqueKeyLoader(BoundedLoader):
    """YAML that refuses a key given twice in one mapping (PyYAML keeps the last), and
    aliases that expand past what kubeshift reads."""


def _unique_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)  # type: ignore[no-untyped-call]
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"key {key!r} is given twice", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node)


_UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _unique_mapping,  # type: ignore[arg-type]
)


def load_stack_file(path: str | Path) -> dict[str, Any]:
    """Read ``stacks/Pulumi.<name>.yaml`` into the raw dict :func:`load_config` takes.

    Secure values (``{secure: ...}``) are kept as they are; they never reach a name.
    Unreadable bytes, broken YAML and keys given twice are one sentence naming the file.
    A kept file it names (``kubeshift:kept``) is made absolute, for :func:`load_config`.
    """
    file = Path(path)
    document = load_yaml_document(file, what="Stack file")
    section = (document or {}).get("config") if isinstance(document, dict) else None
    if not isinstance(section, dict):
        raise ConfigError("config", f"Stack file {file} has no 'config:' mapping.")
    return kept_file.resolve(dict(section), file.parent)


def load_yaml_document(file: Path, *, what: str) -> Any:
    """A YAML file read strictly: a regular file of bounded size, UTF-8, valid, no key
    given twice, aliases bounded; else one sentence."""
    try:
        data = read_bounded(file, what)
    except FileNotFoundError:
        raise ConfigError("stack", f"{what} {file} does not exist.") from None
    except UnreadableFile as exc:
        raise ConfigError("stack", str(exc)) from None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ConfigError("stack", f"{what} {file} is UTF-16; save it as UTF-8.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            "stack", f"{what} {file} is not UTF-8 text (byte {exc.start}); save it as UTF-8."
        ) from None
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)
    except AliasBomb as bomb:
        raise ConfigError("stack", alias_bomb_sentence(what, file, bomb)) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}" if mark else ""
        problem = exc.problem or exc.context or "invalid YAML"
        raise ConfigError("stack", f"{what} {file} is not valid YAML{where}: {problem}.") from None
    except yaml.YAMLError as exc:
        raise ConfigError("stack", f"{what} {file} is not valid YAML ({exc}).") from None


def stack_file(stacks_dir: str | Path, stack: str) -> Path:
    """Path of the stack file for ``stack`` under ``stacks_dir``."""
    return Path(stacks_dir) / f"Pulumi.{stack}.yaml"


SECRET = "[secret]"
"""What a ``secure:`` value reads as offline: its ciphertext never reaches a name or a
message, and only the engine (which holds the key) decrypts it."""


def _is_secret(value: Any) -> bool:
    return isinstance(value, Mapping) and set(value) == {"secure"}


def mask_secrets(value: Any) -> Any:
    """``{secure: v1:…}`` anywhere inside ``value`` becomes :data:`SECRET`."""
    if _is_secret(value):
        return SECRET
    if isinstance(value, Mapping):
        return {k: mask_secrets(v) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_secrets(v) for v in value]
    return value


def _refuse_whole_secret(values: Mapping[str, Any], key: str) -> None:
    if _is_secret(values.get(key)):
        _fail(
            key,
            f"{key} is stored as one secret; keep it plain and make only the sensitive "
            f"fields secret (`pulumi config set --secret --path '{key}.<field>' ...`).",
        )


def _require_str(values: Mapping[str, Any], key: str) -> str:
    _refuse_whole_secret(values, key)
    value = values.get(key)
    if value is None or value == "":
        raise ConfigError(key, f"{key} is required; set it with `pulumi config set {key} ...`.")
    if not isinstance(value, str):
        raise ConfigError(key, f"{key} must be a string (got {show(value)}).")
    return value


def _require_object(values: Mapping[str, Any], key: str) -> dict[str, Any]:
    _refuse_whole_secret(values, key)
    value = values.get(key)
    if value is None:
        raise ConfigError(key, f"{key} is required; set it with `pulumi config set --path`.")
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ConfigError(key, f"{key} is not a valid JSON object ({exc.msg}).") from exc
    if not isinstance(value, dict):
        raise ConfigError(key, f"{key} must be an object (got {show(value)}).")
    return dict(mask_secrets(value))


def _parse(model: type[_M], data: dict[str, Any], key: str) -> _M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise ConfigError(join(key, error["loc"]), sentence(model, key, error)) from None


# --- semantic checks -------------------------------------------------------------------


def _fail(key: str, message: str) -> None:
    raise ConfigError(key, message)


def _check_known_keys(values: Mapping[str, Any]) -> None:
    """Every ``kubeshift:`` key is one kubeshift reads: a misspelt block is not ignored."""
    for key in values:
        if key.startswith(PREFIX) and key not in KNOWN_KEYS:
            guess = difflib.get_close_matches(key, KNOWN_KEYS, n=1, cutoff=0.6)
            hint = f"did you mean {guess[0]!r}?" if guess else f"known: {', '.join(KNOWN_KEYS)}."
            _fail(key, f"{key} is not a kubeshift setting; {hint}")


def _check(config: StackConfig) -> None:
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
    _check_member_azs(cluster.control_plane, networks, spec.member_copies)
    _check_mirror_addresses(config)
    _check_mirror_image(config)
    _check_dns(cluster.dns)
    _check_ingress(cluster.ingress)
    _check_tags(cluster.tags)
    for resource, kept in cluster.kept_tags.items():
        _check_tags(kept, f"{CLUSTER_KEY}.kept_tags.{resource}")
    _check_kept_inputs(cluster)
    _check_managed_policies(cluster.managed_policies)
    _check_volumes(cluster)
    _check_existing_names(cluster)
    _check_descriptions(cluster)
    _check_user_data(cluster)
    _check_names_fit(config)


_POLICY_ARN = re.compile(r"^arn:aws(-cn|-us-gov)?:iam::(aws|\d{12}):policy/[\w+=,.@/-]{1,512}$")


MANAGED_POLICIES_PER_ROLE_MAX = 20
"""IAM's hard limit on managed policies attached to one role (the default quota is 10)."""


def _check_managed_policies(policies: ManagedPolicies) -> None:
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


MANAGED_POLICIES_DEFAULT_QUOTA = 10
"""IAM's default quota of managed policies per role (an account may have it raised)."""


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


_PULUMI_NAME = re.compile(r"^[a-z][A-Za-z0-9]*$")
_NOT_KEPT_AS_INPUTS = frozenset({"tags", "tagsAll"})
"""Kept key by key, beside kubeshift's own (``kept_tags``)."""


def _check_kept_inputs(cluster: ClusterConfig) -> None:
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


def check_network(net: NetworkConfig, key: str, region: str) -> None:
    """A VPC AWS would create: its CIDR, subnets and AZs (in ``region``)."""
    low, high = VPC_PREFIXES
    if not low <= net.cidr.prefixlen <= high:
        _fail(
            f"{key}.cidr",
            f"{key}.cidr {net.cidr} is not allowed by AWS: a VPC is a /{low} to /{high}.",
        )
    if len(set(net.azs)) != len(net.azs):
        _fail(f"{key}.azs", f"{key}.azs lists an AZ twice.")
    in_region = re.compile(rf"^{re.escape(region)}(-[a-z]+-\d+)?[a-z]$")
    for az in net.azs:
        if not in_region.fullmatch(az):
            _fail(f"{key}.azs", f"{key}.azs {az!r} is not an availability zone of {region}.")
    for tier in ("public_subnets", "private_subnets"):
        subnets: list[ipaddress.IPv4Network] = getattr(net, tier)
        if len(subnets) != len(net.azs):
            _fail(
                f"{key}.{tier}",
                f"{key}.{tier} has {len(subnets)} subnets for {len(net.azs)} AZs; "
                "give exactly one per AZ, in the order of azs.",
            )
        for i, subnet in enumerate(subnets):
            if not subnet.subnet_of(net.cidr):
                _fail(
                    f"{key}.{tier}[{i}]",
                    f"{key}.{tier}[{i}] {subnet} is outside its VPC {net.cidr}.",
                )
            if subnet.prefixlen > 28:
                _fail(f"{key}.{tier}[{i}]", f"{key}.{tier}[{i}] {subnet} is smaller than /28.")
    everything = [
        (t, i, s)
        for t in ("public_subnets", "private_subnets")
        for i, s in enumerate(getattr(net, t))
    ]
    for n, (tier, i, subnet) in enumerate(everything):
        for other_tier, j, other in everything[n + 1 :]:
            if subnet.overlaps(other):
                _fail(
                    f"{key}.{other_tier}[{j}]",
                    f"{key}.{other_tier}[{j}] {other} overlaps {key}.{tier}[{i}] {subnet}.",
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


def _check_member_azs(
    cp: ControlPlaneConfig, networks: list[tuple[str, NetworkConfig]], copies: int = 1
) -> None:
    key = f"{CLUSTER_KEY}.control_plane"
    source = networks[0][1]
    azs = cp.azs or source.azs
    for net_key, net in networks:
        for az in azs:
            if az not in net.azs:
                _fail(
                    f"{key}.azs",
                    f"{key}.azs {az} is not an AZ of {net_key}; a member's etcd volume "
                    "cannot leave its AZ.",
                )
        for member in range(1, cp.members + 1):
            subnet = net.private_subnet_in(member_az(cp, source, member))
            index = cp.host_index + cp.members * (copies - 1) + member - 1
            if index >= subnet.num_addresses - 1:
                _fail(
                    f"{key}.host_index",
                    f"{key}.host_index {cp.host_index} puts member {member} outside "
                    f"{net_key} subnet {subnet}.",
                )


def mirror_host_offset(config: StackConfig) -> int:
    """How far the mirror's member addresses sit from the primary's."""
    cp, mirror = config.cluster.control_plane, config.migration.mirror
    if mirror is None or mirror.host_index is None:
        return cp.members
    return mirror.host_index - cp.host_index


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


def _check_mirror_addresses(config: StackConfig) -> None:
    cp, mirror = config.cluster.control_plane, config.migration.mirror
    if mirror is None or mirror.host_index is None:
        return
    key = f"{MIGRATION_KEY}.mirror.host_index"
    if abs(mirror.host_index - cp.host_index) < cp.members:
        _fail(
            key,
            f"{key} {mirror.host_index} gives the mirror's members addresses of the "
            f"primary's (control_plane.host_index {cp.host_index}, {cp.members} members).",
        )
    net = config.cluster.network
    for member in range(1, cp.members + 1):
        subnet = net.private_subnet_in(member_az(cp, net, member))
        if mirror.host_index + member - 1 >= subnet.num_addresses - 1:
            _fail(key, f"{key} {mirror.host_index} puts mirror member {member} outside {subnet}.")


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


def _check_dns(dns: DnsConfig) -> None:
    key = f"{CLUSTER_KEY}.dns"
    if not _ZONE_ID.fullmatch(dns.zone_id):
        _fail(
            f"{key}.zone_id",
            f"{key}.zone_id {dns.zone_id!r} is not a Route53 hosted zone id ('Z' then "
            "upper-case letters and digits, e.g. Z0123456789ABCDEFGHIJ).",
        )
    fields = (("api_record", [dns.api_record]), ("ingress_records", dns.ingress_records))
    for field, names in fields:
        for name in names:
            labels = name.rstrip(".").split(".")
            if (
                not _DNS_NAME.fullmatch(name)
                or len(name.rstrip(".")) > 253
                or any(len(label) > 63 for label in labels)
            ):
                _fail(
                    f"{key}.{field}",
                    f"{key}.{field} {show(name)} is not a DNS name (at most 253 characters, "
                    "labels at most 63).",
                )
    if len(set(dns.ingress_records)) != len(dns.ingress_records):
        _fail(f"{key}.ingress_records", f"{key}.ingress_records lists a name twice.")


def _check_ingress(ingress: IngressConfig) -> None:
    key = f"{CLUSTER_KEY}.ingress.listeners"
    for attribute in ("port", "node_port"):
        values = [getattr(listener, attribute) for listener in ingress.listeners]
        twice = sorted({v for v in values if values.count(v) > 1})
        if twice:
            _fail(key, f"{key} uses {attribute} {twice[0]} twice.")


def _check_tags(tags: Mapping[str, str], key: str = f"{CLUSTER_KEY}.tags") -> None:
    for name, value in tags.items():
        if name.lower().startswith("aws:"):
            _fail(key, f"{key} key {name!r}: the 'aws:' prefix is reserved by AWS.")
        if not 1 <= len(name) <= 128 or len(value) > 256:
            _fail(key, f"{key} {show(name)}: AWS tag keys are 1-128 characters, values 256.")


RETIRED_INLINE_POLICY_KEY = "inline-policy:"
"""How a role's inline policy was once kept: kubeshift no longer takes one over."""


def _check_existing_names(cluster: ClusterConfig) -> None:
    """Each kept name replaces one kubeshift gives this cluster, and AWS could carry it."""
    key = f"{CLUSTER_KEY}.names"
    from components.naming import NameKind, kind_key

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
        if not derived.startswith(f"{cluster.name}-"):
            _fail(
                key,
                f"{key} {show(derived)} is not a name kubeshift gives cluster {cluster.name!r} "
                f"(those start with '{cluster.name}-'; `kubeshift render --json` lists them).",
            )
        if not existing or len(existing) > 255 or not _EXISTING_NAME.fullmatch(existing):
            _fail(key, f"{key} {show(key_name)}: {show(existing)} is not a name AWS gives.")


def _check_kept_under_kubeshifts_name(
    cluster: ClusterConfig, key: str, name: str, kind: str
) -> None:
    """A kept value's key is a ``kind`` name kubeshift gives this cluster."""
    if not name.startswith(f"{cluster.name}-"):
        _fail(
            key,
            f"{key} {show(name)} is not a {kind} name kubeshift gives cluster "
            f"{cluster.name!r} (`kubeshift render --json` lists them).",
        )


def _check_descriptions(cluster: ClusterConfig) -> None:
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


def _check_user_data(cluster: ClusterConfig) -> None:
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


def _check_names_fit(config: StackConfig) -> None:
    """Build every name once so a cluster/suffix combination AWS refuses fails here."""
    from components.naming import NameKind, physical_name

    for suffix in ("", config.migration.suffix):
        for kind in NameKind:
            try:
                physical_name(config.cluster.name, "ingress-65535", suffix, kind=kind)
            except ValueError as exc:  # pragma: no cover - naming shortens everything valid
                _fail(f"{MIGRATION_KEY}.suffix", f"{MIGRATION_KEY}.suffix: {exc}.")


def member_az(cp: ControlPlaneConfig, source: NetworkConfig, member: int) -> str:
    """AZ of control-plane member ``member`` (1-based), the same in both networks.

    Members rotate over ``cp.azs`` (default: the source network's AZs).
    """
    azs = cp.azs or source.azs
    return azs[(member - 1) % len(azs)]


def member_address(
    cp: ControlPlaneConfig, source: NetworkConfig, placement: NetworkConfig, member: int
) -> str:
    """Fixed private address of member ``member`` when it lives in ``placement``."""
    subnet = placement.private_subnet_in(member_az(cp, source, member))
    return str(subnet.network_address + cp.host_index + member - 1)
