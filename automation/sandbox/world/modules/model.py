"""The cluster seed 001's modules were asked to build, named as the modules name it."""

from __future__ import annotations

from dataclasses import dataclass

from automation.sandbox.world.model import Member, NetworkPart, WorkerGroup, WorldCluster
from components.contract.cluster_models import WorkerPoolConfig
from components.contract.models import StackConfig

NAME_LIMIT = 32
"""Characters AWS allows in a load balancer's or target group's name: the modules cut
theirs to it (``substr``)."""


@dataclass(frozen=True)
class ModulesCluster(WorldCluster):
    """What the modules build: every name ``<cluster>-<part>``."""

    def named(self, part: str) -> str:
        return f"{self.name}-{part}"

    def network_name(self, part: NetworkPart, zone: str = "") -> str:
        return self.named({
            "vpc": "vpc", "public-table": "public", "public": f"public-{zone}",
            "private": f"private-{zone}", "private-table": f"private-{zone}",
            "nat": f"nat-{zone}",
        }[part])  # fmt: skip

    def balancing_name(self, part: str) -> str:
        """A load balancer's or target group's name, cut as AWS requires."""
        return self.named(part)[:NAME_LIMIT].rstrip("-")

    def splits(self, pool: WorkerPoolConfig) -> bool:
        """Always: the ``workers`` module takes one type, AZ and capacity type."""
        return True

    def member_name(self, member: Member) -> str:
        """The ``control-plane`` module's group and template of ``member``."""
        return self.named(f"control-plane-{member.number}")

    def worker_module(self, group: WorkerGroup) -> str:
        """The ``workers`` module instance of ``group``: one per type, AZ and capacity."""
        kinds = "-".join(k.replace(".", "-") for k in group.instance_types)
        return f"workers-{group.pool.name}-{kinds}-{'-'.join(group.zones)}-{group.capacity}"


def modules_cluster(config: StackConfig) -> ModulesCluster:
    """The cluster the stack ``config`` says the modules built."""
    calico = config.migration.overlay is not None
    return ModulesCluster(config.cluster, config.region, calico=calico)
