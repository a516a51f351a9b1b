"""The cluster kops was asked to build, read from the stack file, as the world builds it.

The stack file plays kops's cluster spec here: its name, network, members, worker pools,
load balancers and records say what the live cluster has. Nothing of kubeshift's
program is read: the world decides on its own, as kops does, how a pool becomes
instance groups (one per capacity type, over the pool's zones and instance types),
where a member runs and what everything is called.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass

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


@dataclass(frozen=True)
class KopsCluster:
    """What the world builds, named as kops names it."""

    spec: ClusterConfig
    region: str
    calico: bool

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def domain(self) -> str:
        """kops's name of the cluster, a DNS name: the stack's ``cluster_id``, else a
        gossip name after its name (``<name>.k8s.local``). kops tags what it builds with
        it, not with kubeshift's ``name``."""
        return self.spec.cluster_id or domain(self.spec.name)

    @property
    def zones(self) -> list[str]:
        return list(self.spec.network.azs)

    def tags(self, name: str, **extra: str) -> dict[str, str]:
        """The tags kops puts on what it owns (the cluster's own tags with them)."""
        return {
            **self.spec.tags,
            CLUSTER_TAG: self.domain,
            f"kubernetes.io/cluster/{self.domain}": "owned",
            "Name": name,
            **extra,
        }

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

    def etcd_tag(self, member: Member) -> str:
        return etcd_tag_value(str(member.number), self.spec.control_plane.members)

    @property
    def worker_groups(self) -> list[WorkerGroup]:
        """An instance group per pool and capacity type, over the pool's zones and
        instance types; where the stack asks for a group per type, zone and capacity
        (the seed's 72), an instance group of each, named after all three."""
        groups = []
        for pool in self.spec.worker_pools:
            zones = tuple(pool.azs or self.zones)
            for capacity in pool.capacity_types:
                if pool.group_per == "capacity":
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

    @property
    def nat_zones(self) -> list[str]:
        """Zones with a NAT gateway: each, or the first when the cluster shares one."""
        if not self.spec.network.enable_nat_gateway:
            return []
        return self.zones[:1] if self.spec.network.single_nat_gateway else self.zones


def kops_cluster(config: StackConfig) -> KopsCluster:
    """The cluster the stack ``config`` says runs (Calico where it switches overlays)."""
    return KopsCluster(config.cluster, config.region, calico=config.migration.overlay is not None)


def tag_list(tags: Mapping[str, str]) -> list[dict[str, str]]:
    return [{"Key": k, "Value": v} for k, v in tags.items()]


def tag_spec(resource_type: str, tags: Mapping[str, str]) -> list[dict[str, object]]:
    return [{"ResourceType": resource_type, "Tags": tag_list(tags)}]
