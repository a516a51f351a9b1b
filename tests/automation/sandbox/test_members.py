"""The sandbox's member boots: a real etcd member follows its volume from instance to
instance on moto, never running on two at once, and keeps its ID when it moves."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from automation.etcd.client import EtcdClient
from automation.etcd.observe import observe
from automation.sandbox.binaries import Binaries
from automation.sandbox.etcd_cluster import EtcdCluster
from automation.sandbox.instance_nodes import Instance
from automation.sandbox.member_plan import SandboxEtcd, SandboxMember, plan_members
from automation.sandbox.members import MemberBoots, boot_plan, described_member, start_members
from automation.sandbox.world.kops import nodeup_script
from components.contract.loading import load_config, load_stack_file
from components.contract.userdata import member_attach_script, node_script
from tests.support.moto_fixtures import MotoServer
from tests.support.waiting import eventually

REPO = Path(__file__).resolve().parents[3]
AMI = "ami-12c6146b"
pytestmark = [pytest.mark.moto, pytest.mark.etcd]


def test_the_plan_places_members_at_the_stacks_addresses_on_loopback_ranges() -> None:
    config = load_config(load_stack_file(REPO / "stacks" / "Pulumi.local.yaml"))
    plan = plan_members(config)
    assert plan is not None and len(plan.members) == config.cluster.control_plane.members
    settings = plan.settings()
    for member in plan.members:
        assert member.target is not None
        assert settings.reach(member.source).startswith("127.")
        assert settings.reach(member.target) != settings.reach(member.source)
    assert len(plan.client_urls()) == 2 * len(plan.members)
    other = load_config(load_stack_file(REPO / "stacks" / "Pulumi.cni-swap-example.yaml"))
    assert plan_members(other) is None


def test_the_boot_plan_is_read_from_the_user_data_kubeshift_renders() -> None:
    script = node_script(cluster_name="c", api_endpoint="https://api", labels={}, taints=[],
                         extra=member_attach_script("vol-0abc", "eni-0def"))  # fmt: skip
    plan = boot_plan(script)
    assert plan is not None and (plan.volume_id, plan.interface_id) == ("vol-0abc", "eni-0def")
    assert boot_plan("#!/bin/bash\nsystemctl enable --now kubelet\n") is None


def test_a_fixed_interface_names_its_member_as_kubeshift_or_a_module_describes_it() -> None:
    assert described_member({"Description": "etcd member 2 of demo"}) == "2"
    assert described_member({"Description": "demo-control-plane-etcd-3 peer address"}) == "3"
    assert described_member({"Description": "the NAT gateway's"}) == ""
    assert described_member({}) == ""


@dataclass
class World:
    ec2: Any
    subnets: dict[str, str]
    volume: str
    interfaces: dict[str, str]
    etcd: EtcdCluster
    plan: SandboxEtcd
    boots: MemberBoots

    def launch(
        self,
        side: str,
        volume: str | None = None,
        *,
        user_data: str = "",
        tags: dict[str, str] | None = None,
    ) -> str:
        """A member instance (``tags``: its tags; default kubeshift's member tag)."""
        script = member_attach_script(volume or self.volume, self.interfaces[side])
        tags = {"kubeshift.io/member": "1"} if tags is None else tags
        reply = self.ec2.run_instances(
            ImageId=AMI, MinCount=1, MaxCount=1, InstanceType="m5.large",
            SubnetId=self.subnets[side],
            UserData=user_data or node_script(cluster_name="c", api_endpoint="https://api",
                                              labels={}, taints=[], extra=script),
            TagSpecifications=[{"ResourceType": "instance",
                                "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}],
        )  # fmt: skip
        return str(reply["Instances"][0]["InstanceId"])

    def client(self) -> EtcdClient:
        return EtcdClient(self.plan.client_urls())


def _instances(ec2: Any) -> Iterator[Instance]:
    reply = ec2.describe_instances(Filters=[{"Name": "instance-state-name", "Values": ["running"]}])
    for reservation in reply["Reservations"]:
        for raw in reservation["Instances"]:
            yield Instance.from_ec2(raw)


def _user_data(ec2: Any) -> Any:
    def read(instance: Instance) -> str | None:
        reply = ec2.describe_instance_attribute(
            InstanceId=instance.instance_id, Attribute="userData"
        )
        return (reply.get("UserData") or {}).get("Value")

    return read


@pytest.fixture
def world(moto: MotoServer, testbin: Binaries, tmp_path: Path) -> Iterator[World]:
    ec2 = moto.client("ec2")
    zone = f"{moto.region}a"
    subnets, interfaces = {}, {}
    for side, cidr, address in (("source", "10.0.0.0/16", "10.0.1.10"),
                                ("target", "10.20.0.0/16", "10.20.1.10")):  # fmt: skip
        vpc = ec2.create_vpc(CidrBlock=cidr)["Vpc"]["VpcId"]
        subnet = ec2.create_subnet(VpcId=vpc, CidrBlock=cidr.replace("0.0/16", "1.0/24"),
                                   AvailabilityZone=zone)["Subnet"]["SubnetId"]  # fmt: skip
        subnets[side] = subnet
        interfaces[side] = ec2.create_network_interface(SubnetId=subnet, PrivateIpAddress=address)[
            "NetworkInterface"
        ]["NetworkInterfaceId"]
    volume = ec2.create_volume(AvailabilityZone=zone, Size=1)["VolumeId"]
    members = [
        SandboxMember(index=1, name="member-1", source="10.0.1.10", target="10.20.1.10"),
        SandboxMember(index=2, name="member-2", source="10.0.1.11", target="10.20.1.11"),
        SandboxMember(index=3, name="member-3", source="10.0.1.12", target="10.20.1.12"),
    ]
    address_map = {"10.0.0.0/16": "127.100.0.0/16", "10.20.0.0/16": "127.120.0.0/16"}
    etcd, _, plan = start_members(
        testbin.etcd, tmp_path / "members", SandboxEtcd(members=members, address_map=address_map)
    )
    boots = MemberBoots(ec2, etcd, plan, lambda: _instances(ec2), _user_data(ec2))
    try:
        yield World(ec2, subnets, volume, interfaces, etcd, plan, boots)
    finally:
        etcd.stop()


def test_a_member_follows_its_volume_to_the_new_instance_and_keeps_its_id(world: World) -> None:
    old = world.launch("source")
    assert world.boots.sync() == [f"member-1: instance {old} holds volume {world.volume}"]
    with world.client() as client:
        before = eventually("the members", lambda: {m.name: m.id for m in client.members()})
    new = world.launch("target")
    assert world.boots.sync() == []  # the old instance still holds the volume: wait
    assert world.boots.hosts["member-1"] == old and world.etcd.members["member-1"].running()

    world.ec2.terminate_instances(InstanceIds=[old])
    events = world.boots.sync()
    assert events[0] == f"member-1: instance {old} stopped running, so did etcd"
    assert events[1].startswith(f"member-1: booted on {new} at 10.20.1.10")
    member = world.etcd.members["member-1"]
    assert member.peer_url.startswith("http://127.120.1.10:")
    held = world.ec2.describe_volumes(VolumeIds=[world.volume])["Volumes"][0]["Attachments"]
    assert [a["InstanceId"] for a in held] == [new]

    with world.client() as client:  # what the phase's after-hook then does
        member_id, moved = before["member-1"], [member.peer_url]
        eventually("the peer URL update", lambda: client.update_peer_urls(member_id, moved))
        view = eventually(
            "member-1 back",
            lambda: observe(client),
            until=lambda v: len(v.statuses) == 3,
        )
    assert {m.name: m.id for m in view.members} == before
    assert world.boots.sync() == []  # settled: nothing more to do


def test_an_unknown_volume_starts_empty_as_a_lost_one_would(world: World) -> None:
    old = world.launch("source")
    world.boots.sync()
    fresh = world.ec2.create_volume(AvailabilityZone=f"{world.ec2.meta.region_name}a", Size=1)
    world.ec2.terminate_instances(InstanceIds=[old])
    new = world.launch("target", volume=fresh["VolumeId"])
    world.boots.sync()
    assert world.boots.hosts["member-1"] == new
    data = world.etcd.members["member-1"].data_dir
    assert data.name == fresh["VolumeId"] and data != world.boots.volumes[world.volume]


KOPS_MEMBER = {"k8s.io/role/master": "1", "kops.k8s.io/instancegroup": "master-a-1"}


def _describe_interfaces_as_member_1(world: World) -> None:
    for interface in world.interfaces.values():
        world.ec2.modify_network_interface_attribute(
            NetworkInterfaceId=interface, Description={"Value": "etcd member 1 of c"}
        )


def test_a_member_kops_boots_claims_its_volume_by_kops_etcd_tag_and_its_interface(
    world: World,
) -> None:
    nodeup = nodeup_script("master-a-1", "c.k8s.local", role="ControlPlane", config_hash="")
    untagged = world.launch("source", user_data=nodeup, tags=KOPS_MEMBER)
    assert world.boots.sync() == []  # no volume tagged for member 1 yet: it waits
    world.ec2.terminate_instances(InstanceIds=[untagged])
    world.ec2.create_tags(
        Resources=[world.volume], Tags=[{"Key": "k8s.io/etcd/main", "Value": "1/1,2,3"}]
    )
    _describe_interfaces_as_member_1(world)  # in each VPC: the one in its subnet is taken

    booted = world.launch("source", user_data=nodeup, tags=KOPS_MEMBER)
    assert world.boots.sync() == [f"member-1: instance {booted} holds volume {world.volume}"]
    held = world.ec2.describe_volumes(VolumeIds=[world.volume])["Volumes"][0]["Attachments"]
    assert [a["InstanceId"] for a in held] == [booted]
    interface = world.ec2.describe_network_interfaces(
        NetworkInterfaceIds=[world.interfaces["source"]]
    )["NetworkInterfaces"][0]
    assert interface["Attachment"]["InstanceId"] == booted


def test_a_member_kubeshift_moved_boots_the_adopted_groups_nodeup_in_the_target_subnet(
    world: World,
) -> None:
    """The moved member's group is kubeshift's (no kops tag names its instance group):
    nodeup's script names the group, and with it the member it runs."""
    nodeup = nodeup_script("master-a-1", "c.k8s.local", role="ControlPlane", config_hash="")
    world.ec2.create_tags(
        Resources=[world.volume], Tags=[{"Key": "k8s.io/etcd/main", "Value": "1/1,2,3"}]
    )
    _describe_interfaces_as_member_1(world)

    moved = world.launch("target", user_data=nodeup, tags={"k8s.io/role/master": "1"})
    events = world.boots.sync()

    assert [e for e in events if e.startswith(f"member-1: booted on {moved} at 10.20.1.10")]
    assert world.boots.hosts["member-1"] == moved
    interface = world.ec2.describe_network_interfaces(
        NetworkInterfaceIds=[world.interfaces["target"]]
    )["NetworkInterfaces"][0]
    assert interface["Attachment"]["InstanceId"] == moved


def test_a_member_kops_boots_attaches_its_events_volume_and_a_kubeshift_boot_leaves_it(
    world: World,
) -> None:
    zone = f"{world.ec2.meta.region_name}a"
    events = world.ec2.create_volume(
        AvailabilityZone=zone, Size=1,
        TagSpecifications=[{"ResourceType": "volume",
                            "Tags": [{"Key": "k8s.io/etcd/events", "Value": "1/1,2,3"}]}],
    )["VolumeId"]  # fmt: skip
    world.ec2.create_tags(
        Resources=[world.volume], Tags=[{"Key": "k8s.io/etcd/main", "Value": "1/1,2,3"}]
    )
    _describe_interfaces_as_member_1(world)
    nodeup = nodeup_script("master-a-1", "c.k8s.local", role="ControlPlane", config_hash="")
    booted = world.launch("source", user_data=nodeup, tags=KOPS_MEMBER)

    assert world.boots.sync() == [f"member-1: instance {booted} holds volume {world.volume}"]

    def holders(volume: str) -> list[str]:
        found = world.ec2.describe_volumes(VolumeIds=[volume])["Volumes"][0]
        return [a["InstanceId"] for a in found["Attachments"]]

    assert holders(events) == [booted]  # as etcd-manager attaches it
    world.ec2.terminate_instances(InstanceIds=[booted])
    moved = world.launch("target", tags={"Name": "member-1"})  # kubeshift's boot script
    assert world.boots.sync()[1].startswith(f"member-1: booted on {moved}")
    assert holders(world.volume) == [moved]
    assert moved not in holders(events)  # kubeshift moves the main etcd only


def test_a_member_kubeshift_boots_without_its_member_tag_is_told_by_its_interface(
    world: World,
) -> None:
    _describe_interfaces_as_member_1(world)
    old = world.launch("source", tags={"k8s.io/role/master": "1"})
    assert world.boots.sync() == [f"member-1: instance {old} holds volume {world.volume}"]
    world.ec2.terminate_instances(InstanceIds=[old])
    new = world.launch("target", tags={"Name": "member-1"})
    events = world.boots.sync()
    assert events[0] == f"member-1: instance {old} stopped running, so did etcd"
    assert events[1].startswith(f"member-1: booted on {new} at 10.20.1.10")


def test_etcd_managers_member_claims_both_volumes_and_follows_them_under_its_names(
    moto: MotoServer, testbin: Binaries, tmp_path: Path
) -> None:
    """kops's etcd-manager, as the sandbox plays it: a member's main and events etcd run
    from its two volumes (claimed by kops's tags in the instance's zone) under the
    member's names, which stay put; a second instance waits while the first holds them;
    once it is gone the new one claims both and both etcd members come back under their
    IDs at the same peer URLs."""
    ec2 = moto.client("ec2")
    zone = f"{moto.region}a"
    subnets = {}
    for side, cidr in (("source", "10.0.0.0/16"), ("target", "10.20.0.0/16")):
        vpc = ec2.create_vpc(CidrBlock=cidr)["Vpc"]["VpcId"]
        subnets[side] = ec2.create_subnet(
            VpcId=vpc, CidrBlock=cidr.replace("0.0/16", "1.0/24"), AvailabilityZone=zone
        )["Subnet"]["SubnetId"]
    volumes = {
        tag: ec2.create_volume(AvailabilityZone=zone, Size=1, TagSpecifications=[{
            "ResourceType": "volume", "Tags": [{"Key": tag, "Value": "1/1,2,3"}]}])["VolumeId"]
        for tag in ("k8s.io/etcd/main", "k8s.io/etcd/events")
    }  # fmt: skip
    members = [
        SandboxMember(index=k, name=f"etcd-{k}", events_name=f"etcd-events-{k}",
                      source=f"10.0.1.{9 + k}", target=f"10.20.1.{9 + k}")
        for k in (1, 2, 3)
    ]  # fmt: skip
    address_map = {"10.0.0.0/16": "127.100.0.0/16", "10.20.0.0/16": "127.120.0.0/16"}
    plan = SandboxEtcd(members=members, address_map=address_map, membership="etcd-manager")
    main, events, plan = start_members(testbin.etcd, tmp_path / "members", plan)
    assert events is not None
    boots = MemberBoots(ec2, main, plan, lambda: _instances(ec2), _user_data(ec2), events)
    nodeup = nodeup_script("master-a-1", "c.k8s.local", role="ControlPlane", config_hash="")

    def launch(side: str) -> str:
        reply = ec2.run_instances(
            ImageId=AMI, MinCount=1, MaxCount=1, SubnetId=subnets[side], UserData=nodeup,
            TagSpecifications=[{"ResourceType": "instance", "Tags": [
                {"Key": k, "Value": v} for k, v in KOPS_MEMBER.items()]}],
        )  # fmt: skip
        return str(reply["Instances"][0]["InstanceId"])

    def holders() -> set[str]:
        found = ec2.describe_volumes(VolumeIds=list(volumes.values()))["Volumes"]
        return {a["InstanceId"] for v in found for a in v["Attachments"]}

    def members_of(cluster: EtcdCluster) -> dict[str, tuple[int, tuple[str, ...]]]:
        with EtcdClient(cluster.endpoints) as client:
            return {m.name: (m.id, m.peer_urls) for m in client.members()}

    try:
        before = {"main": members_of(main), "events": members_of(events)}
        assert before["main"]["etcd-1"][1] == (f"http://127.90.0.1:{plan.peer_port}",)
        old = launch("source")
        first = boots.sync()
        assert first[0].startswith(f"etcd-1: instance {old} holds volumes") and holders() == {old}
        new = launch("target")
        assert boots.sync() == [] and holders() == {old}  # never two writers
        ec2.terminate_instances(InstanceIds=[old])
        moved = boots.sync()
        assert moved[0] == f"etcd-1: instance {old} stopped running, so did etcd"
        assert moved[1].startswith(f"etcd-1: instance {new} holds volumes")
        assert "started etcd-1 from" in moved[1] and "etcd-events-1 from" in moved[1]
        assert holders() == {new}
        for cluster in (main, events):
            cluster.wait_healthy()
        assert {"main": members_of(main), "events": members_of(events)} == before
    finally:
        main.stop()
        events.stop()
