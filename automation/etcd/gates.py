"""Gate checks against a live cluster: observe it, then decide (``automation.etcd.moves``).

Polled by the runner's ``wait_until`` like the Kubernetes and AWS gates; each poll is
one linearizable member list plus one status request per member.
"""

from __future__ import annotations

from automation.core.waiting import Pending
from automation.etcd.client import EtcdClient
from automation.etcd.health import DEFAULT_MAX_RAFT_LAG
from automation.etcd.moves import MoveExpectation, member_back, ready_to_move
from automation.etcd.observe import observe


def check_ready_to_move(
    client: EtcdClient, member: str | int, *, max_raft_lag: int = DEFAULT_MAX_RAFT_LAG
) -> Pending:
    """``ready_to_move`` on the cluster as it is now."""
    return ready_to_move(observe(client), member, max_raft_lag=max_raft_lag)


def check_member_back(
    client: EtcdClient, expected: MoveExpectation, *, max_raft_lag: int = DEFAULT_MAX_RAFT_LAG
) -> Pending:
    """``member_back`` on the cluster as it is now."""
    return member_back(observe(client), expected, max_raft_lag=max_raft_lag)
