"""vpc-move's control-plane steps where kops's etcd-manager keeps etcd's membership.

etcd-manager runs two etcd clusters on each member, main and events, and names every
member by DNS (``etcd-<name>`` and ``etcd-events-<name>`` under ``.internal.<cluster>``,
kept by dns-controller or by etcd-manager itself): a member that moves keeps its peer
URLs, so kubeshift writes none (a write would fight etcd-manager, which reconciles them
to its names). Its volumes, one per cluster, are claimed by tag in the member's AZ by
whichever instance runs etcd-manager there; its data, and so its member IDs, follow the
volumes.

- before the update: in both clusters every member healthy and caught up, and quorum
  kept with this member down (``etcd-quorum-kept``); then both members' IDs, peer URLs
  and the member counts are recorded in the journal (``record-etcd-member``);
- after it: the member's volumes held by a running instance in the network it moved to,
  and in both clusters the member back under the same ID, caught up, the count as
  before (``etcd-member-back``). A member back under a new ID lost its data: the gate
  stops at once.

The same steps take a member's move back, towards the source network.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from ipaddress import IPv4Address, IPv4Network

from automation.aws.etcd_volumes import VOLUME_TAGS, MemberVolume, member_volumes
from automation.core.errors import PreconditionFailed
from automation.core.waiting import Pending
from automation.etcd.client import EtcdClient
from automation.etcd.models import Member
from automation.etcd.moves import MoveExpectation, expect_move, member_back, ready_to_move
from automation.etcd.observe import ClusterView, observe
from automation.model.context import HookContext
from automation.model.phase import HookResult
from automation.steps.etcd import going_back, moving_member, recorded_before, settings
from components.contract.placement import etcd_manager_name

CLUSTERS = tuple(VOLUME_TAGS)
"""etcd-manager's two clusters: ``main``, then ``events``."""


def member_names(ctx: HookContext, member: int) -> dict[str, str]:
    """Control-plane member ``member``'s etcd member name in each cluster."""
    name = etcd_manager_name(ctx.stack_config.cluster.control_plane, member)
    return {"main": f"etcd-{name}", "events": f"etcd-events-{name}"}


@contextmanager
def clients(ctx: HookContext) -> Iterator[dict[str, EtcdClient]]:
    """A client per cluster, through ``runtime.etcd.endpoints`` and ``events_endpoints``."""
    etcd = settings(ctx)
    if not etcd.endpoints or not etcd.events_endpoints:
        raise PreconditionFailed(
            f"Phase '{ctx.phase}' moves a member of etcd-manager's main and events etcd and "
            "checks both first; set kubeshift:runtime.etcd.endpoints and events_endpoints "
            "(kops: ports 4001 and 4002 of the members' names)."
        )
    with ExitStack() as stack:
        yield {
            "main": stack.enter_context(etcd.client(etcd.endpoints)),
            "events": stack.enter_context(etcd.client(etcd.events_endpoints)),
        }


def find(view: ClusterView, cluster: str, name: str) -> Member:
    """The member ``name`` of the ``cluster`` etcd, by the name etcd-manager gives it."""
    found = view.find(name)
    if found is None:
        known = ", ".join(m.label for m in view.members) or "none"
        raise PreconditionFailed(
            f"The {cluster} etcd has no member {name} (its members: {known}); check "
            "kubeshift:cluster.control_plane.etcd_names against etcd-manager's."
        )
    return found


def quorum_kept(ctx: HookContext) -> Pending:
    """In both clusters: every member healthy and caught up, quorum kept with this one down."""
    names = member_names(ctx, moving_member(ctx))
    items: list[str] = []
    details: list[str] = []
    lag = settings(ctx).max_raft_lag
    with clients(ctx) as reached:
        for cluster, client in reached.items():
            view = observe(client)
            ready = ready_to_move(view, find(view, cluster, names[cluster]).id, max_raft_lag=lag)
            items += [f"{cluster} etcd: {item}" for item in ready.items]
            details.append(f"{cluster} etcd: {ready.detail}")
    return Pending.of(items, "; ".join(details))


