"""Judge a ``ClusterView``: which members are unhealthy, and why, in short sortable items.

A member is healthy when it answered at its own client URL as itself and in this
cluster, is a voter, reports no error or alarm, follows the one leader everybody
follows, and its raft index is at most ``max_raft_lag`` entries behind the leader's.

``DEFAULT_MAX_RAFT_LAG`` is 1000 entries. A follower in ordinary log replication sits
a handful of entries behind; indexes read a few milliseconds apart on a busy cluster
(a Kubernetes control plane commits tens to hundreds of entries a second) differ by
far less than 1000. A member that is restarting, or still receiving a snapshot, lags
by thousands: etcd keeps only 5000 entries after a snapshot for slow followers
(``--snapshot-catchup-entries``) and refuses requests when a member's applied index
trails its commit index by more than 5000. 1000 sits well inside that regime, so a
member counted as caught up really is replicating from the log, and it does not flap.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from automation.etcd.models import Member, MemberStatus, hex_id
from automation.etcd.observe import ClusterView

DEFAULT_MAX_RAFT_LAG = 1000
_NO_LEADER = "etcdserver: no leader"


@dataclass(frozen=True)
class Health:
    """Problems per member ID, cluster-wide problems, and the leader's status if known."""

    members: dict[int, tuple[str, ...]]
    cluster: tuple[str, ...]
    leader: MemberStatus | None

    def healthy(self, member: Member) -> bool:
        return not self.members.get(member.id)

    @property
    def items(self) -> list[str]:
        return [*self.cluster, *(item for items in self.members.values() for item in items)]


def assess(view: ClusterView, *, max_raft_lag: int = DEFAULT_MAX_RAFT_LAG) -> Health:
    """Every member's problems and the cluster's, against the leader all agree on."""
    cluster, leader = _leader(view)
    problems: dict[int, list[str]] = defaultdict(list)
    for member in view.members:
        for problem in _member_problems(view, member, leader, max_raft_lag):
            problems[member.id].append(f"member {member.label}: {problem}")
    return Health({k: tuple(v) for k, v in problems.items()}, tuple(cluster), leader)


def _leader(view: ClusterView) -> tuple[list[str], MemberStatus | None]:
    """The leader's own status when exactly one is followed and it says so itself."""
    followed: dict[int, list[str]] = defaultdict(list)
    for member in view.members:
        status = view.statuses.get(member.id)
        if status is not None and status.leader:
            followed[status.leader].append(member.name or hex_id(member.id))
    claimants = [s for s in view.statuses.values() if s.is_leader]
    problems = []
    if len(followed) > 1:
        who = "; ".join(
            f"{', '.join(sorted(names))} follow {_name(view, leader_id)}"
            for leader_id, names in sorted(followed.items())
        )
        problems.append(f"leader: members disagree ({who})")
    if len(claimants) > 1:
        names = ", ".join(sorted(_name(view, s.member_id) for s in claimants))
        problems.append(f"leader: more than one member claims it ({names})")
    if len(followed) == 1 and len(claimants) <= 1:
        (leader_id,) = followed
        if view.member(leader_id) is None:
            problems.append(f"leader: {hex_id(leader_id)} is not in the member list")
        status = view.statuses.get(leader_id)
        if status is not None and status.is_leader and not problems:
            return problems, status
    return problems, None


def _member_problems(
    view: ClusterView, member: Member, leader: MemberStatus | None, max_raft_lag: int
) -> list[str]:
    status = view.statuses.get(member.id)
    if status is None:
        return [f"did not answer ({view.unanswered.get(member.id, 'not asked')})"]
    if status.member_id != member.id:
        return [f"its client URL is answered by another member, {hex_id(status.member_id)}"]
    if view.cluster_id and status.cluster_id != view.cluster_id:
        return [f"belongs to another cluster, {hex_id(status.cluster_id)}"]
    problems = []
    if member.is_learner or status.is_learner:
        problems.append("is a learner, not a voter")
    errors = [e for e in status.errors if e != _NO_LEADER]
    if errors:
        problems.append(f"reports {'; '.join(errors)}")
    if not status.leader:
        problems.append("has no leader")
    elif leader is not None and leader.raft_index - status.raft_index > max_raft_lag:
        behind = leader.raft_index - status.raft_index
        problems.append(f"{behind} raft entries behind the leader (at most {max_raft_lag})")
    return problems


def _name(view: ClusterView, member_id: int) -> str:
    member = view.member(member_id)
    return member.name if member is not None and member.name else hex_id(member_id)
