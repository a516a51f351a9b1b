"""The move decisions on hand-made views: each problem named once, in one short item."""

from __future__ import annotations

import pytest

from automation.core.errors import PreconditionFailed, StepFailedError
from automation.etcd.models import Member, MemberStatus
from automation.etcd.moves import (
    MoveExpectation,
    expect_move,
    member_back,
    quorum,
    ready_to_move,
)
from automation.etcd.observe import ClusterView

CLUSTER = 0xC1
LEADER = 0xA


def member(
    n: int,
    *,
    peer: str | None = None,
    learner: bool = False,
    name: str = "",
    client: str | None = None,
) -> Member:
    """A member; unless ``client`` says otherwise, serving clients where its peers reach it
    (an etcd started at its address advertises both there)."""
    peer = peer or f"http://10.0.1.{n}:2380"
    return Member(
        id=n,
        name=name or f"m{n:x}",
        peer_urls=(peer,),
        client_urls=(client or peer.rsplit(":", 1)[0] + ":2379",),
        is_learner=learner,
    )


def status(n: int, *, index: int = 100, leader: int = LEADER, **kw: object) -> MemberStatus:
    return MemberStatus.model_validate(
        {"member_id": n, "cluster_id": CLUSTER, "leader": leader, "raftIndex": index, **kw}
    )


def view(
    members: list[Member],
    statuses: dict[int, MemberStatus] | None = None,
    unanswered: dict[int, str] | None = None,
) -> ClusterView:
    if statuses is None:
        statuses = {m.id: status(m.id) for m in members if m.id not in (unanswered or {})}
    return ClusterView(CLUSTER, tuple(members), statuses, unanswered or {})


THREE = [member(0xA), member(0xB), member(0xC)]


def test_quorum_is_a_majority() -> None:
    assert [quorum(n) for n in range(1, 7)] == [1, 2, 2, 3, 3, 4]


def test_status_parses_the_gateway_json() -> None:
    answer = {
        "header": {"cluster_id": "17300438976491492131", "member_id": "185828541645115251"},
        "leader": "3990370604368066554",
        "raftIndex": "8",
        "raftTerm": "2",
        "dbSize": "32768",
        "errors": ["etcdserver: no leader"],
    }
    parsed = MemberStatus.model_validate(answer)
    assert (parsed.member_id, parsed.leader, parsed.raft_index) == (
        185828541645115251,
        3990370604368066554,
        8,
    )
    assert (parsed.raft_term, parsed.db_size, parsed.is_learner) == (2, 32768, False)
    assert Member.model_validate({"ID": "10", "peerURLs": ["http://a:2380"]}).label == "a"


def test_healthy_cluster_is_ready_to_move_each_member() -> None:
    for target in ("ma", "mb", 0xC, "c"):
        result = ready_to_move(view(THREE), target)
        assert result.done, result
    assert ready_to_move(view(THREE), "mb").detail == (
        "3/3 members healthy, leader ma at raft index 100; moving mb leaves 2 healthy "
        "voters (quorum 2)"
    )


def test_an_unknown_member_is_refused_not_waited_for() -> None:
    with pytest.raises(PreconditionFailed, match=r"no member 'md'; its members are ma \(a\)"):
        ready_to_move(view(THREE), "md")


def test_a_silent_member_is_named_and_quorum_would_be_lost() -> None:
    silent = view(THREE, unanswered={0xC: "connection refused at http://10.0.1.12:2379"})
    assert ready_to_move(silent, "mb").items == (
        "member mc (c): did not answer (connection refused at http://10.0.1.12:2379)",
        "quorum: with mb down, 1 of 3 voters would be healthy; quorum needs 2",
    )
    # moving the silent member itself keeps quorum, but the cluster is still not healthy
    assert ready_to_move(silent, "mc").items == (
        "member mc (c): did not answer (connection refused at http://10.0.1.12:2379)",
    )


def test_lag_learners_errors_and_no_leader_are_named() -> None:
    members = [*THREE, member(0xD, learner=True), member(0xE), member(0xF)]
    statuses = {
        0xA: status(0xA, index=5000),
        0xB: status(0xB, index=4000),  # exactly at the limit: fine
        0xC: status(0xC, index=3999),
        0xD: status(0xD, index=5000, isLearner=True),
        0xE: status(0xE, index=5000, errors=["memberID:14 alarm:NOSPACE"]),
        0xF: status(0xF, index=5000, leader=0, errors=["etcdserver: no leader"]),
    }
    result = ready_to_move(view(members, statuses), "mb", max_raft_lag=1000)
    assert result.items == (
        "member mc (c): 1001 raft entries behind the leader (at most 1000)",
        "member md (d): is a learner, not a voter",
        "member me (e): reports memberID:14 alarm:NOSPACE",
        "member mf (f): has no leader",
        # 5 voters (the learner does not vote), quorum 3: only ma is healthy besides mb
        "quorum: with mb down, 1 of 5 voters would be healthy; quorum needs 3",
    )