def record_members(ctx: HookContext) -> HookResult:
    """Record what "back" will mean in each cluster: the member's ID, its peer URLs (its
    names: they do not change), the member count."""
    names = member_names(ctx, moving_member(ctx))
    expected: dict[str, MoveExpectation] = {}
    with clients(ctx) as reached:
        for cluster, client in reached.items():
            view = observe(client)
            found = find(view, cluster, names[cluster])
            if not found.peer_urls:
                raise PreconditionFailed(
                    f"The {cluster} etcd's member {names[cluster]} has no peer URL yet."
                )
            expected[cluster] = expect_move(view, found.id, new_peer_url=found.peer_urls[0])
    message = "; ".join(
        f"{cluster} etcd member {e.name} ({e.member_id:x}) stays at {e.peer_url}, "
        f"{e.member_count} members"
        for cluster, e in expected.items()
    )
    return HookResult(
        changed=False,
        message=f"{message}; etcd-manager brings it back from its volumes",
        details={"expectations": {c: e.model_dump(mode="json") for c, e in expected.items()}},
    )


def expectations(ctx: HookContext) -> dict[str, MoveExpectation]:
    """The records ``record-etcd-member`` left in the journal before the update."""
    recorded = recorded_before(ctx, "expectations", "etcd-manager")
    return {c: MoveExpectation.model_validate(e) for c, e in recorded.items()}


def members_back(ctx: HookContext) -> Pending:
    """The member's volumes on a running instance where it moved, and in both clusters
    the member back under its ID, caught up, as many members as before."""
    expected = expectations(ctx)
    member = moving_member(ctx)
    items = list(_volumes_follow(ctx, member))
    details: list[str] = []
    lag = settings(ctx).max_raft_lag
    with clients(ctx) as reached:
        for cluster, client in reached.items():
            if cluster not in expected:
                continue
            back = member_back(observe(client), expected[cluster], max_raft_lag=lag)
            items += [f"{cluster} etcd: {item}" for item in back.items]
            details.append(f"{cluster} etcd: {back.detail}")
    return Pending.of(items, "; ".join(details))


def destination(ctx: HookContext) -> IPv4Network:
    """The network the member goes to in this phase."""
    config = ctx.stack_config
    target = config.migration.target_network
    if target is None:
        raise PreconditionFailed(f"Phase '{ctx.phase}' needs a target network in the stack.")
    return config.cluster.network.cidr if going_back(ctx) else target.cidr


def _volumes_follow(ctx: HookContext, member: int) -> Iterator[str]:
    name = etcd_manager_name(ctx.stack_config.cluster.control_plane, member)
    volumes = member_volumes(
        ctx.clients.aws().ec2, cluster=ctx.stack_config.cluster.tag_id, member=name
    )
    network = destination(ctx)
    for etcd in CLUSTERS:
        mine = [v for v in volumes if v.etcd == etcd]
        if not mine:
            raise PreconditionFailed(
                f"No volume is tagged {VOLUME_TAGS[etcd]}={name}/… for cluster "
                f"{ctx.stack_config.cluster.tag_id}: etcd-manager could not claim member "
                f"{name}'s {etcd} etcd data."
            )
        for volume in mine:
            if waiting := _not_followed(volume, network):
                yield f"{etcd} volume {volume.volume_id}: {waiting}"


def _not_followed(volume: MemberVolume, network: IPv4Network) -> str:
    """Why ``volume`` is not yet held by a running instance in ``network`` ("" if it is)."""
    if volume.holder is None:
        return f"attached to no instance yet (etcd-manager claims it in {volume.zone})"
    if volume.holder_state != "running":
        return f"held by {volume.holder}, which is {volume.holder_state or 'gone'}"
    address = volume.holder_address
    if address is None or IPv4Address(address) not in network:
        return f"held by {volume.holder} at {address}, outside {network}"
    return ""
