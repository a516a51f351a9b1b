"""Control plane: one single-instance ASG per etcd member, each with its own etcd volume.

Each member is placed in the source or the target network independently, which is how
the control plane moves one member per phase without losing etcd quorum. A member's
etcd volume stays put (same AZ in both networks); its network interface, launch
template and ASG are per placement: moving a member deletes the old set and creates
the new one, whose instance attaches the volume once the old instance has released it.
The member's interface has a fixed private address so DNS can point at it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import pulumi
import pulumi_aws as aws

from components.contract import userdata
from components.contract.naming import Namer
from components.contract.sides import TARGET, Side
from components.contract.tags import cluster_tags, merge_tags
from components.root_volume import root_volume


@dataclass(frozen=True)
class MemberPlacement:
    """Where one member lives: its network side and that network's ids."""

    index: int
    """1-based member number."""
    az: str
    """AZ of the member's etcd volume, the same on both sides."""
    side: Side
    subnet_id: pulumi.Input[str]
    """Private subnet of ``az`` on ``side``."""
    security_group_ids: list[pulumi.Input[str]]
    address: str
    """Fixed private address of the member's interface in this placement."""


@dataclass(frozen=True)
class ControlPlaneArgs:
    """Inputs of :class:`ControlPlane`."""

    namer: Namer
    """Names of members placed in the source network (and of the etcd volumes)."""
    members: list[MemberPlacement]
    instance_type: str
    image_id: str
    instance_profile_name: pulumi.Input[str]
    api_endpoint: str
    """URL the members' kubelets register with."""
    etcd_volume_size: int = 50
    """Size of each member's etcd volume, GiB."""
    etcd_volume_type: str = "gp3"
    root_volume_size: int | None = None
    """Size of each member's root volume, GiB; None: the image's."""
    target_suffix: str = ""
    """Suffix of the names of members placed in the target network (vpc-move)."""
    grants: Sequence[pulumi.Resource] = ()
    """What grants the members' role its permissions: a member's group launches after
    them, so its boot script may attach the member's volume and interface."""
    fixed_interfaces: bool = True
    """Each member gets a network interface at its fixed address, which its boot script
    attaches (its etcd's peer URL is that address). Off where kops's etcd-manager keeps
    membership: it names members by DNS, and the member's kept nodeup boots it."""
    protect_volumes: bool = True
    """The engine refuses to delete or replace the etcd volumes (off: a disposable
    mirror, torn down with its volumes)."""
    tags: dict[str, str] = field(default_factory=dict)


def placed_namer(namer: Namer, target_suffix: str, member: MemberPlacement) -> Namer:
    """The names of ``member`` where it is placed: the source network's keep ``namer``'s
    (live names included), the target network's carry ``target_suffix``."""
    return replace(namer, suffix=target_suffix) if member.side == TARGET else namer


def boots_own_script(namer: Namer, target_suffix: str, members: Sequence[MemberPlacement]) -> bool:
    """Whether some of ``members`` boots kubeshift's script: each does but a member of
    an adopted cluster that keeps its first tool's (``kubeshift:cluster.user_data``)."""
    return any(
        placed_namer(namer, target_suffix, m).kept_user_data(f"control-plane-{m.index}") is None
        for m in members
    )


