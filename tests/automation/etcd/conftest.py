"""A fresh three-member etcd cluster per test (moves and replacements change it), and
kubeshift's own client for it.

Starting three members with fsync off takes a second or two; a test that changes
membership never leaks into the next one. Logs stay in the test's ``tmp_path``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from automation.etcd.client import EtcdClient
from automation.sandbox.binaries import Binaries
from automation.sandbox.etcd_cluster import EtcdCluster, start_etcd_cluster
from automation.sandbox.processes import StartupError


@pytest.fixture
def etcd_cluster(testbin: Binaries, tmp_path: Path) -> Iterator[EtcdCluster]:
    try:
        cluster = start_etcd_cluster(testbin.etcd, tmp_path / "etcd")
    except StartupError as exc:
        message = f"etcd cluster did not start: {exc}"
    else:
        yield cluster
        cluster.stop()
        return
    pytest.fail(message, pytrace=False)  # outside `except`: no chained traceback


@pytest.fixture
def etcd(etcd_cluster: EtcdCluster) -> Iterator[EtcdClient]:
    with EtcdClient(etcd_cluster.endpoints) as client:
        yield client
