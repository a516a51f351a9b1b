"""vpc-move's etcd steps, as the control-plane phases run them, against a real etcd.

Three members listen where the stack places control-plane members 1-3 in the source
VPC (reached on loopback through ``runtime.etcd.address_map``, as in the sandbox). Each
phase's steps run in order — the before-gate, the record, then what the update does
(the old instance stops; the new one starts the member from the same data at its
target address), then the peer-URL hook and the after-gate — with a writer running
throughout.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from automation.config.clients import StaticClients
from automation.config.etcd_settings import EtcdSettings
from automation.config.settings import RuntimeSettings
from automation.core.errors import PreconditionFailed, StepFailedError
from automation.core.waiting import Pending
from automation.etcd.client import EtcdClient
from automation.model.context import HookContext
from automation.model.way_back import undo_id
from automation.sandbox.binaries import Binaries
from automation.sandbox.etcd_cluster import EtcdCluster, start_etcd_cluster
from automation.steps import etcd as steps
from components.contract.loading import load_config, load_stack_file
from components.contract.scenarios import vpc_move as ids
from tests.support.etcd_writer import Writer
from tests.support.waiting import eventually

REPO = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.etcd
ADDRESS_MAP = {"10.0.0.0/16": "127.100.0.0/16", "10.20.0.0/16": "127.120.0.0/16"}


def done(result: Pending) -> bool:
    return result.done


@dataclasses.dataclass
class Stage:
    cluster: EtcdCluster
    settings: EtcdSettings
    config: Any
    journal: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)

    def ctx(self, member: int, *, back: bool = False, **changes: Any) -> HookContext:
        """control-plane-<member>'s context, or with ``back`` its undo phase's."""
        moves = ids.control_plane_phase(member)
        phase = undo_id(moves) if back else moves
        context = HookContext(
            stack="local",
            scenario="vpc-move",
            phase=phase,
            clients=StaticClients(),
            settings=RuntimeSettings(etcd=self.settings),
            config=self.config,
            recorded=lambda key: self.journal.get(f"{phase}/{key}"),
        )
        return dataclasses.replace(context, **changes)

    def boot_on_target(self, member: int, *, back: bool = False) -> None:
        """What replacing the member's instance does: the old one stops; the new one
        attaches the same volume and starts the member at its target address (its
        source address, going back)."""
        _, target = steps.from_and_to(self.ctx(member, back=back), member)
        name = f"member-{member}"
        self.cluster.stop_member(name)
        self.cluster.members[name].peer_url = self.settings.peer_url(target)
        self.cluster.members[name].client_url = self.settings.client_url(target)
        self.cluster.spawn_member(name)


@pytest.fixture
def stage(testbin: Binaries, tmp_path: Path) -> Iterator[Stage]:
    config = load_config(load_stack_file(REPO / "stacks" / "Pulumi.local.yaml"))
    probe = EtcdSettings(scheme="http", address_map=ADDRESS_MAP)  # type: ignore[arg-type]
    members = config.cluster.control_plane.members
    hosts = {}
    for member in range(1, members + 1):
        ctx = HookContext("local", "vpc-move", ids.control_plane_phase(member),
                          StaticClients(), config=config)  # fmt: skip
        hosts[f"member-{member}"] = probe.reach(steps.addresses(ctx, member)[0])
    cluster = start_etcd_cluster(testbin.etcd, tmp_path / "etcd", hosts=hosts)
    first = next(iter(cluster.members.values()))
    settings = probe.model_copy(
        update={
            "client_port": int(first.client_url.rsplit(":", 1)[1]),
            "peer_port": int(first.peer_url.rsplit(":", 1)[1]),
        }
    )
    try:
        yield Stage(cluster, settings, config)
    finally:
        cluster.stop()


def run_phase(stage: Stage, member: int, *, back: bool = False) -> str:
    """The etcd steps of control-plane-<member> (or of its way back) in the phase's
    order; the peer hook's message."""
    ctx = stage.ctx(member, back=back)
    eventually(f"member {member} may go", lambda: steps.quorum_kept(ctx), until=done)
    record = steps.record_member(ctx)
    stage.journal[f"{ctx.phase}/before:{steps.RECORD_STEP}"] = record.details
    stage.boot_on_target(member, back=back)
    moved = eventually(
        "the peer URL update",
        lambda: steps.move_peer_url(ctx),
        until=lambda r: r.message != "",
    )
    again = steps.move_peer_url(ctx)
    assert (moved.changed, again.changed) == (True, False)
    eventually(f"member {member} back", lambda: steps.member_is_back(ctx), until=done)
    return moved.message


