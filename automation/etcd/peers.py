"""Point a member's peer URLs at its new address: idempotent, with a dry run.

etcd's procedure for a member changing address is to update its peer URLs through
the cluster first, then restart it listening on the new address (its data directory
keeps its ID). Peers learn the new URL through raft, so the update needs a quorum of
the *other* members and is safe while the member itself is down.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from automation.core.errors import PreconditionFailed
from automation.etcd.client import EtcdClient
from automation.etcd.models import hex_id

PeerUrlAction = Literal["unchanged", "updated", "would-update"]


@dataclass(frozen=True)
class PeerUrlChange:
    """What ``update_peer_url`` did (or, in a dry run, would do)."""

    member: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    action: PeerUrlAction

    @property
    def changed(self) -> bool:
        return self.action == "updated"

    def describe(self) -> str:
        was, now = ", ".join(self.before) or "none", ", ".join(self.after)
        if self.action == "unchanged":
            return f"etcd member {self.member} already has peer URL {now}."
        verb = "would change" if self.action == "would-update" else "changed"
        return f"{verb.capitalize()} etcd member {self.member}'s peer URL from {was} to {now}."


def update_peer_url(
    client: EtcdClient,
    member_id: int,
    url: str | Sequence[str],
    *,
    dry_run: bool = False,
) -> PeerUrlChange:
    """Set member ``member_id``'s peer URLs to ``url``, unless they are that already."""
    wanted = (url,) if isinstance(url, str) else tuple(url)
    member = next((m for m in client.members() if m.id == member_id), None)
    if member is None:
        raise PreconditionFailed(
            f"etcd has no member {hex_id(member_id)} whose peer URL could be updated."
        )
    if set(member.peer_urls) == set(wanted):
        return PeerUrlChange(member.label, member.peer_urls, wanted, "unchanged")
    if dry_run:
        return PeerUrlChange(member.label, member.peer_urls, wanted, "would-update")
    client.update_peer_urls(member_id, wanted)
    return PeerUrlChange(member.label, member.peer_urls, wanted, "updated")
