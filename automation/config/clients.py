"""The one module that builds clients: Kubernetes per cluster role, and AWS.

Hooks receive a ``ClientSet`` through their context and never build clients
themselves. Clients are built on first use, so a phase that touches only AWS never
needs a kubeconfig, and a bad kubeconfig fails the first step that needs it, in one
sentence.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from automation.config.settings import RuntimeSettings
from automation.core.errors import UserError

if TYPE_CHECKING:
    from automation.aws.clients import AwsClients
    from automation.kube.clients import KubeClients


class LazyClients:
    """``ClientSet`` built from runtime settings, each client on first use."""

    def __init__(self, settings: RuntimeSettings) -> None:
        self._settings = settings
        self._kube: dict[str, KubeClients] = {}
        self._aws: AwsClients | None = None

    def kube(self, cluster: str = "primary") -> KubeClients:
        if cluster not in self._kube:
            from automation.kube.clients import build_clients

            access = self._settings.clusters.get(cluster)
            if access is None:
                known = ", ".join(sorted(self._settings.clusters)) or "none"
                raise UserError(
                    f"No Kubernetes access is configured for cluster '{cluster}' "
                    f"(kubeshift:runtime.clusters has: {known})."
                )
            self._kube[cluster] = build_clients(access)
        return self._kube[cluster]

    def aws(self) -> AwsClients:
        if self._aws is None:
            from automation.aws.clients import AwsClients

            self._aws = AwsClients(self._settings.aws)
        return self._aws


class StaticClients:
    """``ClientSet`` over clients built elsewhere (tests, embedding)."""

    def __init__(
        self, kube: dict[str, KubeClients] | None = None, aws: AwsClients | None = None
    ) -> None:
        self._kube = kube or {}
        self._aws = aws

    def kube(self, cluster: str = "primary") -> KubeClients:
        if cluster not in self._kube:
            raise UserError(f"No Kubernetes client for cluster '{cluster}'.")
        return self._kube[cluster]

    def aws(self) -> AwsClients:
        if self._aws is None:
            raise UserError("No AWS client is configured.")
        return self._aws
