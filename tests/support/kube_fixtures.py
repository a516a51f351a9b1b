"""kubeshift's own ``KubeClients`` for the session clusters, built as production builds
them (kubeconfig and context): ``kube`` is the primary's, ``mirror`` the mirror's."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from automation.kube.clients import ClusterAccess, KubeClients, build_clients
from automation.sandbox.controlplane import Cluster


def clients_of(cluster: Cluster) -> KubeClients:
    return build_clients(ClusterAccess(kubeconfig=cluster.kubeconfig_path, context=cluster.context))


@pytest.fixture
def kube(primary_cluster: Cluster) -> Iterator[KubeClients]:
    clients = clients_of(primary_cluster)
    yield clients
    clients.close()


@pytest.fixture
def mirror(mirror_cluster: Cluster) -> Iterator[KubeClients]:
    """The mirror cluster's clients (``kube`` is the primary's)."""
    clients = clients_of(mirror_cluster)
    yield clients
    clients.close()
