"""The sandbox's control-plane members: a real three-member etcd, and each instance's boot.

A vpc-move stack's primary cluster runs on an etcd of one member per control-plane
member, each listening where the stack places that member in the source VPC — reached
on loopback through a fixed range map (``10.0.0.0/16`` -> ``127.100.0.0/16``), because
the sandbox has no VPC. The kube-apiserver reaches each member through a front that
follows it when it moves (``automation.sandbox.etcd_fronts``), as a name per member would.

moto runs no user data, so :class:`MemberBoots` plays what a member instance's boot
does (``components.contract.userdata.member_attach_script``): it reads the etcd volume and
network interface from the launch template's user data (a member kops's nodeup boots
claims its volume in its zone by kops's etcd tag, as etcd-manager does, and the
interface described as its member's), attaches the
volume once no running instance holds it (never two writers), attaches the interface,
and starts the member from that volume's data at the interface's address. When the
instance stops running, its member stops with it. A volume's data is a directory kept
by volume ID, so a member moved to a new instance keeps its ID; a volume the sandbox
has never seen starts empty, as a lost volume would.

Where kops's etcd-manager keeps membership (the kops world: ``SandboxEtcd.managed``),
each member runs a main and an events etcd under its names, which do not move: a member
instance nodeup boots claims both of the member's volumes by kops's tags in its zone
(never while another running instance holds one) and runs each etcd from its volume's
data, with no interface to attach (:meth:`MemberBoots._boot_managed`).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from automation.adoption.proposal import EVENTS_TAG
from automation.aws.lookup.model import tag_map
from automation.sandbox.boots import KubeEnv
from automation.sandbox.instance_nodes import Instance
from automation.sandbox.kubelet_flags import kops_role, user_data_text
from automation.sandbox.member_plan import SandboxEtcd, SandboxMember
from automation.sandbox.pacing import SLOWEST_SECONDS, Pace
from automation.sandbox.world.kops import ETCD_MAIN_TAG

if TYPE_CHECKING:
    from mypy_boto3_ec2 import EC2Client

    from automation.sandbox.etcd_cluster import EtcdCluster

log = logging.getLogger("kubeshift.sandbox.members")

MEMBER_TAG = "kubeshift.io/member"
KOPS_INSTANCE_GROUP = "kops.k8s.io/instancegroup"
_NUMBERED_GROUP = re.compile(r"-(\d+)$")
_DESCRIBED_MEMBER = re.compile(r"^(?:etcd member (\d+) of |\S+-etcd-(\d+) peer address$)")
"""kubeshift's description of a member's fixed interface, or a Terraform module's."""
RESPAWN_SECONDS = 15.0
_VOLUME = re.compile(r"--volume-id\s+'?(vol-[0-9a-f]+)")
_INTERFACE = re.compile(r"--network-interface-id\s+'?(eni-[0-9a-f]+)")
ETCD_TAGS = (ETCD_MAIN_TAG, EVENTS_TAG)
"""kops's tags on a member's two etcd volumes: main, then events."""


def start_members(
    binary: Path, workdir: Path, plan: SandboxEtcd
) -> tuple[EtcdCluster, EtcdCluster | None, SandboxEtcd]:
    """Start the members where they run first (their source addresses, or their names
    for etcd-manager's, with its events etcd beside); the plan with the ports chosen."""
    from automation.sandbox.etcd_cluster import start_etcd_cluster

    if plan.managed:
        hosts = {m.name: m.named_at for m in plan.members}
    else:
        reach = plan.settings()
        hosts = {m.name: reach.reach(m.source) for m in plan.members}
    cluster = start_etcd_cluster(binary, workdir, hosts=hosts)
    ports: dict[str, int] = dict(zip(("client_port", "peer_port"), _ports(cluster), strict=True))
    events = None
    if plan.managed:
        named = {m.events_name: m.named_at for m in plan.members}
        events = start_etcd_cluster(binary, workdir / "events", hosts=named)
        ports |= dict(zip(("events_client_port", "events_peer_port"), _ports(events), strict=True))
    return cluster, events, plan.model_copy(update=ports)


def _ports(cluster: EtcdCluster) -> tuple[int, int]:
    first = next(iter(cluster.members.values()))
    return int(first.client_url.rsplit(":", 1)[1]), int(first.peer_url.rsplit(":", 1)[1])


