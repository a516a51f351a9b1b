"""The etcd gates and the peer-URL action against a real three-member cluster.

Every wait is a condition with a deadline (``eventually``); members are stopped
gracefully, as a control-plane node is drained before it moves.
"""

from __future__ import annotations

import sys

import pytest

from automation.core.errors import StepFailedError
from automation.core.waiting import Pending
from automation.etcd.client import EtcdClient
from automation.etcd.gates import check_member_back, check_ready_to_move
from automation.etcd.models import hex_id
from automation.etcd.moves import MoveExpectation, expect_move, member_back
from automation.etcd.observe import ClusterView, observe
from automation.etcd.peers import PeerUrlChange, update_peer_url
from automation.sandbox.etcd_cluster import EtcdCluster
from automation.sandbox.processes import LOOPBACK, free_port, retry_port_clash
from tests.support.etcd_writer import Writer
from tests.support.waiting import eventually

pytestmark = pytest.mark.etcd


def done(result: Pending) -> bool:
    return result.done


def new_peer_url() -> str:
    return f"http://{LOOPBACK}:{free_port()}"


def view_of(client: EtcdClient) -> ClusterView:
    """The cluster as it is now (a temporary error, as in an election, is tried again)."""
    return eventually("a view of the cluster", lambda: observe(client))


def leader_name(client: EtcdClient) -> str:
    def leader() -> str:
        view = observe(client)
        return next(m.name for m in view.members if (s := view.statuses.get(m.id)) and s.is_leader)

    return eventually("a leader", leader)


def peer_urls(client: EtcdClient, member_id: int) -> tuple[str, ...]:
    members = eventually("the member list", lambda: client.members())
    return next(m.peer_urls for m in members if m.id == member_id)


def point_peer_url(client: EtcdClient, member_id: int, url: str) -> PeerUrlChange:
    return eventually(
        "the peer URL update",
        lambda: update_peer_url(client, member_id, url),
        until=lambda change: change.action in {"updated", "unchanged"},
    )


def move(cluster: EtcdCluster, client: EtcdClient, name: str) -> MoveExpectation:
    """vpc-move's steps for one member: gate, stop, point its peer URL at the new address
    through the API, restart it there from its data directory, wait until it is back."""
    eventually(f"{name} ready to move", lambda: check_ready_to_move(client, name), until=done)
    before = view_of(client)
    cluster.stop_member(name)

    def restart() -> MoveExpectation:
        url = new_peer_url()
        expected = expect_move(before, name, new_peer_url=url)
        point_peer_url(client, expected.member_id, url)
        cluster.move_member(name, url)
        return expected

    expected = retry_port_clash(restart)
    eventually(f"{name} back", lambda: check_member_back(client, expected), until=done)
    return expected


def test_a_healthy_cluster_is_ready_to_move_each_member(
    etcd_cluster: EtcdCluster, etcd: EtcdClient
) -> None:
    assert len(etcd_cluster.members) == 3
    for name in etcd_cluster.members:
        result = eventually(
            f"{name} ready to move", lambda n=name: check_ready_to_move(etcd, n), until=done
        )
        assert "3/3 members healthy" in result.detail
        assert result.detail.endswith("leaves 2 healthy voters (quorum 2)")


def test_a_stopped_member_is_named_and_moving_another_would_lose_quorum(
    etcd_cluster: EtcdCluster, etcd: EtcdClient
) -> None:
    etcd_cluster.stop_member("etcd-2")
    stopped = view_of(etcd).find("etcd-2")
    assert stopped is not None
    quorum_lost = "quorum: with etcd-0 down, 1 of 3 voters would be healthy; quorum needs 2"
    silent = f"member etcd-2 ({hex_id(stopped.id)}): did not answer (connection refused at"
    result = eventually(
        "etcd-2 reported down, and nothing else",
        lambda: check_ready_to_move(etcd, "etcd-0"),
        until=lambda r: len(r.items) == 2 and quorum_lost in r.items,
    )
    assert next(item for item in result.items if item != quorum_lost).startswith(silent)
    # the stopped member itself may go (quorum holds), but only once the cluster is healthy
    itself = eventually(
        "etcd-2's own verdict",
        lambda: check_ready_to_move(etcd, "etcd-2"),
        until=lambda r: len(r.items) == 1,
    )
    assert itself.items[0].startswith(silent)


