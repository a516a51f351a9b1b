"""A volume or an interface belongs to one instance at a time, patched and unpatched."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from automation.sandbox.moto_gaps.attachments import (
    interfaces_attached_once,
    volumes_attached_once,
)
from tests.support.moto_fixtures import MotoServer


@pytest.fixture
def volumes_gap(monkeypatch: pytest.MonkeyPatch) -> None:
    from moto.ec2.responses.elastic_block_store import ElasticBlockStore

    for name in ("attach_volume", "detach_volume"):
        monkeypatch.setattr(ElasticBlockStore, name, getattr(ElasticBlockStore, name))
    volumes_attached_once()
    volumes_attached_once()  # idempotent: one wrapper


@pytest.fixture
def interfaces_gap(monkeypatch: pytest.MonkeyPatch) -> None:
    from moto.ec2.models.instances import Instance
    from moto.ec2.responses.elastic_network_interfaces import ElasticNetworkInterfaces

    monkeypatch.setattr(Instance, "terminate", Instance.terminate)
    monkeypatch.setattr(
        ElasticNetworkInterfaces,
        "attach_network_interface",
        ElasticNetworkInterfaces.attach_network_interface,
    )
    interfaces_attached_once()
    interfaces_attached_once()


def _instances(moto: MotoServer) -> tuple[Any, str, list[str], str]:
    """EC2, a subnet in zone a, two instances in it and one in zone b."""
    ec2 = moto.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.21.0.0/16")["Vpc"]["VpcId"]
    subnets = [
        ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.21.{i}.0/24", AvailabilityZone=zone)["Subnet"][
            "SubnetId"
        ]
        for i, zone in enumerate((f"{moto.region}a", f"{moto.region}b"))
    ]

    def launch(subnet: str, count: int) -> list[str]:
        reply = ec2.run_instances(
            ImageId="ami-12c6146b", MinCount=count, MaxCount=count, SubnetId=subnet
        )
        return [i["InstanceId"] for i in reply["Instances"]]

    return ec2, subnets[0], launch(subnets[0], 2), launch(subnets[1], 1)[0]


def _volume(ec2: Any, moto: MotoServer) -> str:
    return str(ec2.create_volume(Size=1, AvailabilityZone=f"{moto.region}a")["VolumeId"])


def _holder(ec2: Any, volume: str) -> str | None:
    attachments = ec2.describe_volumes(VolumeIds=[volume])["Volumes"][0]["Attachments"]
    return attachments[0]["InstanceId"] if attachments else None


def _refused(code: str, call: Any, **kwargs: Any) -> None:
    with pytest.raises(ClientError) as refused:
        call(**kwargs)
    assert refused.value.response["Error"]["Code"] == code


def test_a_volume_is_attached_to_one_instance_at_a_time(
    moto: MotoServer, volumes_gap: None
) -> None:
    ec2, _, (first, second), elsewhere = _instances(moto)
    volume, other = _volume(ec2, moto), _volume(ec2, moto)
    ec2.attach_volume(VolumeId=volume, InstanceId=first, Device="/dev/xvdf")
    _refused(
        "VolumeInUse", ec2.attach_volume, VolumeId=volume, InstanceId=second, Device="/dev/xvdf"
    )
    _refused(
        "InvalidParameterValue",
        ec2.attach_volume, VolumeId=other, InstanceId=first, Device="/dev/xvdf",
    )  # fmt: skip
    _refused(
        "InvalidVolume.ZoneMismatch",
        ec2.attach_volume, VolumeId=other, InstanceId=elsewhere, Device="/dev/xvdf",
    )  # fmt: skip
    _refused("InvalidAttachment.NotFound", ec2.detach_volume, VolumeId=volume, InstanceId=second)
    assert _holder(ec2, volume) == first

    ec2.detach_volume(VolumeId=volume)  # no instance named: from whichever holds it
    ec2.attach_volume(VolumeId=volume, InstanceId=second, Device="/dev/xvdf")
    ec2.terminate_instances(InstanceIds=[first])
    assert _holder(ec2, volume) == second  # the earlier holder's end leaves it be


def test_unpatched_moto_attaches_a_volume_twice_and_an_old_holder_takes_it_away(
    moto: MotoServer,
) -> None:
    ec2, _, (first, second), _ = _instances(moto)
    volume = _volume(ec2, moto)
    ec2.attach_volume(VolumeId=volume, InstanceId=first, Device="/dev/xvdf")
    ec2.attach_volume(VolumeId=volume, InstanceId=second, Device="/dev/xvdf")
    assert _holder(ec2, volume) == second
    ec2.terminate_instances(InstanceIds=[first])
    assert _holder(ec2, volume) is None


def _interface_holder(ec2: Any, interface: str) -> tuple[str, str | None]:
    found = ec2.describe_network_interfaces(NetworkInterfaceIds=[interface])
    described = found["NetworkInterfaces"][0]
    return described["Status"], (described.get("Attachment") or {}).get("InstanceId")


def test_an_interface_is_attached_to_one_instance_at_a_time_and_let_go_at_its_end(
    moto: MotoServer, interfaces_gap: None
) -> None:
    ec2, subnet, (first, second), _ = _instances(moto)
    interface, other = (
        ec2.create_network_interface(SubnetId=subnet)["NetworkInterface"]["NetworkInterfaceId"]
        for _ in range(2)
    )
    ec2.attach_network_interface(NetworkInterfaceId=interface, InstanceId=first, DeviceIndex=1)
    _refused(
        "InvalidNetworkInterface.InUse",
        ec2.attach_network_interface, NetworkInterfaceId=interface, InstanceId=second,
        DeviceIndex=1,
    )  # fmt: skip
    _refused(
        "InvalidParameterValue",
        ec2.attach_network_interface, NetworkInterfaceId=other, InstanceId=first, DeviceIndex=1,
    )  # fmt: skip
    ec2.terminate_instances(InstanceIds=[first])
    assert _interface_holder(ec2, interface) == ("available", None)
    ec2.attach_network_interface(NetworkInterfaceId=interface, InstanceId=second, DeviceIndex=1)
    assert _interface_holder(ec2, interface) == ("in-use", second)


def test_unpatched_moto_keeps_an_interface_on_its_terminated_instance(moto: MotoServer) -> None:
    ec2, subnet, (first, second), _ = _instances(moto)
    interface = ec2.create_network_interface(SubnetId=subnet)["NetworkInterface"][
        "NetworkInterfaceId"
    ]
    ec2.attach_network_interface(NetworkInterfaceId=interface, InstanceId=first, DeviceIndex=1)
    ec2.attach_network_interface(NetworkInterfaceId=interface, InstanceId=second, DeviceIndex=2)
    assert _interface_holder(ec2, interface) == ("in-use", second)  # moved, not refused
    ec2.terminate_instances(InstanceIds=[second])
    assert _interface_holder(ec2, interface) == ("in-use", second)
