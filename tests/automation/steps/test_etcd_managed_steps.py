"""vpc-move's control-plane steps where kops's etcd-manager keeps membership, against two
real etcd clusters (main and events, members named as etcd-manager names them) and
moto's EC2 holding each member's two volumes.

What the update does is played as etcd-manager would: the old instance terminates and
its members stop; the new instance, in the member's AZ of the network it moves to,
attaches both volumes (found by kops's tags) and starts both members from their data,
under the same IDs and peer URLs (names, which do not move).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from automation.aws.clients import AwsAccess, AwsClients
from automation.config.clients import StaticClients
from automation.config.etcd_settings import EtcdSettings
from automation.config.settings import RuntimeSettings
from automation.core.errors import PreconditionFailed
from automation.core.waiting import Pending
from automation.etcd.client import EtcdClient
from automation.model.context import HookContext
from automation.sandbox.binaries import Binaries
from automation.sandbox.etcd_cluster import EtcdCluster, start_etcd_cluster
from automation.scenarios import vpc_move
from automation.steps import etcd as static_steps
from automation.steps import etcd_managed as steps
from components.contract.loading import load_config, load_stack_file
from components.contract.placement import member_az
from components.contract.scenarios import vpc_move as ids
from tests.support.moto_fixtures import MotoServer
from tests.support.waiting import eventually

REPO = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.etcd


def done(result: Pending) -> bool:
    return result.done


def managed_config() -> Any:
    values = load_stack_file(REPO / "stacks" / "Pulumi.local.yaml")
    values["kubeshift:cluster"]["control_plane"]["membership"] = "etcd-manager"
    # kops's nodeup boots its members (the kept scripts adoption writes)
    values["kubeshift:cluster"]["user_data"] = {"local-demo-control-plane-1": "nodeup"}
    return load_config(values)


@dataclasses.dataclass
class Stage:
    etcd: dict[str, EtcdCluster]
    settings: EtcdSettings
    config: Any
    aws: AwsClients
    subnets: dict[tuple[str, str], str]
    """(network, AZ) -> private subnet, network ``source`` or ``target``."""
    holders: dict[int, str] = dataclasses.field(default_factory=dict)
    journal: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)

    def ctx(self, member: int, **changes: Any) -> HookContext:
        phase = ids.control_plane_phase(member)
        context = HookContext(
            stack="local",
            scenario="vpc-move",
            phase=phase,
            clients=StaticClients(aws=self.aws),
            settings=RuntimeSettings(etcd=self.settings),
            config=self.config,
            recorded=lambda key: self.journal.get(f"{phase}/{key}"),
        )
        return dataclasses.replace(context, **changes)

    def launch(self, member: int, network: str) -> str:
        az = member_az(self.config.cluster.control_plane, self.config.cluster.network, member)
        ec2 = self.aws.ec2
        reply = ec2.run_instances(ImageId="ami-12c6146b", MinCount=1, MaxCount=1,
                                  SubnetId=self.subnets[(network, az)])  # fmt: skip
        return str(reply["Instances"][0]["InstanceId"])

    def claim(self, member: int, instance: str) -> None:
        """etcd-manager on ``instance`` attaches the member's two volumes."""
        ec2 = self.aws.ec2
        for tag, device in (("k8s.io/etcd/main", "/dev/xvdu"), ("k8s.io/etcd/events", "/dev/xvdv")):
            volumes = ec2.describe_volumes(Filters=[{"Name": f"tag:{tag}",
                                                     "Values": [f"{member}/1,2,3"]}])  # fmt: skip
            for volume in volumes["Volumes"]:
                ec2.attach_volume(VolumeId=volume["VolumeId"], InstanceId=instance, Device=device)
        self.holders[member] = instance

    def stop_old(self, member: int) -> None:
        """The old instance terminates: its members stop, its volumes come free."""
        for name, cluster in self.etcd.items():
            cluster.stop_member(member_name(name, member))
        old = self.holders.pop(member)
        ec2 = self.aws.ec2
        for volume in ec2.describe_volumes(
            Filters=[{"Name": "attachment.instance-id", "Values": [old]}]
        )["Volumes"]:
            ec2.detach_volume(VolumeId=volume["VolumeId"], InstanceId=old, Force=True)
        ec2.terminate_instances(InstanceIds=[old])

    def boot_new(self, member: int) -> None:
        """The new instance claims the volumes and starts both members from them."""
        self.claim(member, self.launch(member, "target"))
        for name, cluster in self.etcd.items():
            cluster.spawn_member(member_name(name, member))


