"""One snapshot of the cluster: the agreed member list and every member's own status.

Each member is asked at the client URLs it advertises (as ``etcdctl endpoint status
--cluster`` does), all at once, so the raft indexes compared later were read within
the same few milliseconds. A member that cannot answer for now is recorded with the
short reason; a permanent error (a TLS file etcd refuses) propagates.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from automation.core.errors import RetryableError
from automation.etcd.client import EtcdClient
from automation.etcd.gateway import EtcdUnavailable
from automation.etcd.models import Member, MemberStatus, hex_id


@dataclass(frozen=True)
class ClusterView:
    """What the decisions judge: members, their statuses, and why some did not answer."""

    cluster_id: int
    members: tuple[Member, ...]
    statuses: Mapping[int, MemberStatus] = field(default_factory=dict)
    unanswered: Mapping[int, str] = field(default_factory=dict)

    def member(self, member_id: int) -> Member | None:
        return next((m for m in self.members if m.id == member_id), None)

    def find(self, member: str | int) -> Member | None:
        """By ID (an int, or etcdctl's hex form), else by name."""
        if isinstance(member, int):
            return self.member(member)
        by_name = next((m for m in self.members if m.name and m.name == member), None)
        return by_name or next((m for m in self.members if hex_id(m.id) == member.lower()), None)

    @property
    def voters(self) -> tuple[Member, ...]:
        return tuple(m for m in self.members if not m.is_learner)


def observe(client: EtcdClient) -> ClusterView:
    """The member list (linearizable) and each member's status, asked concurrently."""
    membership = client.membership()
    members = membership.members
    statuses: dict[int, MemberStatus] = {}
    unanswered: dict[int, str] = {}
    if members:
        with ThreadPoolExecutor(max_workers=min(len(members), 8)) as pool:
            answers = list(pool.map(lambda m: _status(client, m), members))
        for member, answer in zip(members, answers, strict=True):
            if isinstance(answer, MemberStatus):
                statuses[member.id] = answer
            else:
                unanswered[member.id] = answer
    return ClusterView(membership.cluster_id, members, statuses, unanswered)


def _status(client: EtcdClient, member: Member) -> MemberStatus | str:
    """The member's status from the first of its client URLs that answers, or why not."""
    if not member.client_urls:
        return "not started yet (no client URL)"
    reasons = []
    for url in member.client_urls:
        try:
            return client.status(url)
        except EtcdUnavailable as exc:
            reasons.append(f"{exc.reason} at {url}")
        except RetryableError as exc:
            reasons.append(f"{exc} at {url}")
    return "; ".join(reasons)
