"""One etcd member on 127.0.0.1 shared by the test clusters (each under its own prefix).

The data directory lives in the session's temporary directory and fsync is disabled:
durability is worthless for a test store, latency is not.
"""

from __future__ import annotations

import json
import shutil
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from automation.sandbox.processes import LOOPBACK, Daemon, free_port, retry_port_clash, wait_until


@dataclass(frozen=True)
class Etcd:
    """A running etcd and its client URL."""

    url: str
    daemon: Daemon
    data_dir: Path

    def stop(self) -> None:
        self.daemon.stop()


def _healthy(url: str) -> bool:
    with urllib.request.urlopen(f"{url}/health", timeout=2) as resp:
        return bool(json.load(resp).get("health") == "true")


def start_etcd(binary: Path, workdir: Path, *, timeout: float = 60.0) -> Etcd:
    """Start etcd and wait until ``/health`` answers true (new ports on a port clash)."""
    return retry_port_clash(lambda: _start_etcd(binary, workdir, timeout))


def _start_etcd(binary: Path, workdir: Path, timeout: float) -> Etcd:
    client, peer = free_port(), free_port()
    client_url, peer_url = f"http://{LOOPBACK}:{client}", f"http://{LOOPBACK}:{peer}"
    data_dir = workdir / "etcd-data"
    shutil.rmtree(data_dir, ignore_errors=True)  # a failed attempt may have left one
    daemon = Daemon.start(
        "etcd",
        [
            binary,
            "--name=kubeshift",
            f"--data-dir={data_dir}",
            f"--listen-client-urls={client_url}",
            f"--advertise-client-urls={client_url}",
            f"--listen-peer-urls={peer_url}",
            f"--initial-advertise-peer-urls={peer_url}",
            f"--initial-cluster=kubeshift={peer_url}",
            "--unsafe-no-fsync=true",
            "--quota-backend-bytes=8589934592",
            "--log-level=warn",
        ],
        workdir / "logs",
    )
    etcd = Etcd(client_url, daemon, data_dir)
    try:
        wait_until("etcd /health", lambda: _healthy(client_url), timeout=timeout, daemons=[daemon])
    except Exception:
        daemon.stop()
        raise
    return etcd
