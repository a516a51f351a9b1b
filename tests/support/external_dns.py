"""The real external-dns, run against a test cluster and moto's Route53.

No kubelet runs the controller's Deployment here (kwok nodes run no containers), so
the test plays the kubelet's part: :meth:`ExternalDns.sync` reads the Deployment and,
when it has replicas, runs the built binary once (``--once``) with that Deployment's
own arguments, limited to the test's namespace. A Deployment scaled to zero runs
nothing — what pausing it means on a real cluster.
"""

from __future__ import annotations

import os
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

from kubernetes.client import ApiClient, AppsV1Api

from automation.sandbox.binaries import external_dns
from tests.support.moto_fixtures import MotoServer

CONTAINER = "external-dns"


@dataclass(frozen=True)
class SyncRun:
    ran: bool
    output: str = ""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class ExternalDns:
    """One external-dns Deployment of a test namespace, run for real when scheduled."""

    api: ApiClient
    kubeconfig: Path
    """Its current context is the cluster the controller watches."""
    namespace: str
    moto: MotoServer
    name: str = "external-dns"

    def args(self) -> list[str]:
        deployment = AppsV1Api(self.api).read_namespaced_deployment(self.name, self.namespace)
        if not deployment.spec.replicas:
            return []
        container = next(c for c in deployment.spec.template.spec.containers if c.name == CONTAINER)
        return list(container.args or [])

    def sync(self, timeout: float = 120) -> SyncRun:
        """One reconcile of the controller, if its Deployment has replicas."""
        args = self.args()
        if not args:
            return SyncRun(ran=False)
        env = {
            **os.environ,
            "AWS_ENDPOINT_URL": self.moto.endpoint_url,
            "AWS_REGION": self.moto.region,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
        }
        command = [
            str(external_dns()), *args, "--once", f"--kubeconfig={self.kubeconfig}",
            f"--namespace={self.namespace}",
            f"--metrics-address=127.0.0.1:{_free_port()}",
        ]  # fmt: skip
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
        output = done.stdout + done.stderr
        if done.returncode != 0:
            raise AssertionError(f"external-dns exited {done.returncode}:\n{output[-3000:]}")
        return SyncRun(ran=True, output=output)
