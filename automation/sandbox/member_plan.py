"""Where the sandbox runs a vpc-move stack's etcd members, and how kubeshift reaches them.

The sandbox has no VPC: each network of the stack is played on its own loopback range
of the same size (network i at ``127.(100 + 20 i).0.0``), so a member's fixed address in
either VPC has one loopback address the member listens on. Where kops's etcd-manager
keeps membership, a member is reached by its names (``etcd-<n>``, ``etcd-events-<n>``),
which follow it to whichever instance runs it: the sandbox plays each member's names by
one loopback address of its own (``127.90.0.<n>``) that its main and events etcd listen
on wherever the member runs, as a name resolving to its current host. The plan travels
from ``sandbox up`` to the supervisor and back in the state file, ports filled in; the
rehearsal's ``runtime.etcd`` is its :meth:`SandboxEtcd.settings`.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from automation.config.etcd_settings import EtcdSettings
    from components.contract.models import StackConfig

FIRST_LOOPBACK_BLOCK = 100
LOOPBACK_STRIDE = 20
NAMES_BLOCK = ipaddress.IPv4Network("127.90.0.0/24")
"""Where etcd-manager's member names are played: member n's at its n-th address."""


class SandboxMember(BaseModel):
    """One control-plane member: its etcd name and fixed address on each side."""

    model_config = ConfigDict(frozen=True)

    index: int
    name: str
    source: str
    target: str | None = None
    events_name: str = ""
    """etcd-manager's: the member's name in the events etcd (empty: no events etcd)."""

    @property
    def named_at(self) -> str:
        """etcd-manager's: the loopback address that plays the member's names."""
        return str(NAMES_BLOCK.network_address + self.index)


class SandboxEtcd(BaseModel):
    """The members the sandbox runs, how they are reached, and on which ports."""

    model_config = ConfigDict(frozen=True)

    members: list[SandboxMember]
    address_map: dict[str, str]
    membership: Literal["static", "etcd-manager"] = "static"
    client_port: int = 2379
    peer_port: int = 2380
    """etcd's defaults until the supervisor picks free ports."""
    events_client_port: int = 4002
    events_peer_port: int = 2381
    """etcd-manager's events etcd (kops's ports) until the supervisor picks free ones."""

    @property
    def managed(self) -> bool:
        """kops's etcd-manager keeps membership: a main and an events etcd, by names."""
        return self.membership == "etcd-manager"

    def settings(self) -> EtcdSettings:
        """``runtime.etcd`` for a stack rehearsed here."""
        from automation.config.etcd_settings import EtcdSettings

        values: dict[str, object] = {
            "scheme": "http",
            "client_port": self.client_port,
            "peer_port": self.peer_port,
            "address_map": self.address_map,
        }
        if self.managed:
            values["endpoints"] = self.client_urls()
            values["events_endpoints"] = self.events_client_urls()
        return EtcdSettings.model_validate(values)

    def client_urls(self) -> list[str]:
        """Every member's client URL: on both sides, for a client that reaches members by
        their addresses (kubeshift's etcd steps do), or at its names (etcd-manager's)."""
        if self.managed:
            return [f"http://{m.named_at}:{self.client_port}" for m in self.members]
        reach = self.settings()
        addresses = [a for m in self.members for a in (m.source, m.target) if a]
        return [reach.client_url(a) for a in addresses]

    def events_client_urls(self) -> list[str]:
        """etcd-manager's events etcd's client URLs, at the members' names."""
        if not self.managed:
            return []
        return [f"http://{m.named_at}:{self.events_client_port}" for m in self.members]


def plan_members(config: StackConfig, *, etcd_manager: bool = False) -> SandboxEtcd | None:
    """The members of a vpc-move stack's control plane; None for other scenarios.

    ``etcd_manager``: the cluster runs as kops runs it (the kops world), whatever the
    stack file says: members named as etcd-manager names them, with an events etcd."""
    from components.contract.placement import etcd_manager_name, member_address

    target = config.migration.target_network
    if config.scenario != "vpc-move" or target is None:
        return None
    cluster, cp = config.cluster, config.cluster.control_plane
    networks = [cluster.network.cidr, target.cidr]
    address_map = {
        str(net): str(loopback_range(i, net.prefixlen)) for i, net in enumerate(networks)
    }
    managed = etcd_manager or cp.membership == "etcd-manager"
    members = [
        SandboxMember(
            index=k,
            name=f"etcd-{etcd_manager_name(cp, k)}" if managed else f"member-{k}",
            events_name=f"etcd-events-{etcd_manager_name(cp, k)}" if managed else "",
            source=member_address(cp, cluster.network, cluster.network, k),
            target=member_address(cp, cluster.network, target, k),
        )
        for k in range(1, cp.members + 1)
    ]
    return SandboxEtcd(
        members=members,
        address_map=address_map,
        membership="etcd-manager" if managed else "static",
    )


def loopback_range(index: int, prefixlen: int) -> ipaddress.IPv4Network:
    """The loopback range that plays the stack's ``index``-th network."""
    second = FIRST_LOOPBACK_BLOCK + LOOPBACK_STRIDE * index
    return ipaddress.IPv4Network((f"127.{second}.0.0", prefixlen))
