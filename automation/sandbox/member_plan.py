"""Where the sandbox runs a vpc-move stack's etcd members, and how kubeshift reaches them.

The sandbox has no VPC: each network of the stack is played on its own loopback range
of the same size (network i at ``127.(100 + 20 i).0.0``), so a member's fixed address in
either VPC has one loopback address the member listens on. The plan travels from
``sandbox up`` to the supervisor and back in the state file, ports filled in; the
rehearsal's ``runtime.etcd`` is its :meth:`SandboxEtcd.settings`.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from automation.config.etcd_settings import EtcdSettings
    from components.contract.models import StackConfig

FIRST_LOOPBACK_BLOCK = 100
LOOPBACK_STRIDE = 20


class SandboxMember(BaseModel):
    """One control-plane member: its etcd name and fixed address on each side."""

    model_config = ConfigDict(frozen=True)

    index: int
    name: str
    source: str
    target: str | None = None


class SandboxEtcd(BaseModel):
    """The members the sandbox runs, how they are reached, and on which ports."""

    model_config = ConfigDict(frozen=True)

    members: list[SandboxMember]
    address_map: dict[str, str]
    client_port: int = 2379
    peer_port: int = 2380
    """etcd's defaults until the supervisor picks free ports."""

    def settings(self) -> EtcdSettings:
        """``runtime.etcd`` for a stack rehearsed here."""
        from automation.config.etcd_settings import EtcdSettings

        return EtcdSettings.model_validate(
            {
                "scheme": "http",
                "client_port": self.client_port,
                "peer_port": self.peer_port,
                "address_map": self.address_map,
            }
        )

    def client_urls(self) -> list[str]:
        """Every member's client URL on both sides, for a client that reaches members by
        their addresses (kubeshift's etcd steps do)."""
        reach = self.settings()
        addresses = [a for m in self.members for a in (m.source, m.target) if a]
        return [reach.client_url(a) for a in addresses]


def plan_members(config: StackConfig) -> SandboxEtcd | None:
    """The members of a vpc-move stack's control plane; None for other scenarios."""
    from components.contract.placement import member_address

    target = config.migration.target_network
    if config.scenario != "vpc-move" or target is None:
        return None
    cluster, cp = config.cluster, config.cluster.control_plane
    networks = [cluster.network.cidr, target.cidr]
    address_map = {
        str(net): str(loopback_range(i, net.prefixlen)) for i, net in enumerate(networks)
    }
    members = [
        SandboxMember(
            index=k,
            name=f"member-{k}",
            source=member_address(cp, cluster.network, cluster.network, k),
            target=member_address(cp, cluster.network, target, k),
        )
        for k in range(1, cp.members + 1)
    ]
    return SandboxEtcd(members=members, address_map=address_map)


def loopback_range(index: int, prefixlen: int) -> ipaddress.IPv4Network:
    """The loopback range that plays the stack's ``index``-th network."""
    second = FIRST_LOOPBACK_BLOCK + LOOPBACK_STRIDE * index
    return ipaddress.IPv4Network((f"127.{second}.0.0", prefixlen))
