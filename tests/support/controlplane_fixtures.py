"""pytest plugin: session-scoped real control planes (``primary`` and ``mirror``).

Both clusters share one etcd (each apiserver under its own ``--etcd-prefix``) and are
started lazily, the first time a test asks for them. Missing binaries FAIL the test with
a message saying to run ``scripts/testbin``; nothing is skipped. Logs live in the
session's temporary directory; they are deleted after a green session and their paths
are printed after a red one.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from kubernetes.client import ApiClient, CoreV1Api, V1Namespace, V1ObjectMeta
from kubernetes.client.exceptions import ApiException

from automation.sandbox.binaries import Binaries, MissingBinaries, locate
from automation.sandbox.controlplane import Cluster, ClusterOptions, start_cluster
from automation.sandbox.etcd import Etcd, start_etcd
from automation.sandbox.kwok import default_pod_ready_delay_ms
from automation.sandbox.processes import StartupError
from tests.support.nodes import NodePools, unique_name

T = TypeVar("T")


def _or_fail(what: str, start: Callable[[], T]) -> T:
    """Run ``start``; a :class:`StartupError` fails the test with its message (and logs)."""
    try:
        return start()
    except StartupError as exc:
        message = f"{what} did not start: {exc}"
    pytest.fail(message, pytrace=False)  # outside `except`: no chained traceback


@pytest.fixture(scope="session")
def testbin() -> Binaries:
    """Paths of the control-plane binaries; fails the test when they are not built."""
    try:
        return locate()
    except MissingBinaries as exc:
        message = str(exc)
    pytest.fail(message, pytrace=False)  # outside `except`: no chained traceback


@pytest.fixture(scope="session")
def controlplane_workdir(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    """Directory holding PKI, configs, etcd data and logs of every cluster."""
    workdir = tmp_path_factory.mktemp("controlplane")
    yield workdir
    if request.session.testsfailed:
        logs = sorted(str(p) for p in workdir.rglob("*.log"))
        sys.stderr.write("\ncontrol-plane logs kept:\n  " + "\n  ".join(logs) + "\n")
    else:
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def shared_etcd(testbin: Binaries, controlplane_workdir: Path) -> Iterator[Etcd]:
    """One etcd for every test cluster of the session."""
    etcd = _or_fail("etcd", lambda: start_etcd(testbin.etcd, controlplane_workdir))
    yield etcd
    etcd.stop()


def _cluster(name: str, testbin: Binaries, etcd: Etcd, workdir: Path) -> Iterator[Cluster]:
    opts = ClusterOptions(name=name, pod_ready_delay_ms=default_pod_ready_delay_ms())
    cluster = _or_fail(
        f"cluster {name}", lambda: start_cluster(testbin, etcd.url, workdir / name, opts)
    )
    sys.stderr.write(
        f"\ncluster {name} ready in {cluster.startup_seconds:.1f}s at {cluster.server}\n"
    )
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def primary_cluster(
    testbin: Binaries, shared_etcd: Etcd, controlplane_workdir: Path
) -> Iterator[Cluster]:
    """The source cluster: apiserver, controller-manager, scheduler and kwok."""
    yield from _cluster("primary", testbin, shared_etcd, controlplane_workdir)


@pytest.fixture(scope="session")
def mirror_cluster(
    testbin: Binaries, shared_etcd: Etcd, controlplane_workdir: Path
) -> Iterator[Cluster]:
    """A second, independent cluster (its own apiserver and etcd prefix)."""
    yield from _cluster("mirror", testbin, shared_etcd, controlplane_workdir)


@pytest.fixture(scope="session")
def cluster_factory(
    testbin: Binaries, shared_etcd: Etcd, controlplane_workdir: Path
) -> Iterator[Callable[..., Cluster]]:
    """``make(name, **ClusterOptions fields) -> Cluster``: extra clusters for the session.

    For tests that need their own knobs (e.g. ``pod_ready_delay_ms`` for a drain
    benchmark, higher ``api_qps``). Names must be unique; all are stopped at session end.
    """
    started: dict[str, Cluster] = {}

    def make(name: str, **options: int) -> Cluster:
        if name in started or name in ("primary", "mirror"):
            raise ValueError(f"cluster name {name!r} is already used in this session")
        opts = ClusterOptions(name=name, **options)
        cluster = _or_fail(
            f"cluster {name}",
            lambda: start_cluster(testbin, shared_etcd.url, controlplane_workdir / name, opts),
        )
        started[name] = cluster
        return cluster

    yield make
    for cluster in reversed(list(started.values())):
        cluster.stop()


@pytest.fixture
def primary_client(primary_cluster: Cluster) -> Iterator[ApiClient]:
    """An admin API client for the primary cluster, closed after the test."""
    with primary_cluster.api_client() as client:
        yield client


@pytest.fixture
def namespace_factory(
    request: pytest.FixtureRequest,
) -> Iterator[Callable[[Cluster], str]]:
    """``make(cluster) -> name``: a fresh namespace, deleted after the test."""
    created: list[tuple[ApiClient, str]] = []
    prefix = "t-" + "".join(c if c.isalnum() else "-" for c in request.node.name.lower())[:40]

    def make(cluster: Cluster) -> str:
        client = cluster.api_client()
        name = unique_name(prefix.rstrip("-"))
        CoreV1Api(client).create_namespace(V1Namespace(metadata=V1ObjectMeta(name=name)))
        created.append((client, name))
        return name

    yield make
    for client, name in created:
        with contextlib.suppress(ApiException):
            CoreV1Api(client).delete_namespace(name, propagation_policy="Background")
        client.close()


@pytest.fixture
def namespace(primary_cluster: Cluster, namespace_factory: Callable[[Cluster], str]) -> str:
    """A fresh namespace in the primary cluster, deleted after the test."""
    return namespace_factory(primary_cluster)


@pytest.fixture
def node_pools_factory() -> Iterator[Callable[[Cluster], NodePools]]:
    """``make(cluster) -> NodePools``; every pool created through it is deleted after."""
    made: list[tuple[ApiClient, NodePools]] = []

    def make(cluster: Cluster) -> NodePools:
        client = cluster.api_client()
        pools = NodePools(client)
        made.append((client, pools))
        return pools

    yield make
    for client, pools in made:
        pools.cleanup()
        client.close()


@pytest.fixture
def node_pools(
    primary_cluster: Cluster, node_pools_factory: Callable[[Cluster], NodePools]
) -> NodePools:
    """Node-pool helper bound to the primary cluster, cleaned up after the test."""
    return node_pools_factory(primary_cluster)
