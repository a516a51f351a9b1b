"""The API server's fronts to the etcd members: one address per member that follows it
from instance to instance, holding a connection while the member is between them."""

from __future__ import annotations

import json
import resource
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from automation.sandbox.binaries import Binaries
from automation.sandbox.etcd_cluster import EtcdCluster, start_etcd_cluster
from automation.sandbox.etcd_fronts import MemberFronts, raise_open_files_limit
from automation.sandbox.processes import free_port

# How long a request may be held while its member starts: well past an etcd start on a
# busy machine, so only a front that stops holding fails the test.
HELD = 120.0


def _health(url: str) -> bool:
    with urllib.request.urlopen(f"{url}/health", timeout=HELD) as reply:
        return bool(json.loads(reply.read())["health"] == "true")


@pytest.fixture
def member(testbin: Binaries, tmp_path: Path) -> Iterator[EtcdCluster]:
    cluster = start_etcd_cluster(testbin.etcd, tmp_path, size=1)
    yield cluster
    cluster.stop()


@pytest.fixture
def fronts(member: EtcdCluster) -> Iterator[MemberFronts]:
    fronts = MemberFronts(
        lambda name: member.members[name].client_url, list(member.members), backend_wait=HELD
    )
    fronts.start()
    yield fronts
    fronts.stop()


@pytest.mark.etcd
def test_a_front_reaches_its_member_before_and_after_it_moves(
    member: EtcdCluster, fronts: MemberFronts
) -> None:
    (name,) = member.members
    front = fronts.urls[name]
    old_url = member.members[name].client_url
    assert front != old_url and _health(front)

    member.move_member(
        name,
        f"http://127.0.0.1:{free_port()}",
        client_url=f"http://127.0.0.1:{free_port()}",
    )

    assert member.members[name].client_url != old_url
    assert _health(front)


@pytest.mark.etcd
def test_a_connection_made_while_the_member_is_down_is_served_once_it_is_back(
    member: EtcdCluster, fronts: MemberFronts
) -> None:
    (name,) = member.members
    member.stop_member(name)
    answers: list[bool] = []
    asking = threading.Thread(target=lambda: answers.append(_health(fronts.urls[name])))
    asking.start()
    time.sleep(1.0)  # the request is held at the front, not refused
    assert asking.is_alive()

    member.start_member(name)
    asking.join(timeout=HELD)

    assert answers == [True]


def test_a_member_that_never_comes_back_closes_the_connection_after_the_wait() -> None:
    port = free_port()  # nothing listens there
    fronts = MemberFronts(lambda _: f"http://127.0.0.1:{port}", ["gone"], backend_wait=0.5)
    (url,) = fronts.start()
    try:
        host, front_port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(front_port)), timeout=10) as conn:
            started = time.monotonic()
            conn.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            assert conn.recv(1024) == b""  # closed, no answer
            assert 0.4 <= time.monotonic() - started < 5
    finally:
        fronts.stop()


def test_the_open_files_limit_is_lifted_to_the_hard_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(1024, hard), hard))
        assert raise_open_files_limit() == hard
        assert resource.getrlimit(resource.RLIMIT_NOFILE) == (hard, hard)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
