"""Decisions around moving one member to a new address: may it go, and is it back.

Pure functions of a ``ClusterView`` answering ``Pending`` like every other gate: the
items name each member that is not ready and why. What cannot get better by waiting
(no such member; the member came back under a new ID, so its data was lost and it
joined afresh) raises instead, so the wait ends at once with one sentence.

Before the move, ``expect_move`` records what "back" means (the member's ID, its new
peer URL, the member count, the old addresses); ``member_back`` checks it afterwards.
The record is a pydantic model, so it can be kept between phases.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, IPvAnyNetwork

from automation.core.errors import PreconditionFailed, StepFailedError
from automation.core.waiting import Pending
from automation.etcd.health import DEFAULT_MAX_RAFT_LAG, assess
from automation.etcd.models import Member, hex_id
from automation.etcd.observe import ClusterView


def quorum(voters: int) -> int:
    """The votes raft needs out of ``voters``: floor(n/2)+1."""
    return voters // 2 + 1


def _target(view: ClusterView, member: str | int) -> Member:
    found = view.find(member)
    if found is None:
        known = ", ".join(m.label for m in view.members) or "none"
        raise PreconditionFailed(f"etcd has no member {member!r}; its members are {known}.")
    return found


def ready_to_move(
    view: ClusterView, member: str | int, *, max_raft_lag: int = DEFAULT_MAX_RAFT_LAG
) -> Pending:
    """Every member healthy (answers, voter, one agreed leader, caught up), and with
    ``member`` (a name or an ID) down the other healthy voters still form a quorum."""
    target = _target(view, member)
    health = assess(view, max_raft_lag=max_raft_lag)
    items = health.items
    voters = view.voters
    need = quorum(len(voters))
    remaining = [v for v in voters if v.id != target.id and health.healthy(v)]
    if len(remaining) < need:
        items.append(
            f"quorum: with {target.name or hex_id(target.id)} down, {len(remaining)} of "
            f"{len(voters)} voters would be healthy; quorum needs {need}"
        )
    healthy = sum(1 for m in view.members if health.healthy(m))
    lead = health.leader
    leader = (
        f"leader {_name(view, lead.member_id)} at raft index {lead.raft_index}"
        if lead is not None
        else "no agreed leader"
    )
    detail = (
        f"{healthy}/{len(view.members)} members healthy, {leader}; moving "
        f"{target.name or hex_id(target.id)} leaves {len(remaining)} healthy voters "
        f"(quorum {need})"
    )
    return Pending.of(items, detail)


class MoveExpectation(BaseModel):
    """What "the member is back" means, recorded before it moves (``expect_move``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    member_id: int = Field(ge=0, description="The member's ID; a new one means lost data.")
    name: str = Field(description="Its name, for messages and to spot a replacement.")
    peer_url: str = Field(description="Its peer URL after the move.")
    member_count: int = Field(ge=1, description="Members before the move.")
    old_network: IPvAnyNetwork | None = Field(
        default=None, description="The old VPC's CIDR: no peer URL may stay inside it."
    )
    old_peer_urls: tuple[str, ...] = Field(
        default=(), description="Peer URLs no member may keep (the member's before the move)."
    )


def expect_move(
    view: ClusterView,
    member: str | int,
    *,
    new_peer_url: str,
    old_network: str | None = None,
    moved_before: Iterable[str] = (),
) -> MoveExpectation:
    """Record, before moving ``member``, what ``member_back`` will check afterwards.

    ``old_network``: no member may keep a peer URL inside it (give it for the last
    move); ``moved_before``: old peer URLs of members moved earlier, which must stay gone.
    """
    target = _target(view, member)
    old = tuple(u for u in (*target.peer_urls, *moved_before) if not _same_url(u, new_peer_url))
    return MoveExpectation(
        member_id=target.id,
        name=target.name or hex_id(target.id),
        peer_url=new_peer_url,
        member_count=len(view.members),
        old_network=ipaddress.ip_network(old_network, strict=False) if old_network else None,
        old_peer_urls=old,
    )


def member_back(
    view: ClusterView,
    expected: MoveExpectation,
    *,
    max_raft_lag: int = DEFAULT_MAX_RAFT_LAG,
) -> Pending:
    """The member is back under the same ID at its new peer URL, a caught-up voter, the
    count is as before, every member healthy, and no peer URL is left at an old address.

    Raises ``StepFailedError`` when the member's ID is gone (a replacement under a new
    ID means its data was lost) or another member answers at its client URL.
    """
    target = view.member(expected.member_id)
    if target is None:
        raise StepFailedError(_lost(view, expected))
    status = view.statuses.get(target.id)
    if status is not None and status.member_id != target.id:
        raise StepFailedError(
            f"etcd member {expected.name} ({hex_id(target.id)}) is answered at its client "
            f"URL by member {hex_id(status.member_id)}: it came back as a new member, so its "
            "data was lost; stop it and restore its data volume."
        )
    items = assess(view, max_raft_lag=max_raft_lag).items
    moved = any(_same_url(u, expected.peer_url) for u in target.peer_urls)
    if not moved:
        was = ", ".join(target.peer_urls) or "none"
        items.append(f"member {target.label}: peer URL is still {was}, want {expected.peer_url}")
    elif elsewhere := _serving_elsewhere(target, expected):
        items.append(
            f"member {target.label}: still serves clients at {', '.join(elsewhere)}, not at "
            f"{urlsplit(expected.peer_url).hostname}: its etcd has not started at its new "
            "address yet"
        )
    if len(view.members) != expected.member_count:
        items.append(
            f"{len(view.members)} members, want {expected.member_count} as before the move"
        )
    for member in view.members:
        if member.id != target.id or moved:  # an unmoved target is named just above
            items.extend(_old_addresses(member, expected))
    detail = f"member {target.label} at {', '.join(target.peer_urls) or 'no peer URL'}"
    return Pending.of(items, detail)


def _lost(view: ClusterView, expected: MoveExpectation) -> str:
    """The sentence for a member whose ID is gone: replaced (new ID) or removed."""
    old = hex_id(expected.member_id)
    replacement = next(
        (
            m
            for m in view.members
            if (m.name and m.name == expected.name)
            or any(_same_url(u, expected.peer_url) for u in m.peer_urls)
        ),
        None,
    )
    if replacement is not None:
        return (
            f"etcd member {expected.name} came back as a new member {hex_id(replacement.id)} "
            f"instead of {old}: its data was lost and it joined the cluster afresh; restore "
            "its data volume rather than continue the move."
        )
    known = ", ".join(m.label for m in view.members) or "none"
    return (
        f"etcd member {expected.name} ({old}) is no longer in the cluster (members: {known}); "
        "it was removed during the move."
    )


def _serving_elsewhere(member: Member, expected: MoveExpectation) -> list[str]:
    """The member's client URLs, when every one is an address other than its new peer
    URL's: its peer URL was moved while its etcd still runs where it was (the old instance
    not yet gone). Empty when one is at the new address, or when names are involved (not
    resolved)."""
    new = _address(expected.peer_url)
    served = [_address(u) for u in member.client_urls]
    if new is None or not served or None in served:
        return []
    return [] if new in served else list(member.client_urls)


def _address(url: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The IP address a URL names; None for a name."""
    try:
        return ipaddress.ip_address(urlsplit(url).hostname or "")
    except ValueError:
        return None


def _old_addresses(member: Member, expected: MoveExpectation) -> Iterable[str]:
    for url in member.peer_urls:
        if any(_same_url(url, old) for old in expected.old_peer_urls):
            yield f"member {member.label}: peer URL {url} is its old address"
        elif expected.old_network is not None and _in_network(url, expected.old_network):
            yield f"member {member.label}: peer URL {url} is still in {expected.old_network}"


def _in_network(url: str, network: ipaddress.IPv4Network | ipaddress.IPv6Network) -> bool:
    """Whether the URL's host is an IP address inside ``network`` (names are not resolved)."""
    try:
        return ipaddress.ip_address(urlsplit(url).hostname or "") in network
    except ValueError:
        return False


def _same_url(a: str, b: str) -> bool:
    def norm(url: str) -> tuple[str, str, int | None]:
        parts = urlsplit(url.strip().rstrip("/"))
        return parts.scheme.lower(), (parts.hostname or "").lower(), parts.port

    return norm(a) == norm(b)


def _name(view: ClusterView, member_id: int) -> str:
    member = view.member(member_id)
    return member.name if member is not None and member.name else hex_id(member_id)