class ControlPlane(pulumi.ComponentResource):
    """Members (volume + interface + launch template + ASG each)."""

    group_names: dict[int, pulumi.Output[str]]
    addresses: dict[int, pulumi.Output[str]]
    placements: dict[int, Side]

    def __init__(
        self, name: str, args: ControlPlaneArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("kubeshift:compute:ControlPlane", name, None, opts)
        self.group_names = {}
        self.addresses = {}
        self.placements = {}
        base_tags = merge_tags(args.tags, cluster_tags(args.namer.tag_id))
        for member in args.members:
            self._member(name, args, member, base_tags)
        self.register_outputs(
            {
                "group_names": {str(k): v for k, v in self.group_names.items()},
                "placements": {str(k): v for k, v in self.placements.items()},
            }
        )

    def _member(
        self, name: str, args: ControlPlaneArgs, m: MemberPlacement, base_tags: dict[str, str]
    ) -> None:
        child = pulumi.ResourceOptions(parent=self)
        stable = args.namer
        moved = m.side == TARGET
        placed = placed_namer(stable, args.target_suffix, m)
        side = f"-{args.target_suffix}" if moved else ""
        member_tags = merge_tags(
            base_tags,
            {"kubeshift.io/member": str(m.index), "k8s.io/role/master": "1"},
        )
        volume_name = stable.tag(f"etcd-{m.index}")
        volume = aws.ebs.Volume(
            f"{name}-etcd-{m.index}",
            availability_zone=m.az,
            size=args.etcd_volume_size,
            type=args.etcd_volume_type,
            encrypted=True,
            tags=merge_tags(member_tags, {"Name": volume_name}),
            opts=pulumi.ResourceOptions(
                parent=self, retain_on_delete=False, protect=args.protect_volumes
            ),
        )
        lt_name = placed.launch_template(f"control-plane-{m.index}")
        kept = placed.kept_user_data(f"control-plane-{m.index}")
        script: pulumi.Input[str]
        if not args.fixed_interfaces:  # kops's nodeup: its etcd-manager claims the volumes
            script = (
                userdata.encode(kept)
                if kept
                else volume.id.apply(lambda own: _member_script(args, own, None))
            )
        else:
            interface = aws.ec2.NetworkInterface(
                f"{name}-eni-{m.index}{side}",
                subnet_id=m.subnet_id,
                private_ips=[m.address],
                security_groups=m.security_group_ids,
                description=f"etcd member {m.index} of {args.namer.cluster}",
                tags=merge_tags(
                    member_tags,
                    {
                        "Name": placed.tag(f"control-plane-{m.index}"),
                        "kubeshift.io/network": m.side,
                    },
                ),
                opts=child,
            )
            self.addresses[m.index] = interface.private_ip
            script = (
                interface.id.apply(lambda own: userdata.encode(with_own_interface(kept, own)))
                if kept
                else pulumi.Output.all(volume.id, interface.id).apply(
                    lambda ids: _member_script(args, ids[0], ids[1])
                )
            )
        instance_tags = merge_tags(member_tags, {"Name": lt_name})
        lt = aws.ec2.LaunchTemplate(
            f"{name}-lt-{m.index}{side}",
            name=lt_name,
            image_id=args.image_id,
            instance_type=args.instance_type,
            user_data=script,
            iam_instance_profile={"name": args.instance_profile_name},
            vpc_security_group_ids=m.security_group_ids,
            metadata_options={"http_endpoint": "enabled", "http_tokens": "required"},
            block_device_mappings=root_volume(args.root_volume_size),
            tag_specifications=[{"resource_type": "instance", "tags": instance_tags}],
            update_default_version=True,
            tags=merge_tags(member_tags, {"Name": lt_name}),
            opts=child,
        )
        asg_name = placed.autoscaling_group(f"control-plane-{m.index}")
        group = aws.autoscaling.Group(
            f"{name}-asg-{m.index}{side}",
            name=asg_name,
            min_size=1,
            max_size=1,
            desired_capacity=1,
            vpc_zone_identifiers=[m.subnet_id],
            health_check_type="EC2",
            health_check_grace_period=600,
            launch_template={"id": lt.id, "version": lt.latest_version.apply(str)},
            tags=[
                {"key": k, "value": v, "propagate_at_launch": True}
                for k, v in sorted(
                    merge_tags(
                        member_tags, {"Name": asg_name, "kubeshift.io/network": m.side}
                    ).items()
                )
            ],
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=list(args.grants),
                ignore_changes=["targetGroupArns", "loadBalancers"],
            ),
        )
        self.group_names[m.index] = group.name
        self.placements[m.index] = m.side

    def group_names_on(self, side: Side) -> dict[str, pulumi.Output[str]]:
        """ASG names of the members placed on ``side``, by member number."""
        return {str(i): name for i, name in self.group_names.items() if self.placements[i] == side}


_INTERFACE_ID = re.compile(r"\beni-[0-9a-f]{8,17}\b")


def with_own_interface(script: str, interface_id: str) -> str:
    """A member's kept boot script, the interface it names by id (a Terraform module's
    attaches the member's fixed interface so) made the member's interface on this side:
    the one adopted on the side it was adopted, the moved member's new one in the
    network it moves to. A script that names none (kops's nodeup) is kept as it is."""
    if not interface_id:  # a preview before the interface exists
        return script
    return _INTERFACE_ID.sub(interface_id, script)


def _member_script(args: ControlPlaneArgs, volume_id: str, interface_id: str | None) -> str:
    """kubeshift's boot script for a member: attach its own volume and interface (its
    volume alone where it has no fixed interface)."""
    return userdata.encode(
        userdata.node_script(
            cluster_name=args.namer.tag_id,
            api_endpoint=args.api_endpoint,
            # No node-role label here: the kubelet refuses to start with one
            # (NodeRestriction, since 1.16); the cluster's controller labels
            # members from their role tag (k8s.io/role/master), as kops-controller does.
            labels={},
            taints=[(userdata.CONTROL_PLANE_ROLE, "", "NoSchedule")],
            role="control-plane",
            extra=userdata.member_attach_script(volume_id, interface_id),
        )
    )