@dataclass(frozen=True)
class BootPlan:
    """What a member instance's user data attaches: its etcd volume and interface."""

    volume_id: str
    interface_id: str
    events_volume_id: str = ""
    """kops's: the member's events etcd volume, which etcd-manager attaches too."""


def described_member(interface: Mapping[str, Any]) -> str:
    """The member a fixed interface's description names (``etcd member <n> of …``)."""
    described = _DESCRIBED_MEMBER.match(interface.get("Description") or "")
    return (described.group(1) or described.group(2)) if described else ""


def boot_plan(user_data: str) -> BootPlan | None:
    """The volume and interface ``member_attach_script`` names, or None."""
    volume, interface = _VOLUME.search(user_data), _INTERFACE.search(user_data)
    if volume is None or interface is None:
        return None
    return BootPlan(volume.group(1), interface.group(1))


class MemberBoots:
    """Keeps each etcd member running on the instance that holds its volume."""

    def __init__(
        self,
        ec2: EC2Client,
        etcd: EtcdCluster,
        plan: SandboxEtcd,
        instances: Callable[[], Iterable[Instance]],
        user_data: Callable[[Instance], str | None],
        events: EtcdCluster | None = None,
    ) -> None:
        self._ec2 = ec2
        self._etcd = etcd
        self._events = events
        """etcd-manager's events etcd, whose members follow the main ones'."""
        self._plan = plan
        self._reach = plan.settings()
        self._instances = instances
        self._user_data = user_data
        self.hosts: dict[str, str] = {}
        """Member name -> the instance its process runs on."""
        self.addresses = {m.name: m.source for m in plan.members}
        self.volumes: dict[str, Path] = {}
        """Volume ID -> the data directory that plays its file system."""
        self._spawned: dict[str, float] = {}
        self._members: dict[str, str] = {}
        """Instance ID -> the member it runs, where no member tag says so."""

    def sync(self) -> list[str]:
        """One pass: stop members whose instance is gone, boot members on new ones."""
        running: dict[str, list[Instance]] = defaultdict(list)
        for instance in self._instances():
            number = self._member_of(instance)
            if number:
                running[number].append(instance)
        events: list[str] = []
        for member in self._plan.members:
            live = {i.instance_id: i for i in running[str(member.index)]}
            host = self.hosts.get(member.name)
            processes = self._processes(member)
            if host is not None and host not in live:
                for cluster, name in processes:
                    cluster.members[name].stop()
                del self.hosts[member.name]
                events.append(f"{member.name}: instance {host} stopped running, so did etcd")
                host = None
            candidates = sorted(live.values(), key=lambda i: i.instance_id)
            if host is None:
                boot = self._boot_managed if self._plan.managed else self._boot
                events += boot(member, candidates)
                continue
            exited = [(c, n) for c, n in processes if not c.members[n].running()]
            if exited and self._may_respawn(member.name):
                for cluster, name in exited:
                    cluster.spawn_member(name)
                    events.append(f"{name}: etcd exited on {host}; started it again")
        return events

    def _processes(self, member: SandboxMember) -> list[tuple[EtcdCluster, str]]:
        """The etcd processes a member's instance runs: its main one, and etcd-manager's
        events one where there is one."""
        found = [(self._etcd, member.name)]
        if self._events is not None and member.events_name:
            found.append((self._events, member.events_name))
        return found

    def _boot_managed(self, member: SandboxMember, candidates: list[Instance]) -> list[str]:
        """What etcd-manager does on a member's new instance: claim the member's main and
        events volumes in its zone by kops's tags (never while another running instance
        holds one), then run each etcd from its volume's data under the member's names."""
        for instance in candidates:
            text = user_data_text(self._user_data(instance))
            if kops_role(text) != "ControlPlane":
                continue
            plan = self._claimed(instance, interface=False)
            if plan is None or not plan.events_volume_id:
                continue
            if not self._attach_volume(instance.instance_id, plan.volume_id, "/dev/xvdu"):
                return []  # another running instance still holds it: wait
            if not self._attach_volume(instance.instance_id, plan.events_volume_id, "/dev/xvdv"):
                return []
            self.hosts[member.name] = instance.instance_id
            volumes = (plan.volume_id, plan.events_volume_id)
            started = []
            for (cluster, name), volume in zip(self._processes(member), volumes, strict=True):
                process = cluster.members[name]
                # still running from this volume's data (the instance it first ran on)
                if process.running() and self.volumes.get(volume, process.data_dir) == (
                    process.data_dir
                ):
                    self.volumes[volume] = process.data_dir
                    continue
                process.stop()
                process.data_dir = self.volumes.setdefault(
                    volume, self._etcd.workdir / "volumes" / volume
                )
                process.data_dir.parent.mkdir(parents=True, exist_ok=True)
                cluster.spawn_member(name)
                started.append(f"{name} from {volume}")
            self._spawned[member.name] = time.monotonic()
            return [
                f"{member.name}: instance {instance.instance_id} holds volumes "
                f"{', '.join(volumes)}" + (f"; started {', '.join(started)}" if started else "")
            ]
        return []

    def _boot(self, member: SandboxMember, candidates: list[Instance]) -> list[str]:
        name = member.name
        for instance in candidates:
            text = user_data_text(self._user_data(instance))
            plan = boot_plan(text)
            if plan is None and kops_role(text) == "ControlPlane":
                plan = self._claimed(instance)
            if plan is None:
                continue
            if not self._attach_volume(instance.instance_id, plan.volume_id):
                return []  # another running instance still holds it: wait
            events = plan.events_volume_id
            if events and not self._attach_volume(instance.instance_id, events, "/dev/xvdg"):
                return []
            address = self._attach_interface(instance.instance_id, plan.interface_id)
            if address is None:
                return []
            process = self._etcd.members[name]
            self.hosts[name] = instance.instance_id
            if process.running() and address == self.addresses[name]:
                self.volumes.setdefault(plan.volume_id, process.data_dir)
                return [f"{name}: instance {instance.instance_id} holds volume {plan.volume_id}"]
            process.stop()
            process.data_dir = self.volumes.setdefault(
                plan.volume_id, self._etcd.workdir / "volumes" / plan.volume_id
            )
            process.data_dir.parent.mkdir(parents=True, exist_ok=True)
            process.peer_url = self._reach.peer_url(address)
            process.client_url = self._reach.client_url(address)
            self.addresses[name] = address
            self._etcd.spawn_member(name)
            self._spawned[name] = time.monotonic()
            return [
                f"{name}: booted on {instance.instance_id} at {address} "
                f"(volume {plan.volume_id}, {process.peer_url})"
            ]
        return []

    def _member_of(self, instance: Instance) -> str:
        """The member an instance runs (``""``: none): kubeshift's member tag; else the
        number kops ends a member's instance group name with (``master-<zone>-<n>``), as
        its group's tag or its nodeup script names the group (a member kubeshift moved
        boots the adopted group's script from a group of kubeshift's); else, booted by
        kubeshift's script, the member its interface is described as."""
        if instance.tags.get(MEMBER_TAG):
            return instance.tags[MEMBER_TAG]
        if instance.instance_id in self._members:
            return self._members[instance.instance_id]
        member = ""
        group = _NUMBERED_GROUP.search(instance.tags.get(KOPS_INSTANCE_GROUP, ""))
        if group and "k8s.io/role/master" in instance.tags:
            member = group.group(1)
        else:
            text = user_data_text(self._user_data(instance))
            if not text:
                return ""  # not readable yet: asked again next pass
            env = KubeEnv.of(text)
            numbered = _NUMBERED_GROUP.search(env.group) if env else None
            if env is not None and env.role == "ControlPlane" and numbered:
                self._members[instance.instance_id] = numbered.group(1)
                return numbered.group(1)
            plan = boot_plan(text)
            if plan is not None:
                try:
                    found = self._ec2.describe_network_interfaces(
                        NetworkInterfaceIds=[plan.interface_id]
                    )["NetworkInterfaces"]
                except ClientError:
                    return ""  # asked again next pass
                member = described_member(found[0]) if found else ""
        self._members[instance.instance_id] = member
        return member

    def _claimed(self, instance: Instance, *, interface: bool = True) -> BootPlan | None:
        """What a member kops's nodeup boots attaches: etcd-manager claims the member's
        volumes in the instance's zone by kops's etcd tags (``<member>/<members>``: main,
        and events where the cluster has one). With ``interface``, a static member the
        sandbox also gives the interface described as its member's in its subnet, for the
        fixed address its etcd is reached at."""
        member = self._member_of(instance)
        volumes, events = (self._tagged_volumes(instance, member, tag) for tag in ETCD_TAGS)
        interfaces = [
            i
            for i in (
                self._ec2.describe_network_interfaces(
                    Filters=[{"Name": "subnet-id", "Values": [instance.subnet_id]}]
                )["NetworkInterfaces"]
                if interface
                else []
            )
            if described_member(i) == member
        ]
        if len(volumes) != 1 or len(interfaces) != int(interface) or len(events) > 1:
            return None
        events_id = events[0]["VolumeId"] if events else ""
        found = interfaces[0]["NetworkInterfaceId"] if interfaces else ""
        return BootPlan(volumes[0]["VolumeId"], found, events_id)

    def _tagged_volumes(self, instance: Instance, member: str, tag: str) -> list[Any]:
        """The volumes in the instance's zone that kops's ``tag`` gives to ``member``."""
        tagged: list[Any] = self._ec2.describe_volumes(
            Filters=[
                {"Name": "tag-key", "Values": [tag]},
                {"Name": "availability-zone", "Values": [instance.zone]},
            ]
        )["Volumes"]
        return [v for v in tagged if tag_map(v.get("Tags")).get(tag, "").split("/")[0] == member]

    def _attach_volume(self, instance_id: str, volume_id: str, device: str = "/dev/xvdf") -> bool:
        """Attach the volume unless a running instance holds it (what the boot retries)."""
        volume = self._ec2.describe_volumes(VolumeIds=[volume_id])["Volumes"][0]
        for attachment in volume.get("Attachments") or []:
            holder = attachment.get("InstanceId", "")
            if holder == instance_id:
                return True
            if self._running(holder):
                return False
            # AWS detaches a terminated instance's volumes; moto may keep the record.
            self._ec2.detach_volume(VolumeId=volume_id, InstanceId=holder, Force=True)
        self._ec2.attach_volume(VolumeId=volume_id, InstanceId=instance_id, Device=device)
        return True

    def _attach_interface(self, instance_id: str, interface_id: str) -> str | None:
        """Attach the member's interface; its fixed address, or None while it is held."""
        found = self._ec2.describe_network_interfaces(NetworkInterfaceIds=[interface_id])
        interface = found["NetworkInterfaces"][0]
        attachment = interface.get("Attachment") or {}
        holder = attachment.get("InstanceId", "")
        if holder != instance_id:
            if holder and self._running(holder):
                return None
            if holder:
                self._ec2.detach_network_interface(
                    AttachmentId=attachment["AttachmentId"], Force=True
                )
            self._ec2.attach_network_interface(
                NetworkInterfaceId=interface_id, InstanceId=instance_id, DeviceIndex=1
            )
        return str(interface["PrivateIpAddress"])

    def _running(self, instance_id: str) -> bool:
        try:
            reply = self._ec2.describe_instances(InstanceIds=[instance_id])
        except ClientError:
            return False
        states = [i["State"]["Name"] for r in reply["Reservations"] for i in r["Instances"]]
        return "running" in states

    def _may_respawn(self, name: str) -> bool:
        now = time.monotonic()
        if now - self._spawned.get(name, 0.0) < RESPAWN_SECONDS:
            return False
        self._spawned[name] = now
        return True

    def run(self, stop: threading.Event, interval: float = 1.0) -> None:
        """``sync`` until ``stop``; errors are logged, never fatal.

        Every ``interval`` seconds after a pass that booted or stopped a member (or
        failed), up to four times that while passes find nothing to do
        (:mod:`automation.sandbox.pacing`).
        """
        failing = ""
        pace = Pace(fastest=interval, slowest=max(interval, SLOWEST_SECONDS))
        while not stop.is_set():
            busy = True
            try:
                events = self.sync()
                for event in events:
                    log.info("%s", event)
                failing, busy = "", bool(events)
            except Exception as exc:
                message = f"{type(exc).__name__}: {exc}"
                if message != failing:
                    log.warning("member boots: pass failed, will retry: %s", message)
                failing = message
            stop.wait(pace.after(busy))
