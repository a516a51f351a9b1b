"""vpc-move's control-plane steps against etcd itself: may member k go, and is it back.

Control-plane member k runs etcd member k at its fixed address (``member_address``), so
its peer URL before the move is at its source address and after it at its target
address; kubeshift finds the etcd member by that URL, whatever the setup named it.

- before the update: every member healthy and caught up, and quorum kept with this one
  down (``etcd-quorum-kept``); then what "back" will mean is recorded in the journal
  (``record-etcd-member``: its ID, its new peer URL, the member count);
- after it (the old instance is gone, the new one attached the volume): the member's
  peer URL moves to its new address through the other members' quorum
  (``etcd-peer-url``), then the member must be back under the same ID, caught up, and
  neither it nor a member moved earlier left at its old address; after the last move,
  no peer URL at all in the source VPC (``etcd-member-back``).

Taking a member's phase back (``back-from-control-plane-k``) runs the same steps the
other way: from its target address to its source one, the members taken back earlier
(the later ones) kept off their target addresses, and once member 1 is back no peer
URL left in the target VPC.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from ipaddress import IPv4Network
from typing import Any

from automation.config.etcd_settings import EtcdSettings
from automation.core.errors import PreconditionFailed
from automation.core.waiting import Pending
from automation.etcd.client import EtcdClient
from automation.etcd.models import Member
from automation.etcd.moves import MoveExpectation, expect_move, member_back, ready_to_move
from automation.etcd.observe import ClusterView, observe
from automation.etcd.peers import update_peer_url
from automation.model.context import HookContext
from automation.model.phase import HookResult
from automation.model.way_back import taken_back
from components.contract.placement import member_address
from components.contract.scenarios import vpc_move as ids

RECORD_STEP = "record-etcd-member"
"""The before-hook whose journal details hold the member's ``MoveExpectation``."""


def settings(ctx: HookContext) -> EtcdSettings:
    """The stack's ``runtime.etcd``; a control-plane move does not go without it."""
    if ctx.settings.etcd is None:
        raise PreconditionFailed(
            f"Phase '{ctx.phase}' moves an etcd member and checks etcd itself first; set "
            "kubeshift:runtime.etcd (scheme, ports, ca_file/cert_file/key_file) in the stack."
        )
    return ctx.settings.etcd


def moving_member(ctx: HookContext) -> int:
    """The control-plane member this phase moves (or, taking its move back, moves back)."""
    member = ids.member_of_phase(taken_back(ctx.phase) or ctx.phase)
    if member is None:
        raise PreconditionFailed(f"Phase '{ctx.phase}' moves no control-plane member.")
    return member


def going_back(ctx: HookContext) -> bool:
    """This phase takes a member's move back: from its target address to its source."""
    return taken_back(ctx.phase) is not None


def from_and_to(ctx: HookContext, member: int) -> tuple[str, str]:
    """Member ``member``'s fixed address before this phase and after it."""
    source, target = addresses(ctx, member)
    return (target, source) if going_back(ctx) else (source, target)


def addresses(ctx: HookContext, member: int) -> tuple[str, str]:
    """Member ``member``'s fixed address in the source and in the target network."""
    config = ctx.stack_config
    cluster, cp = config.cluster, config.cluster.control_plane
    target = config.migration.target_network
    if target is None:
        raise PreconditionFailed(f"Phase '{ctx.phase}' needs a target network in the stack.")
    return (
        member_address(cp, cluster.network, cluster.network, member),
        member_address(cp, cluster.network, target, member),
    )


@contextmanager
def client(ctx: HookContext) -> Iterator[EtcdClient]:
    """A client that reaches etcd through the configured endpoints, then every member's
    own address on both sides (some of them moved, some not yet)."""
    etcd = settings(ctx)
    members = range(1, ctx.stack_config.cluster.control_plane.members + 1)
    own = [etcd.client_url(a) for m in members for a in addresses(ctx, m)]
    endpoints = list(dict.fromkeys([*etcd.endpoints, *own]))
    with etcd.client(endpoints) as made:
        yield made


