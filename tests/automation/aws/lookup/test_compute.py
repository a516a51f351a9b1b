"""Launch templates, groups, their target groups, volumes and interfaces, on moto."""

from __future__ import annotations

from typing import Any

import pytest

from automation.aws.lookup import Ambiguous, Lookup, Missing, find
from tests.support.moto_fixtures import MotoServer

AMI = "ami-12c6146b"


def _subnet(ec2: Any) -> tuple[str, str]:
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.64.0/19", AvailabilityZone="eu-west-1a")
    return vpc, subnet["Subnet"]["SubnetId"]


def test_template_group_and_attachment(moto: MotoServer, lookup: Lookup) -> None:
    ec2, autoscaling, elbv2 = (moto.client(s) for s in ("ec2", "autoscaling", "elbv2"))
    vpc, subnet = _subnet(ec2)
    template = ec2.create_launch_template(
        LaunchTemplateName="shop-general", LaunchTemplateData={"ImageId": AMI}
    )["LaunchTemplate"]["LaunchTemplateId"]
    autoscaling.create_auto_scaling_group(
        AutoScalingGroupName="shop-general-a", MinSize=0, MaxSize=1, DesiredCapacity=0,
        LaunchTemplate={"LaunchTemplateId": template, "Version": "1"}, VPCZoneIdentifier=subnet,
    )  # fmt: skip
    arn = elbv2.create_target_group(Name="shop-ingress-80", Protocol="TCP", Port=30080,
                                    VpcId=vpc)["TargetGroups"][0]["TargetGroupArn"]  # fmt: skip

    found = find(lookup, "aws:ec2/launchTemplate:LaunchTemplate", "lt", {"name": "shop-general"})
    assert (found.id, found.outputs["latestVersion"]) == (template, 1)
    group = find(lookup, "aws:autoscaling/group:Group", "asg", {"name": "shop-general-a"})
    assert group.id == "shop-general-a" and group.import_id == "shop-general-a"
    attachment = {"autoscalingGroupName": "shop-general-a", "lbTargetGroupArn": arn}
    with pytest.raises(Missing, match=r"is not attached to shop-general-a live"):
        find(lookup, "aws:autoscaling/attachment:Attachment", "attach", attachment)

    autoscaling.attach_load_balancer_target_groups(
        AutoScalingGroupName="shop-general-a", TargetGroupARNs=[arn]
    )
    lookup.cache.clear()
    recorded = find(lookup, "aws:autoscaling/attachment:Attachment", "attach", attachment)
    assert recorded.import_id is None  # pulumi-aws cannot import it: a no-op create records it


def test_a_missing_template_or_group_is_one_sentence(moto: MotoServer, lookup: Lookup) -> None:
    with pytest.raises(Missing, match=r"lt: no live launch template shop-gone"):
        find(lookup, "aws:ec2/launchTemplate:LaunchTemplate", "lt", {"name": "shop-gone"})
    with pytest.raises(Missing, match=r"asg: no live Auto Scaling group shop-gone"):
        find(lookup, "aws:autoscaling/group:Group", "asg", {"name": "shop-gone"})


def test_an_etcd_volume_by_name_and_zone_and_two_are_ambiguous(
    moto: MotoServer, lookup: Lookup
) -> None:
    ec2 = moto.client("ec2")
    spec = [{"ResourceType": "volume", "Tags": [{"Key": "Name", "Value": "shop-etcd-1"}]}]
    first = ec2.create_volume(AvailabilityZone="eu-west-1a", Size=20, TagSpecifications=spec)
    ec2.create_volume(AvailabilityZone="eu-west-1b", Size=20, TagSpecifications=spec)
    declared = {"availabilityZone": "eu-west-1a", "tags": {"Name": "shop-etcd-1"}}

    assert find(lookup, "aws:ebs/volume:Volume", "etcd-1", declared).id == first["VolumeId"]

    ec2.create_volume(AvailabilityZone="eu-west-1a", Size=20, TagSpecifications=spec)
    with pytest.raises(Ambiguous, match=r"etcd-1: 2 live volume named shop-etcd-1 in eu-west-1a"):
        find(lookup, "aws:ebs/volume:Volume", "etcd-1", declared)


def test_a_members_interface_by_its_fixed_address(moto: MotoServer, lookup: Lookup) -> None:
    ec2 = moto.client("ec2")
    _, subnet = _subnet(ec2)
    ec2.create_network_interface(SubnetId=subnet, PrivateIpAddress="10.0.64.11")
    wanted = ec2.create_network_interface(SubnetId=subnet, PrivateIpAddress="10.0.64.10")

    found = find(lookup, "aws:ec2/networkInterface:NetworkInterface", "eni-1",
                 {"subnetId": subnet, "privateIps": ["10.0.64.10"]})  # fmt: skip

    assert found.id == wanted["NetworkInterface"]["NetworkInterfaceId"]
    assert found.outputs["privateIp"] == "10.0.64.10"
