"""Gates that react: the wait between two checks ends when a watched collection changes."""

from __future__ import annotations

import threading
import time

import pytest

from automation.core.waiting import wait_until
from automation.kube.clients import KubeClients
from automation.kube.gates import nodes_ready
from automation.kube.wakeups import Wakeups
from tests.support.nodes import NodePools, NodePoolSpec, unique_name

INTERVAL = 30.0  # a poll this slow would fail the test; only a wake can pass it


@pytest.mark.controlplane
def test_a_gate_passes_when_its_nodes_turn_ready_not_at_its_next_poll(
    kube: KubeClients, node_pools: NodePools
) -> None:
    group = unique_name("wake")
    selector = f"kubeshift.io/test-group={group}"
    spec = NodePoolSpec("wake", count=3, labels={"kubeshift.io/test-group": group})
    joined: list[float] = []

    def join_later() -> None:
        time.sleep(1.0)
        node_pools.create(spec)
        joined.append(time.monotonic())

    with Wakeups([(kube, "nodes")]) as wakeups:
        assert wakeups.watching
        threading.Thread(target=join_later, daemon=True).start()
        began = time.monotonic()
        wait_until(
            "the nodes to be Ready",
            lambda: nodes_ready(kube, selector, expected=3),
            timeout=INTERVAL - 5,
            interval=INTERVAL,
            sleep=wakeups.sleep,
        )
    passed = time.monotonic()
    assert joined and wakeups.wakes >= 1
    # Within a few seconds of the nodes joining, not at a 30 s poll.
    assert passed - joined[0] < 10, (passed - joined[0], passed - began)


def test_nothing_to_watch_leaves_the_gate_polling() -> None:
    with Wakeups([]) as wakeups:
        assert not wakeups.watching