def member_name(cluster: str, member: int) -> str:
    return f"etcd-{member}" if cluster == "main" else f"etcd-events-{member}"


@pytest.fixture
def stage(testbin: Binaries, tmp_path: Path, moto: MotoServer) -> Iterator[Stage]:
    config = managed_config()
    etcd: dict[str, EtcdCluster] = {}
    try:
        for cluster in ("main", "events"):
            hosts = {member_name(cluster, m): "127.0.0.1" for m in (1, 2, 3)}
            etcd[cluster] = start_etcd_cluster(testbin.etcd, tmp_path / cluster, hosts=hosts)
        settings = EtcdSettings(
            scheme="http",
            endpoints=etcd["main"].endpoints,
            events_endpoints=etcd["events"].endpoints,
        )
        aws = AwsClients(AwsAccess(region="us-west-2", endpoint_url=moto.endpoint_url))
        stage = Stage(etcd, settings, config, aws, _networks(aws, config))
        for member in (1, 2, 3):
            az = member_az(config.cluster.control_plane, config.cluster.network, member)
            owned = {"Key": f"kubernetes.io/cluster/{config.cluster.tag_id}", "Value": "owned"}
            for tag in ("k8s.io/etcd/main", "k8s.io/etcd/events"):
                aws.ec2.create_volume(AvailabilityZone=az, Size=20, TagSpecifications=[{
                    "ResourceType": "volume",
                    "Tags": [{"Key": tag, "Value": f"{member}/1,2,3"},
                             owned],
                }])  # fmt: skip
            stage.claim(member, stage.launch(member, "source"))
        yield stage
    finally:
        for cluster in etcd.values():
            cluster.stop()


def _networks(aws: AwsClients, config: Any) -> dict[tuple[str, str], str]:
    subnets = {}
    target = config.migration.target_network
    for network, cfg in (("source", config.cluster.network), ("target", target)):
        vpc = aws.ec2.create_vpc(CidrBlock=str(cfg.cidr))["Vpc"]["VpcId"]
        for az, cidr in zip(cfg.azs, cfg.private_subnets, strict=True):
            subnet = aws.ec2.create_subnet(VpcId=vpc, CidrBlock=str(cidr), AvailabilityZone=az)
            subnets[(network, az)] = subnet["Subnet"]["SubnetId"]
    return subnets


def ids_of(stage: Stage) -> dict[str, dict[str, int]]:
    found = {}
    for cluster, running in stage.etcd.items():
        with EtcdClient(running.endpoints) as client:
            found[cluster] = {m.name: m.id for m in client.members()}
    return found


def run_phase(stage: Stage, member: int) -> tuple[str, Pending]:
    """control-plane-<member>'s etcd steps in the phase's order; the record's message and
    what the after-gate said while the old instance still held the volumes."""
    ctx = stage.ctx(member)
    eventually(f"member {member} may go", lambda: steps.quorum_kept(ctx), until=done)
    record = steps.record_members(ctx)
    stage.journal[f"{ctx.phase}/before:{static_steps.RECORD_STEP}"] = record.details
    early = steps.members_back(ctx)
    stage.stop_old(member)
    stage.boot_new(member)
    eventually(f"member {member} back", lambda: steps.members_back(ctx), until=done)
    return record.message, early


def test_every_member_moves_with_both_clusters_kept_and_no_peer_url_written(
    stage: Stage,
) -> None:
    before = ids_of(stage)
    peers = {}
    for cluster, running in stage.etcd.items():
        with EtcdClient(running.endpoints) as client:
            peers[cluster] = {m.name: m.peer_urls for m in client.members()}
    outcomes = [run_phase(stage, member) for member in (1, 2, 3)]
    assert ids_of(stage) == before
    for cluster, running in stage.etcd.items():
        with EtcdClient(running.endpoints) as client:
            assert {m.name: m.peer_urls for m in client.members()} == peers[cluster]
    message, early = outcomes[0]
    assert "main etcd member etcd-1" in message and "events etcd member etcd-events-1" in message
    # Before the update the old instance, in the source network, holds both volumes: the
    # after-gate waits for them to follow the member.
    assert sum("outside 10.20.0.0/16" in item for item in early.items) == 2, early.items


