"""Runtime settings of etcd, ``kubeshift:runtime.etcd``: how the control-plane gates
reach etcd itself (the members' client and peer URLs at their fixed addresses, extra
endpoints, an address map for ranges reached elsewhere, TLS files, raft lag and
timeouts), and the :class:`~automation.etcd.client.EtcdClient` those settings make.
Nested in :class:`~automation.config.settings.RuntimeSettings`; each
``Field(description=...)`` is a row of ``docs/reference.md``.
"""

from __future__ import annotations

import itertools
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from automation.etcd.client import EtcdClient
from automation.etcd.gateway import DEFAULT_CONNECT_TIMEOUT, DEFAULT_TIMEOUT, check_endpoint
from automation.etcd.health import DEFAULT_MAX_RAFT_LAG


class EtcdSettings(BaseModel):
    """``kubeshift:runtime.etcd``: how the control-plane gates reach etcd itself.

    Each control-plane member runs one etcd member at its fixed address (the stack's
    ``member_address`` on either side), so kubeshift knows every member's client and
    peer URL before and after its move; ``endpoints`` adds any other way in (a load
    balancer, a bastion's tunnel).
    """

    model_config = ConfigDict(extra="forbid")

    endpoints: list[str] = Field(
        default_factory=list,
        description="Extra client URLs (http(s)://host:port) for cluster calls, tried "
        "before the members' own addresses.",
    )
    events_endpoints: list[str] = Field(
        default_factory=list,
        description="Client URLs of the events etcd, where etcd-manager runs one beside the "
        "main (control_plane.membership: etcd-manager; kops serves it on port 4002 of each "
        "member's name). Such a cluster is reached through endpoints and these alone.",
    )
    scheme: Literal["https", "http"] = Field(
        default="https", description="Scheme of the members' client and peer URLs."
    )
    client_port: int = Field(default=2379, ge=1, le=65535, description="Members' client port.")
    peer_port: int = Field(default=2380, ge=1, le=65535, description="Members' peer port.")
    address_map: dict[IPv4Network, IPv4Network] = Field(
        default_factory=dict,
        description="Where kubeshift reaches a VPC range, when not at the VPC address "
        "itself (the sandbox plays each VPC on a loopback range); same prefix lengths.",
    )
    ca_file: Path | None = Field(
        default=None, description="CA bundle etcd's serving certificates chain to."
    )
    cert_file: Path | None = Field(default=None, description="Client certificate (with key).")
    key_file: Path | None = Field(default=None, description="Client key (with certificate).")
    max_raft_lag: int = Field(
        default=DEFAULT_MAX_RAFT_LAG,
        ge=0,
        description="Raft entries a member may trail the leader by and count as caught up.",
    )
    timeout: float = Field(
        default=DEFAULT_TIMEOUT,
        gt=0,
        description="Seconds per request; above etcd's own ~7s request deadline.",
    )
    connect_timeout: float = Field(
        default=DEFAULT_CONNECT_TIMEOUT, gt=0, description="Seconds to connect to a member."
    )

    @field_validator("endpoints", "events_endpoints")
    @classmethod
    def _client_urls(cls, value: list[str]) -> list[str]:
        return [check_endpoint(url) for url in value]

    @field_validator("address_map")
    @classmethod
    def _same_sizes(cls, value: dict[IPv4Network, IPv4Network]) -> dict[IPv4Network, IPv4Network]:
        for vpc, reached in value.items():
            if vpc.prefixlen != reached.prefixlen:
                raise ValueError(f"{vpc} and {reached} differ in size; map equal ranges")
        for (a, a_at), (b, b_at) in itertools.combinations(value.items(), 2):
            if a.overlaps(b):
                raise ValueError(f"{a} and {b} overlap; an address would be mapped twice")
            if a_at.overlaps(b_at):
                raise ValueError(
                    f"{a} and {b} are mapped to overlapping ranges ({a_at}, {b_at}); two "
                    "members could be reached at one address"
                )
        return value

    @model_validator(mode="after")
    def _cert_with_key(self) -> Self:
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("cert_file and key_file go together; give both or neither")
        return self

    @model_validator(mode="after")
    def _two_ports(self) -> Self:
        if self.client_port == self.peer_port:
            raise ValueError(
                f"client_port and peer_port are both {self.client_port}; etcd serves clients "
                "and peers on two ports"
            )
        return self

    def reach(self, address: str) -> str:
        """Where kubeshift reaches the VPC ``address`` (itself unless a range maps it)."""
        ip = IPv4Address(address)
        for vpc, reached in self.address_map.items():
            if ip in vpc:
                return str(reached.network_address + (int(ip) - int(vpc.network_address)))
        return address

    def client_url(self, address: str) -> str:
        return f"{self.scheme}://{self.reach(address)}:{self.client_port}"

    def peer_url(self, address: str) -> str:
        return f"{self.scheme}://{self.reach(address)}:{self.peer_port}"

    def client(self, endpoints: list[str]) -> EtcdClient:
        """A client for ``endpoints`` with these TLS files and timeouts."""
        return EtcdClient(
            endpoints,
            ca_file=self.ca_file,
            cert_file=self.cert_file,
            key_file=self.key_file,
            timeout=self.timeout,
            connect_timeout=self.connect_timeout,
        )