def test_every_member_moves_through_the_phase_steps_while_writes_go_on(stage: Stage) -> None:
    endpoints = [stage.settings.client_url(a) for m in (1, 2, 3)
                 for a in steps.addresses(stage.ctx(m), m)]  # fmt: skip
    with EtcdClient(endpoints) as client:
        writer = Writer(client, "/phases/")
        writer.start()
        try:
            messages = [run_phase(stage, member) for member in (1, 2, 3)]
        finally:
            writer.halt.set()
            writer.join(timeout=30)
        stored = eventually("the written keys", lambda: client.get_prefix("/phases/"))
    assert writer.failure is None, writer.failure
    lost = [key for key in writer.acked if stored.get(key.encode()) != key.encode()]
    assert not lost and len(writer.acked) > 100
    assert max(writer.latencies) < 10.0
    sys.stderr.write(
        f"\nthree member moves through the phase steps: {len(writer.acked)} writes acknowledged, "
        f"none lost, {writer.retries} retries, worst write {max(writer.latencies):.3f}s\n"
    )
    source, target = steps.addresses(stage.ctx(1), 1)
    assert (source.split(".")[:2], target.split(".")[:2]) == (["10", "0"], ["10", "20"])
    assert (
        f"from {stage.settings.peer_url(source)} to {stage.settings.peer_url(target)}"
        in (messages[0])
    )
    # After the last move no member is left in the source VPC: every peer URL moved.
    with EtcdClient(endpoints) as client:
        urls = {u for m in client.members() for u in m.peer_urls}
    assert all(u.startswith("http://127.120.") for u in urls), urls


def test_members_go_back_the_way_they_came_the_latest_first(stage: Stage) -> None:
    """control-plane-1 and -2, then their ways back, member 2 first: the same steps the
    other way, each member back under its ID at its source address; once member 1 is
    back no peer URL is left in the target VPC."""
    for member in (1, 2):
        run_phase(stage, member)
    ctx = stage.ctx(2, back=True)
    assert steps.going_back(ctx) and steps.moving_member(ctx) == 2
    messages = [run_phase(stage, member, back=True) for member in (2, 1)]
    source, target = steps.addresses(stage.ctx(1), 1)
    peer = stage.settings.peer_url
    assert f"from {peer(target)} to {peer(source)}" in messages[1]
    expected = steps.expectation(stage.ctx(1, back=True))
    assert expected.old_network is not None and str(expected.old_network).startswith("127.120.")
    assert peer(steps.addresses(stage.ctx(2), 2)[1]) in expected.old_peer_urls
    endpoints = [stage.settings.client_url(a) for m in (1, 2, 3)
                 for a in steps.addresses(stage.ctx(m), m)]  # fmt: skip
    with EtcdClient(endpoints) as client:
        urls = {u for m in client.members() for u in m.peer_urls}
    assert all(u.startswith("http://127.100.") for u in urls), urls


def test_a_stopped_member_stops_the_next_move_and_is_named(stage: Stage) -> None:
    stage.cluster.stop_member("member-2")
    waited = steps.quorum_kept(stage.ctx(1))
    assert not waited.done
    assert any("member-2" in item for item in waited.items), waited.items
    assert any("quorum" in item for item in waited.items), waited.items


def test_a_member_back_under_a_new_id_fails_the_after_gate(stage: Stage) -> None:
    ctx = stage.ctx(1)
    eventually("member 1 may go", lambda: steps.quorum_kept(ctx), until=done)
    stage.journal[f"{ctx.phase}/before:{steps.RECORD_STEP}"] = steps.record_member(ctx).details
    expected = steps.expectation(ctx)
    _, target = steps.addresses(ctx, 1)
    with EtcdClient(stage.cluster.endpoints[1:]) as client:  # its volume was lost:
        stage.cluster.wipe_member("member-1")  # it is removed and added afresh
        eventually("member 1 removed", lambda: client.remove_member(expected.member_id) or True)
        eventually("member 1 added", lambda: client.add_member([expected.peer_url]))
    with pytest.raises(StepFailedError, match="came back as a new member"):
        steps.member_is_back(ctx)
    assert target.startswith("10.20.")


def test_without_etcd_settings_or_the_record_the_steps_refuse_in_one_sentence(
    stage: Stage,
) -> None:
    bare = stage.ctx(1, settings=RuntimeSettings())
    with pytest.raises(PreconditionFailed, match=r"set kubeshift:runtime\.etcd"):
        steps.quorum_kept(bare)
    with pytest.raises(PreconditionFailed, match="holds no etcd record of phase"):
        steps.member_is_back(stage.ctx(1))