def test_events_quorum_refuses_a_second_member_while_the_first_is_not_back(
    stage: Stage,
) -> None:
    """The wrong order: member 1's events etcd is not back yet. The main etcd alone would
    let member 2 go; the events etcd would lose quorum, and the gate names it."""
    eventually("both clusters settled", lambda: steps.quorum_kept(stage.ctx(2)), until=done)
    stage.etcd["events"].stop_member("etcd-events-1")
    waited = steps.quorum_kept(stage.ctx(2))
    assert not waited.done
    assert all(item.startswith("events etcd: ") for item in waited.items), waited.items
    assert any("quorum" in item for item in waited.items), waited.items


def test_a_member_whose_volumes_stay_behind_is_not_back(stage: Stage) -> None:
    """The member's etcd processes answer again, but the volumes are on no instance in
    the network it moved to (its new instance never claimed them): not back."""
    ctx = stage.ctx(1)
    record = steps.record_members(ctx)
    stage.journal[f"{ctx.phase}/before:{static_steps.RECORD_STEP}"] = record.details
    stage.stop_old(1)
    for name, cluster in stage.etcd.items():
        cluster.spawn_member(member_name(name, 1))
    stage.etcd["main"].wait_healthy()
    waited = steps.members_back(ctx)
    assert not waited.done
    assert sum("attached to no instance yet" in i for i in waited.items) == 2, waited.items


def test_the_phase_writes_no_peer_url_and_needs_no_fixed_address() -> None:
    phase = next(
        p for p in vpc_move.scenario(managed_config()).phases
        if p.id == ids.control_plane_phase(2)
    )  # fmt: skip
    names = [step.name for step in (*phase.before, *phase.after)]
    assert "etcd-peer-url" not in names and "member-address-free" not in names
    assert names.index("etcd-quorum-kept") < names.index("record-etcd-member")
    assert "etcd-member-back" in names


def test_without_the_events_endpoints_the_steps_refuse_in_one_sentence(stage: Stage) -> None:
    bare = stage.ctx(
        1, settings=RuntimeSettings(etcd=EtcdSettings(endpoints=["http://127.0.0.1:1"]))
    )
    with pytest.raises(PreconditionFailed, match="events_endpoints"):
        steps.quorum_kept(bare)
    with pytest.raises(PreconditionFailed, match="no etcd-manager record"):
        steps.members_back(stage.ctx(1))


def test_the_api_probe_finds_etcd_managers_member_by_the_volume_its_instance_holds(
    stage: Stage,
) -> None:
    """Where the API record reaches an instance, the probe asks the etcd member whose
    main volume that instance holds (through the endpoints: its names do not resolve
    here); an instance holding none, or whose member is down, does not count."""
    from automation.aws.etcd_volumes import member_at
    from automation.steps.api_probe import managed_member_answers

    ec2 = stage.aws.ec2
    holder = stage.holders[2]
    reply = ec2.describe_instances(InstanceIds=[holder])
    address = reply["Reservations"][0]["Instances"][0]["PrivateIpAddress"]
    assert member_at(ec2, address) == "2"
    known: dict[str, str] = {}
    assert managed_member_answers(stage.aws, stage.settings, address, known)
    assert known == {address: "2"}  # found once: the next poll asks etcd alone
    stranger = stage.launch(1, "source")
    reply = ec2.describe_instances(InstanceIds=[stranger])
    other = reply["Reservations"][0]["Instances"][0]["PrivateIpAddress"]
    assert member_at(ec2, other) is None
    assert not managed_member_answers(stage.aws, stage.settings, other)
    stage.etcd["main"].stop_member("etcd-2")
    assert not managed_member_answers(stage.aws, stage.settings, address)
