"""The cluster kops was asked to build, read from the stack file, as the world builds it.

The stack file plays kops's cluster spec here: its name, network, members, worker pools,
load balancers and records say what the live cluster has. Nothing of kubeshift's
program is read: the world decides on its own, as kops does, how a pool becomes
instance groups (one per capacity type, over the pool's zones and instance types),
where a member runs and what everything is called.
"""

from __future__ import annotations

import ipaddress
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from automation.sandbox.world.kops import domain, etcd_tag_value
from components.contract.cluster_models import ClusterConfig, WorkerPoolConfig
from components.contract.models import StackConfig

CLUSTER_TAG = "KubernetesCluster"
MASTER_ROLE_TAG = "k8s.io/role/master"


@dataclass(frozen=True)
class Built:
    """One resource the world made: ``kind`` (``ec2:vpc``, ``kops:role-policy``…), its
    name as kops or the user gave it, and its id."""

    kind: str
    name: str
    id: str


@dataclass(frozen=True)
class Member:
    """A control-plane member: its number, zone and fixed address."""

    number: int
    zone: str
    address: str

    @property
    def instance_group(self) -> str:
        return f"master-{self.zone}-{self.number}"


@dataclass(frozen=True)
class WorkerGroup:
    """A kops instance group of workers: one pool's capacity type over its zones and
    instance types, or over one of each."""

    pool: WorkerPoolConfig
    capacity: str
    zones: tuple[str, ...]
    instance_types: tuple[str, ...]
    name: str


NetworkPart = Literal["vpc", "public", "private", "public-table", "private-table", "nat"]
"""A part of the network a world names: the VPC, a zone's subnets, the route tables, a
zone's NAT gateway (and its address)."""


@dataclass(frozen=True)
class WorldCluster(ABC):
    """What a world builds from the stack file, whichever tool it plays: the naming and
    tagging are the tool's (:class:`KopsCluster`, ``world.modules.ModulesCluster``)."""

    spec: ClusterConfig
    region: str
    calico: bool

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def owner(self) -> str:
        """The cluster's name in ``kubernetes.io/cluster/<owner>``, the cluster tag."""
        return self.spec.name

    @property
    def zones(self) -> list[str]:
        return list(self.spec.network.azs)

    def tags(self, name: str, **extra: str) -> dict[str, str]:
        """The tags the tool puts on what it owns (the cluster's own tags with them)."""
        return {
            **self.spec.tags, f"kubernetes.io/cluster/{self.owner}": "owned", "Name": name,
            **extra,
        }  # fmt: skip

    @abstractmethod
    def network_name(self, part: NetworkPart, zone: str = "") -> str:
        """What the tool names ``part`` of the network (``zone``'s, for a zone's part)."""

    @property
    def members(self) -> list[Member]:
        plane = self.spec.control_plane
        zones = plane.azs or self.zones
        members = []
        for number in range(1, plane.members + 1):
            zone = zones[(number - 1) % len(zones)]
            subnet = self.spec.network.private_subnet_in(zone)
            address = subnet.network_address + plane.host_index + number - 1
            members.append(Member(number, zone, str(ipaddress.IPv4Address(address))))
        return members

    @property
    def worker_groups(self) -> list[WorkerGroup]:
        """An instance group per pool and capacity type, over the pool's zones and
        instance types; where the stack asks for a group per type, zone and capacity
        (the seed's 72), an instance group of each, named after all three."""
        groups = []
        for pool in self.spec.worker_pools:
            zones = tuple(pool.azs or self.zones)
            for capacity in pool.capacity_types:
                if not self.splits(pool):
                    name = f"{pool.name}-{capacity}"
                    groups.append(
                        WorkerGroup(pool, capacity, zones, tuple(pool.instance_types), name)
                    )
                    continue
                for kind in pool.instance_types:
                    for zone in zones:
                        name = f"{pool.name}-{kind.replace('.', '-')}-{zone}-{capacity}"
                        groups.append(WorkerGroup(pool, capacity, (zone,), (kind,), name))
        return groups

    def splits(self, pool: WorkerPoolConfig) -> bool:
        """Whether ``pool`` runs a group per type, zone and capacity (the stack's
        ``group_per``), rather than one per capacity over them all."""
        return pool.group_per != "capacity"

    @property
    def nat_zones(self) -> list[str]:
        """Zones with a NAT gateway: each, or the first when the cluster shares one."""
        if not self.spec.network.enable_nat_gateway:
            return []
        return self.zones[:1] if self.spec.network.single_nat_gateway else self.zones


@dataclass(frozen=True)
class KopsCluster(WorldCluster):
    """What the world builds, named as kops names it."""

    @property
    def domain(self) -> str:
        """kops's name of the cluster, a DNS name: the stack's ``cluster_id``, else a
        gossip name after its name (``<name>.k8s.local``). kops tags what it builds with
        it, not with kubeshift's ``name``."""
        return self.spec.cluster_id or domain(self.spec.name)

    @property
    def owner(self) -> str:
        return self.domain

    def tags(self, name: str, **extra: str) -> dict[str, str]:
        return {
            **self.spec.tags, CLUSTER_TAG: self.domain, f"kubernetes.io/cluster/{self.owner}":
            "owned", "Name": name, **extra,
        }  # fmt: skip

    def network_name(self, part: NetworkPart, zone: str = "") -> str:
        """kops's names for a private topology (module docstring of ``.network``)."""
        dns = self.domain
        return {
            "vpc": dns, "public-table": dns, "public": f"utility-{zone}.{dns}",
            "private": f"{zone}.{dns}", "nat": f"{zone}.{dns}",
            "private-table": f"private-{zone}.{dns}",
        }[part]  # fmt: skip

    def etcd_tag(self, member: Member) -> str:
        return etcd_tag_value(str(member.number), self.spec.control_plane.members)


def kops_cluster(config: StackConfig) -> KopsCluster:
    """The cluster the stack ``config`` says runs (Calico where it switches overlays)."""
    return KopsCluster(config.cluster, config.region, calico=config.migration.overlay is not None)


def tag_list(tags: Mapping[str, str]) -> list[dict[str, str]]:
    return [{"Key": k, "Value": v} for k, v in tags.items()]


def tag_spec(resource_type: str, tags: Mapping[str, str]) -> list[dict[str, object]]:
    return [{"ResourceType": resource_type, "Tags": tag_list(tags)}]