def test_members_disagreeing_on_the_leader_are_not_ready() -> None:
    statuses = {0xA: status(0xA), 0xB: status(0xB), 0xC: status(0xC, leader=0xC)}
    items = ready_to_move(view(THREE, statuses), "mb").items
    assert "leader: members disagree (ma, mb follow ma; mc follow mc)" in items
    assert "leader: more than one member claims it (ma, mc)" in items


def test_a_member_answered_by_another_or_from_another_cluster_is_unhealthy() -> None:
    statuses = {
        0xA: status(0xA),
        0xB: status(0x99),
        0xC: MemberStatus(member_id=0xC, cluster_id=0xC2, leader=LEADER, raft_index=100),
    }
    assert ready_to_move(view(THREE, statuses), "ma").items == (
        "member mb (b): its client URL is answered by another member, 99",
        "member mc (c): belongs to another cluster, c2",
        "quorum: with ma down, 0 of 3 voters would be healthy; quorum needs 2",
    )


NEW = "http://10.1.0.12:2380"


def expectation(**kw: object) -> MoveExpectation:
    return expect_move(view(THREE), "mc", new_peer_url=NEW, **kw)  # type: ignore[arg-type]


def test_expect_move_records_id_count_and_old_addresses() -> None:
    expected = expectation(old_network="10.0.0.0/16")
    assert (expected.member_id, expected.name, expected.member_count) == (0xC, "mc", 3)
    assert expected.old_peer_urls == ("http://10.0.1.12:2380",)
    assert MoveExpectation.model_validate_json(expected.model_dump_json()) == expected


def test_member_back_reports_the_old_peer_url_then_passes() -> None:
    expected = expectation()
    assert member_back(view(THREE), expected).items == (
        f"member mc (c): peer URL is still http://10.0.1.12:2380, want {NEW}",
    )
    moved = [member(0xA), member(0xB), member(0xC, peer=NEW)]
    result = member_back(view(moved), expected)
    assert result.done, result
    assert result.detail == f"member mc (c) at {NEW}"


def test_member_back_waits_for_its_etcd_to_serve_at_the_new_address() -> None:
    """A peer URL moved while the member's etcd still runs where it was (its old instance
    not yet gone, the new one not yet booted) is not a member back."""
    expected = expectation()
    still = [member(0xA), member(0xB), member(0xC, peer=NEW, client="http://10.0.1.12:2379")]
    assert member_back(view(still), expected).items == (
        "member mc (c): still serves clients at http://10.0.1.12:2379, not at 10.1.0.12: "
        "its etcd has not started at its new address yet",
    )
    named = [member(0xA), member(0xB), member(0xC, peer=NEW, client="https://etcd-c.internal:4001")]
    assert member_back(view(named), expected).done  # a name is not resolved


def test_member_back_waits_for_the_member_to_catch_up_and_vote() -> None:
    moved = [member(0xA), member(0xB), member(0xC, peer=NEW, learner=True)]
    statuses = {0xA: status(0xA, index=9000), 0xB: status(0xB, index=9000), 0xC: status(0xC)}
    assert member_back(view(moved, statuses), expectation()).items == (
        "member mc (c): 8900 raft entries behind the leader (at most 1000)",
        "member mc (c): is a learner, not a voter",
    )


def test_member_back_names_peers_left_in_the_old_network_and_a_changed_count() -> None:
    moved = [member(0xA), member(0xB, peer="http://10.1.0.11:2380"), member(0xC, peer=NEW)]
    moved.append(member(0xD, peer="http://etcd-d.internal:2380"))  # a name: not resolved
    result = member_back(view(moved), expectation(old_network="10.0.0.0/16"))
    assert result.items == (
        "4 members, want 3 as before the move",
        "member ma (a): peer URL http://10.0.1.10:2380 is still in 10.0.0.0/16",
    )


def test_a_member_back_under_a_new_id_fails_at_once() -> None:
    replaced = [member(0xA), member(0xB), member(0xE, peer=NEW, name="mc")]
    with pytest.raises(StepFailedError, match="came back as a new member e instead of c"):
        member_back(view(replaced), expectation())
    unstarted = [member(0xA), member(0xB), Member(id=0xE, peer_urls=(NEW,))]
    with pytest.raises(StepFailedError, match="its data was lost"):
        member_back(view(unstarted), expectation())
    with pytest.raises(StepFailedError, match=r"mc \(c\) is no longer in the cluster"):
        member_back(view(THREE[:2]), expectation())
    impostor = {0xA: status(0xA), 0xB: status(0xB), 0xC: status(0xE)}
    with pytest.raises(StepFailedError, match="answered at its client URL by member e"):
        member_back(view(THREE, impostor), expectation())