def find_member(ctx: HookContext, view: ClusterView, member: int) -> Member:
    """The etcd member at control-plane member ``member``'s source or target peer URL."""
    etcd = settings(ctx)
    wanted = {etcd.peer_url(a) for a in addresses(ctx, member)}
    found = [m for m in view.members if wanted & {u.rstrip("/") for u in m.peer_urls}]
    if len(found) != 1:
        seen = "; ".join(f"{m.label} at {', '.join(m.peer_urls)}" for m in view.members)
        raise PreconditionFailed(
            f"etcd has {'no' if not found else 'more than one'} member at control-plane "
            f"member {member}'s peer URLs ({' or '.join(sorted(wanted))}); its members: "
            f"{seen or 'none'}."
        )
    return found[0]


def quorum_kept(ctx: HookContext) -> Pending:
    """Every member healthy and caught up, and quorum kept with the moving one down."""
    member = moving_member(ctx)
    with client(ctx) as etcd:
        view = observe(etcd)
        target = find_member(ctx, view, member)
        return ready_to_move(view, target.id, max_raft_lag=settings(ctx).max_raft_lag)


def record_member(ctx: HookContext) -> HookResult:
    """Record what "back" will mean: the member's ID, new peer URL, the member count."""
    member = moving_member(ctx)
    was, goes = from_and_to(ctx, member)
    etcd = settings(ctx)
    members = ctx.stack_config.cluster.control_plane.members
    if going_back(ctx):  # the later members went back before it; member 1 goes back last
        left = _target_network(ctx)
        last, earlier = member == 1, range(member + 1, members + 1)
    else:  # the earlier members moved before it; member ``members`` moves last
        left = ctx.stack_config.cluster.network.cidr
        last, earlier = member == members, range(1, member)
    with client(ctx) as made:
        view = observe(made)
        found = find_member(ctx, view, member)
        expected = expect_move(
            view,
            found.id,
            new_peer_url=etcd.peer_url(goes),
            # Members not moved yet stay where they are until their own phase.
            old_network=str(_reached_network(etcd, left)) if last else None,
            moved_before=[etcd.peer_url(from_and_to(ctx, m)[0]) for m in earlier],
        )
    return HookResult(
        changed=False,
        message=f"etcd member {expected.name} moves from {etcd.peer_url(was)} to "
        f"{expected.peer_url}; {expected.member_count} members",
        details={"expectation": expected.model_dump(mode="json")},
    )


def _target_network(ctx: HookContext) -> IPv4Network:
    target = ctx.stack_config.migration.target_network
    if target is None:
        raise PreconditionFailed(f"Phase '{ctx.phase}' needs a target network in the stack.")
    return target.cidr


def recorded_before(ctx: HookContext, key: str, what: str = "etcd") -> Any:
    """``key`` of what ``record-etcd-member`` left in the journal before the update; one
    sentence naming the command that records it when it is not there."""
    recorded = ctx.recorded(f"before:{RECORD_STEP}")
    if not recorded or key not in recorded:
        raise PreconditionFailed(
            f"The journal holds no {what} record of phase '{ctx.phase}' from before its update "
            f"(step before:{RECORD_STEP}); run `kubeshift --stack {ctx.stack} hooks "
            f"{ctx.phase} --before` on the machine that keeps the journal."
        )
    return recorded[key]


def expectation(ctx: HookContext) -> MoveExpectation:
    """The record ``record-etcd-member`` left in the journal before the update."""
    return MoveExpectation.model_validate(recorded_before(ctx, "expectation"))


def move_peer_url(ctx: HookContext) -> HookResult:
    """Point the moved member's peer URL at its new address (once; a dry run says so)."""
    expected = expectation(ctx)
    with client(ctx) as etcd:
        change = update_peer_url(etcd, expected.member_id, expected.peer_url, dry_run=ctx.dry_run)
    return HookResult(changed=change.changed, message=change.describe())


def member_is_back(ctx: HookContext) -> Pending:
    """Back under the same ID at its new peer URL, caught up, nothing left in the old VPC."""
    expected = expectation(ctx)
    with client(ctx) as etcd:
        return member_back(observe(etcd), expected, max_raft_lag=settings(ctx).max_raft_lag)


def _reached_network(etcd: EtcdSettings, cidr: IPv4Network) -> IPv4Network:
    return IPv4Network(f"{etcd.reach(str(cidr.network_address))}/{cidr.prefixlen}")
