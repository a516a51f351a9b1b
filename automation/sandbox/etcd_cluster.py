"""A multi-member etcd cluster on 127.0.0.1 whose members can be stopped, moved and replaced.

Each member has its own client and peer port, data directory and log; fsync is off
(durability is worthless here, latency is not). Stopping is graceful (SIGTERM: a
leader hands over leadership first). A member restarts from its data directory, on a
new peer URL when it "moved"; a replaced member starts empty and joins as ``existing``.
Client URLs may serve TLS with client-certificate authentication; peers stay plain.
"""

from __future__ import annotations

import json
import secrets
import shutil
import ssl
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from automation.sandbox.processes import LOOPBACK, Daemon, free_port, retry_port_clash, wait_until


@dataclass(frozen=True)
class EtcdTls:
    """Serving pair and CA for the client URLs, and a client pair the harness probes with."""

    ca_file: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path

    def client_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=str(self.ca_file))
        context.load_cert_chain(self.client_cert, self.client_key)
        return context


@dataclass
class EtcdMember:
    """One member's addresses, data directory and (while running) process."""

    name: str
    client_url: str
    peer_url: str
    data_dir: Path
    daemon: Daemon | None = field(default=None, repr=False)

    def running(self) -> bool:
        return self.daemon is not None and self.daemon.running()

    def stop(self) -> None:
        if self.daemon is not None:
            self.daemon.stop()


@dataclass
class EtcdCluster:
    """The running members, by name, and how to start them again."""

    binary: Path
    workdir: Path
    members: dict[str, EtcdMember]
    token: str
    tls: EtcdTls | None = None

    @property
    def endpoints(self) -> list[str]:
        return [m.client_url for m in self.members.values()]

    def initial_cluster(self) -> str:
        return ",".join(f"{m.name}={m.peer_url}" for m in self.members.values())

    def start_member(self, name: str, *, state: str = "existing", timeout: float = 60.0) -> None:
        """Start ``name`` with its current peer URL and data directory; wait until healthy."""
        self._spawn(self.members[name], state)
        self.wait_healthy([name], timeout=timeout)

    def stop_member(self, name: str) -> None:
        self.members[name].stop()

    def move_member(
        self, name: str, peer_url: str, *, client_url: str | None = None, timeout: float = 60.0
    ) -> None:
        """Restart a stopped member from its data directory, listening on ``peer_url``
        (and ``client_url``, when its client address moves too)."""
        member = self.members[name]
        member.stop()
        member.peer_url = peer_url
        member.client_url = client_url or member.client_url
        self.start_member(name, timeout=timeout)

    def spawn_member(self, name: str, *, state: str = "existing") -> None:
        """Start ``name`` with its current URLs and data directory; do not wait."""
        self._spawn(self.members[name], state)

    def wipe_member(self, name: str, peer_url: str | None = None) -> None:
        """Stop a member and delete its data (it can only return as a new member)."""
        member = self.members[name]
        member.stop()
        shutil.rmtree(member.data_dir, ignore_errors=True)
        if peer_url is not None:
            member.peer_url = peer_url

    def wait_healthy(self, names: Sequence[str] | None = None, *, timeout: float = 60.0) -> None:
        """Wait until each member's ``/health`` is true (it has a leader and can read)."""
        chosen = [self.members[n] for n in names or list(self.members)]
        daemons = [m.daemon for m in chosen if m.daemon is not None]
        context = self.tls.client_context() if self.tls else None
        for member in chosen:
            wait_until(
                f"etcd member {member.name} /health",
                partial(_healthy, member.client_url, context),
                timeout=timeout,
                daemons=daemons,
            )

    def stop(self) -> None:
        """Stop the members one by one (all at once, a leader's hand-over waits ~7s)."""
        for member in self.members.values():
            member.stop()

    def _spawn(self, member: EtcdMember, state: str) -> None:
        argv: list[str | Path] = [
            self.binary,
            f"--name={member.name}",
            f"--data-dir={member.data_dir}",
            f"--listen-client-urls={member.client_url}",
            f"--advertise-client-urls={member.client_url}",
            f"--listen-peer-urls={member.peer_url}",
            f"--initial-advertise-peer-urls={member.peer_url}",
            f"--initial-cluster={self.initial_cluster()}",
            f"--initial-cluster-state={state}",
            f"--initial-cluster-token={self.token}",
            "--unsafe-no-fsync=true",
            "--log-level=warn",
        ]
        if self.tls is not None:
            argv += [
                f"--cert-file={self.tls.server_cert}",
                f"--key-file={self.tls.server_key}",
                f"--trusted-ca-file={self.tls.ca_file}",
                "--client-cert-auth=true",
                # the JSON gateway dials etcd's own gRPC server as a client
                f"--client-cert-file={self.tls.client_cert}",
                f"--client-key-file={self.tls.client_key}",
            ]
        member.daemon = Daemon.start(f"etcd-{member.name}", argv, self.workdir / "logs")


def _healthy(url: str, context: ssl.SSLContext | None) -> bool:
    with urllib.request.urlopen(f"{url}/health", timeout=2, context=context) as resp:
        return bool(json.load(resp).get("health") == "true")


def start_etcd_cluster(
    binary: Path,
    workdir: Path,
    *,
    size: int = 3,
    hosts: Mapping[str, str] | None = None,
    tls: EtcdTls | None = None,
    timeout: float = 60.0,
) -> EtcdCluster:
    """Start ``size`` members as one new cluster and wait until every one is healthy.

    ``hosts`` (member name -> loopback address) puts each member on its own address,
    all on the same two ports; otherwise members are ``etcd-0``... on 127.0.0.1.
    """
    named = dict(hosts or {f"etcd-{i}": LOOPBACK for i in range(size)})
    return retry_port_clash(lambda: _start(binary, workdir, named, tls, timeout))


def _start(
    binary: Path, workdir: Path, hosts: Mapping[str, str], tls: EtcdTls | None, timeout: float
) -> EtcdCluster:
    scheme = "https" if tls else "http"
    shared = len(set(hosts.values())) == len(hosts)
    ports = (free_port(), free_port()) if shared else None
    members = {}
    for name, host in hosts.items():
        data_dir = workdir / name
        shutil.rmtree(data_dir, ignore_errors=True)  # a failed attempt may have left one
        client_port, peer_port = ports or (free_port(), free_port())
        members[name] = EtcdMember(
            name,
            f"{scheme}://{host}:{client_port}",
            f"http://{host}:{peer_port}",
            data_dir,
        )
    cluster = EtcdCluster(binary, workdir, members, f"kubeshift-{secrets.token_hex(4)}", tls)
    try:
        for member in members.values():
            cluster._spawn(member, "new")
        cluster.wait_healthy(timeout=timeout)
    except Exception:
        cluster.stop()
        raise
    return cluster
