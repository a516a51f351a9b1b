"""Control plane: per member an etcd volume, a fixed-address interface, an LT and an ASG of 1."""

from __future__ import annotations

import base64

from automation.review.render import record
from components.contract.naming import Namer
from components.control_plane import ControlPlane, ControlPlaneArgs, MemberPlacement
from tests.components.conftest import by_type


def _program(
    moved: int,
    root_volume_size: int | None = None,
    namer: Namer | None = None,
    fixed_interfaces: bool = True,
) -> None:
    members = [
        MemberPlacement(
            index=i,
            az=f"az{i}",
            side="target" if i <= moved else "source",
            subnet_id=f"subnet-{'t' if i <= moved else 's'}{i}",
            security_group_ids=["sg-cp", "sg-shared"],
            address=f"10.{20 if i <= moved else 0}.0.{9 + i}",
        )
        for i in (1, 2, 3)
    ]
    ControlPlane(
        "cp",
        ControlPlaneArgs(
            namer=namer or Namer("prod"),
            target_suffix="mig",
            members=members,
            instance_type="m5.large",
            image_id="ami-12345678",
            instance_profile_name="prod-control-plane-profile",
            api_endpoint="https://api:6443",
            root_volume_size=root_volume_size,
            fixed_interfaces=fixed_interfaces,
        ),
    )


def test_members_and_their_placement() -> None:
    resources = record(lambda: _program(moved=1)).resources
    groups = {g.inputs["name"]: g for g in by_type(resources, "aws:autoscaling/group:Group")}
    assert sorted(groups) == [
        "prod-control-plane-1-mig",
        "prod-control-plane-2",
        "prod-control-plane-3",
    ]
    for g in groups.values():
        assert (g.inputs["minSize"], g.inputs["maxSize"], g.inputs["desiredCapacity"]) == (1, 1, 1)
    assert groups["prod-control-plane-1-mig"].inputs["vpcZoneIdentifiers"] == ["subnet-t1"]
    volumes = by_type(resources, "aws:ebs/volume:Volume")
    assert sorted(v.name for v in volumes) == ["cp-etcd-1", "cp-etcd-2", "cp-etcd-3"]
    enis = {e.name: e for e in by_type(resources, "aws:ec2/networkInterface:NetworkInterface")}
    assert enis["cp-eni-1-mig"].inputs["privateIps"] == ["10.20.0.10"]
    lt = next(
        t
        for t in by_type(resources, "aws:ec2/launchTemplate:LaunchTemplate")
        if t.name == "cp-lt-1-mig"
    )
    script = base64.b64decode(lt.inputs["userData"]).decode()
    assert "--volume-id cp-etcd-1-id" in script
    assert "--network-interface-id cp-eni-1-mig-id" in script


def test_a_members_root_volume_is_the_images_unless_the_stack_sizes_it() -> None:
    def disks(size: int | None) -> list[object]:
        resources = record(lambda: _program(moved=0, root_volume_size=size)).resources
        return [
            t.inputs.get("blockDeviceMappings")
            for t in by_type(resources, "aws:ec2/launchTemplate:LaunchTemplate")
        ]

    assert disks(None) == [None, None, None]
    for mapping in disks(64):
        assert isinstance(mapping, list) and mapping[0]["ebs"]["volumeSize"] == 64
        assert mapping[0]["ebs"]["encrypted"] == "true"


def test_moving_a_member_keeps_its_volume_and_renames_the_rest() -> None:
    before = {r.name for r in record(lambda: _program(moved=0)).resources}
    after = {r.name for r in record(lambda: _program(moved=1)).resources}
    assert "cp-etcd-1" in before and "cp-etcd-1" in after
    assert before - after == {"cp-eni-1", "cp-lt-1", "cp-asg-1"}
    assert after - before == {"cp-eni-1-mig", "cp-lt-1-mig", "cp-asg-1-mig"}


def test_etcd_managers_members_have_no_fixed_interface_and_boot_kops_nodeup() -> None:
    """kops's etcd-manager names members by DNS and claims their volumes by tag: each
    member, on either side, boots the kept nodeup script as it is, with no interface."""
    nodeup = "#!/bin/bash\n# kops nodeup: etcd-manager claims k8s.io/etcd/main and events\n"
    kept = {f"prod-control-plane-{i}": nodeup for i in (1, 2, 3)}
    namer = Namer("prod", user_data=tuple(sorted(kept.items())))
    resources = record(lambda: _program(moved=1, namer=namer, fixed_interfaces=False)).resources
    assert by_type(resources, "aws:ec2/networkInterface:NetworkInterface") == []
    scripts = {
        t.name: base64.b64decode(t.inputs["userData"]).decode()
        for t in by_type(resources, "aws:ec2/launchTemplate:LaunchTemplate")
    }
    assert sorted(scripts) == ["cp-lt-1-mig", "cp-lt-2", "cp-lt-3"]
    assert set(scripts.values()) == {nodeup}
    assert len(by_type(resources, "aws:ebs/volume:Volume")) == 3