def test_a_moved_member_is_back_under_its_id_after_its_peer_url_is_updated(
    etcd_cluster: EtcdCluster, etcd: EtcdClient
) -> None:
    eventually("etcd-1 ready to move", lambda: check_ready_to_move(etcd, "etcd-1"), until=done)
    old_url = etcd_cluster.members["etcd-1"].peer_url
    expected = expect_move(view_of(etcd), "etcd-1", new_peer_url=new_peer_url())
    label = f"etcd-1 ({hex_id(expected.member_id)})"
    etcd_cluster.stop_member("etcd-1")

    still = f"member {label}: peer URL is still {old_url}, want {expected.peer_url}"
    eventually(
        "the old peer URL reported",
        lambda: check_member_back(etcd, expected),
        until=lambda r: still in r.items,
    )

    plan = eventually(
        "a dry run",
        lambda: update_peer_url(etcd, expected.member_id, expected.peer_url, dry_run=True),
    )
    assert plan.describe() == (
        f"Would change etcd member {label}'s peer URL from {old_url} to {expected.peer_url}."
    )
    assert peer_urls(etcd, expected.member_id) == (old_url,)  # the dry run changed nothing
    point_peer_url(etcd, expected.member_id, expected.peer_url)
    assert peer_urls(etcd, expected.member_id) == (expected.peer_url,)
    again = eventually(
        "a second update", lambda: update_peer_url(etcd, expected.member_id, expected.peer_url)
    )
    assert again.action == "unchanged"
    assert again.describe() == f"etcd member {label} already has peer URL {expected.peer_url}."

    etcd_cluster.move_member("etcd-1", expected.peer_url)
    back = eventually("etcd-1 back", lambda: check_member_back(etcd, expected), until=done)
    assert back.detail == f"member {label} at {expected.peer_url}"
    members = eventually("the member list", lambda: etcd.members())
    assert {m.name: m.id for m in members}["etcd-1"] == expected.member_id  # the same member


def test_a_member_back_under_a_new_id_fails_clearly(
    etcd_cluster: EtcdCluster, etcd: EtcdClient
) -> None:
    eventually("etcd-2 ready to move", lambda: check_ready_to_move(etcd, "etcd-2"), until=done)
    expected = expect_move(view_of(etcd), "etcd-2", new_peer_url=new_peer_url())
    etcd_cluster.wipe_member("etcd-2", peer_url=expected.peer_url)  # its data volume is lost
    eventually("etcd-2 removed", lambda: _remove(etcd, expected.member_id))
    added = eventually("etcd-2 re-added", lambda: _add(etcd, expected.peer_url))
    etcd_cluster.start_member("etcd-2", state="existing")
    view = eventually(
        "the new etcd-2 answering",
        lambda: observe(etcd),
        until=lambda v: not v.unanswered and len(v.statuses) == 3,
    )
    with pytest.raises(StepFailedError) as failure:
        member_back(view, expected)
    assert str(failure.value) == (
        f"etcd member etcd-2 came back as a new member {hex_id(added)} instead of "
        f"{hex_id(expected.member_id)}: its data was lost and it joined the cluster afresh; "
        "restore its data volume rather than continue the move."
    )


def _remove(client: EtcdClient, member_id: int) -> bool:
    if any(m.id == member_id for m in client.members()):
        client.remove_member(member_id)  # etcd refuses while the cluster looks unhealthy
    return True


def _add(client: EtcdClient, peer_url: str) -> int:
    """Add a voter at ``peer_url`` unless an earlier attempt did (adding is not idempotent)."""
    existing = next((m for m in client.members() if peer_url in m.peer_urls), None)
    return existing.id if existing is not None else client.add_member([peer_url]).id


def test_writes_during_a_leader_move_are_never_lost_nor_long_stalled(
    etcd_cluster: EtcdCluster, etcd: EtcdClient
) -> None:
    name = leader_name(etcd)
    local = etcd_cluster.members[name].client_url  # like an apiserver beside the leader
    endpoints = [local, *(url for url in etcd_cluster.endpoints if url != local)]
    with EtcdClient(endpoints) as client:
        writer = Writer(client, "/move/")
        writer.start()
        try:
            eventually("writes flowing", lambda: len(writer.acked), until=lambda n: n >= 50)
            before_move = len(writer.acked)
            expected = move(etcd_cluster, etcd, name)
            after_move = len(writer.acked)
            eventually(
                "writes after the move",
                lambda: len(writer.acked),
                until=lambda n: n >= after_move + 50,
            )
        finally:
            writer.halt.set()
            writer.join(timeout=30)
    assert writer.failure is None, writer.failure
    assert after_move > before_move, "no write was acknowledged during the move"
    stored = eventually("the written keys", lambda: etcd.get_prefix("/move/"))
    lost = [key for key in writer.acked if stored.get(key.encode()) != key.encode()]
    assert not lost, f"{len(lost)} acknowledged writes lost, first {lost[:5]}"
    worst = max(writer.latencies)
    sys.stderr.write(
        f"\nmoved leader {name} ({hex_id(expected.member_id)}): {len(writer.acked)} writes "
        f"({after_move - before_move} during the move), {writer.retries} retries; worst write "
        f"latency {worst:.3f}s\n"
    )
    assert worst < 10.0
