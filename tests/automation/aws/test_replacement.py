"""The InService instances of many Auto Scaling groups, read in as few calls as AWS allows."""

from __future__ import annotations

import pytest

from automation.aws import replacement
from automation.aws.replacement import in_service_of
from automation.core.errors import PreconditionFailed
from tests.support.moto_fixtures import MotoServer
from tests.support.nodes import unique_name

pytestmark = [pytest.mark.moto]


def _group(moto: MotoServer, size: int) -> str:
    ec2 = moto.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.9.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(
        VpcId=vpc, CidrBlock="10.9.0.0/24", AvailabilityZone=f"{moto.region}a"
    )
    name = unique_name("group")
    template = ec2.create_launch_template(
        LaunchTemplateName=name, LaunchTemplateData={"ImageId": "ami-12c6146b"}
    )["LaunchTemplate"]["LaunchTemplateId"]
    moto.client("autoscaling").create_auto_scaling_group(
        AutoScalingGroupName=name, MinSize=size, MaxSize=size, DesiredCapacity=size,
        VPCZoneIdentifier=subnet["Subnet"]["SubnetId"],
        LaunchTemplate={"LaunchTemplateId": template, "Version": "1"},
    )  # fmt: skip
    return name


def test_every_groups_instances_in_calls_of_at_most_the_limit(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    autoscaling = moto.client("autoscaling")
    groups = [_group(moto, 2), _group(moto, 1), _group(moto, 3)]
    calls: list[list[str]] = []
    describe = autoscaling.describe_auto_scaling_groups

    def counted(**kwargs: object) -> object:
        calls.append(list(kwargs["AutoScalingGroupNames"]))  # type: ignore[call-overload]
        return describe(**kwargs)

    monkeypatch.setattr(replacement, "DESCRIBE_GROUPS_AT_ONCE", 2)
    monkeypatch.setattr(autoscaling, "describe_auto_scaling_groups", counted)

    instances = in_service_of(autoscaling, groups)

    assert len(instances) == 6 and instances == sorted(instances)
    assert calls == [groups[:2], groups[2:]]


def test_a_group_that_is_gone_is_one_sentence(moto: MotoServer) -> None:
    gone = unique_name("gone")
    with pytest.raises(PreconditionFailed, match=f"Auto Scaling group {gone} no longer exists"):
        in_service_of(moto.client("autoscaling"), [_group(moto, 1), gone])
