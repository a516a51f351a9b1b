"""The stand-in provider's ``aws:autoscaling`` types against a real moto server.

Each type is created from the program's shapes, checked against what boto3 sees,
updated in place where AWS can, read back (also from the declared inputs alone, as an
import does), deleted twice and then read as gone. Declared values travel through the
engine's wire format first, so numbers arrive as doubles as they do from the engine.
Replacement is judged by the servicer's own rule over ``replace_props()``.
"""

from __future__ import annotations

from typing import Any

import pytest

from automation.sandbox.provider.diffing import decide
from automation.sandbox.provider.model import REGISTRY, Aws, NotFound, Props, Request, ResourceType
from automation.sandbox.provider.servicer import props_of, struct_of
from automation.sandbox.provider.types.autoscaling_attachments import Attachment
from automation.sandbox.provider.types.autoscaling_groups import Group
from tests.support.moto_fixtures import MotoServer

pytestmark = pytest.mark.moto


def replaces(kind: type[ResourceType], olds: Props, changes: Props) -> bool:
    """Whether the servicer would replace a ``kind`` whose inputs go ``olds`` -> + ``changes``."""
    return decide(kind.replace_props(), olds, {**olds, **changes}).replace


def request(kind: type[ResourceType]) -> Request:
    return Request(name="test", token=kind.token)


def create(aws: Aws, kind: type[ResourceType], declared: Props) -> tuple[str, Props, Props]:
    """Check and create through the registered type; reading it back, from its outputs or
    from the checked inputs alone (an import), gives the same outputs."""
    resource = REGISTRY[kind.token]
    assert isinstance(resource, kind)
    inputs = resource.check(request(kind), props_of(struct_of(declared)))
    id_, outputs = resource.create(aws, request(kind), inputs)
    assert resource.read(aws, request(kind), id_, outputs) == outputs
    assert resource.read(aws, request(kind), id_, inputs) == outputs
    return id_, inputs, outputs


def update(
    aws: Aws, kind: type[ResourceType], id_: str, inputs: Props, outputs: Props, changes: Props
) -> tuple[Props, Props]:
    """Update in place (only legal when nothing replace-worthy changed)."""
    assert not replaces(kind, inputs, changes)
    resource = REGISTRY[kind.token]
    news = resource.check(request(kind), props_of(struct_of({**inputs, **changes})))
    outputs = resource.update(aws, request(kind), id_, outputs, news)
    assert resource.read(aws, request(kind), id_, outputs) == outputs
    return news, outputs


def delete(aws: Aws, kind: type[ResourceType], id_: str, state: Props) -> None:
    """Delete twice (the second finds it gone and succeeds), then read it as gone."""
    resource = REGISTRY[kind.token]
    resource.delete(aws, request(kind), id_, state)
    resource.delete(aws, request(kind), id_, state)
    with pytest.raises(NotFound):
        resource.read(aws, request(kind), id_, state)


@pytest.fixture
def aws(moto: MotoServer) -> Aws:
    return Aws(region="eu-west-1", endpoint_url=moto.endpoint_url)


@pytest.fixture
def ec2(moto: MotoServer) -> Any:
    return moto.client("ec2")


@pytest.fixture
def autoscaling(moto: MotoServer) -> Any:
    return moto.client("autoscaling")


@pytest.fixture
def subnets(ec2: Any) -> list[str]:
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    return [
        ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.0.{i}.0/24", AvailabilityZone=f"eu-west-1{az}")[
            "Subnet"
        ]["SubnetId"]
        for i, az in enumerate("ab", start=1)
    ]


@pytest.fixture
def template(ec2: Any) -> str:
    """A launch template with two versions, as the program's (no instance type: the
    mixed instances policy's overrides give it)."""
    data = {"ImageId": "ami-12c6146b", "UserData": "IyEvYmluL3NoCg=="}
    lt = ec2.create_launch_template(LaunchTemplateName="workers", LaunchTemplateData=data)
    id_ = str(lt["LaunchTemplate"]["LaunchTemplateId"])
    ec2.create_launch_template_version(LaunchTemplateId=id_, LaunchTemplateData=data)
    return id_


def live_group(autoscaling: Any, name: str) -> dict[str, Any]:
    return dict(
        autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=[name])["AutoScalingGroups"][
            0
        ]
    )


def instances(ec2: Any, group: str) -> dict[str, dict[str, Any]]:
    """The group's EC2 instances by id, whatever their state."""
    found = ec2.describe_instances(
        Filters=[{"Name": "tag:aws:autoscaling:groupName", "Values": [group]}]
    )
    return {i["InstanceId"]: i for r in found["Reservations"] for i in r["Instances"]}


def running(ec2: Any, group: str) -> dict[str, dict[str, str]]:
    """Running instances of the group -> their tags."""
    return {
        id_: {t["Key"]: t["Value"] for t in i.get("Tags", [])}
        for id_, i in instances(ec2, group).items()
        if i["State"]["Name"] == "running"
    }


def tags(pairs: dict[str, str]) -> list[dict[str, Any]]:
    return [{"key": k, "value": v, "propagateAtLaunch": True} for k, v in sorted(pairs.items())]


def test_worker_group_with_mixed_instances_policy(
    aws: Aws, ec2: Any, autoscaling: Any, subnets: list[str], template: str
) -> None:
    declared: Props = {
        "name": "shop-workers-general-a",
        "minSize": 1,
        "maxSize": 4,
        "desiredCapacity": 2,
        "vpcZoneIdentifiers": [subnets[0]],
        "capacityRebalance": True,
        "healthCheckType": "EC2",
        "healthCheckGracePeriod": 300,
        "mixedInstancesPolicy": {
            "instancesDistribution": {
                "onDemandBaseCapacity": 0,
                "onDemandPercentageAboveBaseCapacity": 0,
                "spotAllocationStrategy": "price-capacity-optimized",
            },
            "launchTemplate": {
                "launchTemplateSpecification": {"launchTemplateId": template, "version": "1"},
                "overrides": [{"instanceType": "m5.large"}],
            },
        },
        "tags": tags({"Name": "shop-workers-general-a", "kubeshift.io/pool": "general"}),
    }
    id_, inputs, outputs = create(aws, Group, declared)

    assert id_ == "shop-workers-general-a"
    assert outputs["arn"].startswith("arn:aws:autoscaling:eu-west-1:")
    group = live_group(autoscaling, id_)
    assert (group["MinSize"], group["MaxSize"], group["DesiredCapacity"]) == (1, 4, 2)
    assert group["VPCZoneIdentifier"] == subnets[0]
    assert group["CapacityRebalance"] is True
    policy = group["MixedInstancesPolicy"]
    assert policy["LaunchTemplate"]["Overrides"] == [{"InstanceType": "m5.large"}]
    assert policy["InstancesDistribution"]["OnDemandPercentageAboveBaseCapacity"] == 0
    launched = running(ec2, id_)
    assert len(launched) == 2
    for instance_tags in launched.values():  # what turns them into cluster nodes
        assert instance_tags["kubeshift.io/pool"] == "general"
        assert instance_tags["Name"] == "shop-workers-general-a"
    assert outputs["mixedInstancesPolicy"]["launchTemplate"]["overrides"] == [
        {"instanceType": "m5.large"}
    ]
    assert outputs["tags"] == declared["tags"]

    assert replaces(Group, inputs, {"name": "shop-workers-general-b"})
    assert not replaces(Group, inputs, {"tags": tags({"Name": "x"})})
    assert not replaces(Group, inputs, {"maxSize": 6, "vpcZoneIdentifiers": [subnets[1]]})

    distribution = declared["mixedInstancesPolicy"]["instancesDistribution"]
    inputs, outputs = update(
        aws,
        Group,
        id_,
        inputs,
        outputs,
        {
            "maxSize": 5,
            "desiredCapacity": 3,
            "healthCheckGracePeriod": 600,
            "vpcZoneIdentifiers": [subnets[1]],
            "suspendedProcesses": ["AZRebalance", "Launch"],
            "mixedInstancesPolicy": {
                **declared["mixedInstancesPolicy"],
                "instancesDistribution": {
                    **distribution,
                    "onDemandPercentageAboveBaseCapacity": 100,
                },
            },
            "tags": tags({"Name": "shop-workers-general-a", "kubeshift.io/generation": "2"}),
        },
    )
    group = live_group(autoscaling, id_)
    assert (group["MaxSize"], group["DesiredCapacity"], group["HealthCheckGracePeriod"]) == (
        5,
        3,
        600,
    )
    assert group["VPCZoneIdentifier"] == subnets[1]
    assert {p["ProcessName"] for p in group["SuspendedProcesses"]} == {"AZRebalance", "Launch"}
    distribution_now = group["MixedInstancesPolicy"]["InstancesDistribution"]
    assert distribution_now["OnDemandPercentageAboveBaseCapacity"] == 100
    assert {t["Key"]: t["Value"] for t in group["Tags"]} == {
        "Name": "shop-workers-general-a",
        "kubeshift.io/generation": "2",
    }
    assert len(running(ec2, id_)) == 3
    assert outputs["suspendedProcesses"] == ["AZRebalance", "Launch"]

    # A resize the program does not declare keeps the policy (moto drops one an update
    # leaves out) and resumes exactly the processes no longer declared.
    inputs, outputs = update(aws, Group, id_, inputs, outputs, {"suspendedProcesses": ["Launch"]})
    inputs, outputs = update(aws, Group, id_, inputs, outputs, {"minSize": 2})
    group = live_group(autoscaling, id_)
    assert [p["ProcessName"] for p in group["SuspendedProcesses"]] == ["Launch"]
    assert group["MinSize"] == 2
    assert group["MixedInstancesPolicy"]["InstancesDistribution"] == distribution_now

    launched_ids = set(instances(ec2, id_))
    delete(aws, Group, id_, outputs)
    assert not autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=[id_])[
        "AutoScalingGroups"
    ]
    states = {i["State"]["Name"] for i in instances(ec2, id_).values()}
    assert set(instances(ec2, id_)) == launched_ids
    assert states == {"terminated"}


def test_control_plane_group_with_launch_template(
    aws: Aws, ec2: Any, autoscaling: Any, subnets: list[str], template: str
) -> None:
    declared: Props = {
        "name": "shop-control-plane-0",
        "minSize": 1,
        "maxSize": 1,
        "desiredCapacity": 1,
        "vpcZoneIdentifiers": [subnets[0]],
        "healthCheckType": "EC2",
        "healthCheckGracePeriod": 600,
        "launchTemplate": {"id": template, "version": "1"},
        "tags": tags({"Name": "shop-control-plane-0", "kubeshift.io/network": "old"}),
    }
    id_, inputs, outputs = create(aws, Group, declared)

    assert outputs["launchTemplate"] == {"id": template, "name": "workers", "version": "1"}
    assert live_group(autoscaling, id_)["LaunchTemplate"]["Version"] == "1"
    (instance_tags,) = running(ec2, id_).values()
    assert instance_tags["kubeshift.io/network"] == "old"

    inputs, outputs = update(
        aws,
        Group,
        id_,
        inputs,
        outputs,
        {
            "launchTemplate": {"id": template, "version": "2"},
            "tags": tags({"Name": "shop-control-plane-0", "kubeshift.io/network": "new"}),
        },
    )
    group = live_group(autoscaling, id_)
    assert group["LaunchTemplate"]["Version"] == "2"
    assert {t["Key"]: t["Value"] for t in group["Tags"]}["kubeshift.io/network"] == "new"
    assert outputs["launchTemplate"]["version"] == "2"

    delete(aws, Group, id_, outputs)
    assert {i["State"]["Name"] for i in instances(ec2, id_).values()} == {"terminated"}


def test_group_check() -> None:
    group = REGISTRY[Group.token]
    lt = {"id": "lt-0123456789abcdef0", "version": "1"}
    checked = group.check(request(Group), {"minSize": 0, "maxSize": 1, "launchTemplate": lt})
    assert checked["name"].startswith("test-")
    assert checked["healthCheckGracePeriod"] == 300  # Terraform's default
    with pytest.raises(ValueError, match="exactly one"):
        group.check(request(Group), {"minSize": 0, "maxSize": 1})
    with pytest.raises(ValueError, match="targetGroupArns"):
        group.check(
            request(Group),
            {"minSize": 0, "maxSize": 1, "launchTemplate": lt, "targetGroupArns": ["arn:x"]},
        )


def test_attachment(
    aws: Aws, ec2: Any, autoscaling: Any, subnets: list[str], template: str, moto: MotoServer
) -> None:
    elbv2 = moto.client("elbv2")
    vpc = ec2.describe_subnets(SubnetIds=[subnets[0]])["Subnets"][0]["VpcId"]
    target_groups = [
        elbv2.create_target_group(Name=f"tg-{port}", Port=port, Protocol="TCP", VpcId=vpc)[
            "TargetGroups"
        ][0]["TargetGroupArn"]
        for port in (30080, 30443)
    ]
    autoscaling.create_auto_scaling_group(
        AutoScalingGroupName="workers",
        MinSize=2,
        MaxSize=2,
        DesiredCapacity=2,
        VPCZoneIdentifier=subnets[0],
        LaunchTemplate={"LaunchTemplateId": template, "Version": "1"},
    )
    declared = {"autoscalingGroupName": "workers", "lbTargetGroupArn": target_groups[0]}
    id_, inputs, outputs = create(aws, Attachment, declared)

    assert id_.startswith("workers-")
    assert outputs == declared
    assert live_group(autoscaling, "workers")["TargetGroupARNs"] == [target_groups[0]]
    health = elbv2.describe_target_health(TargetGroupArn=target_groups[0])
    registered = {t["Target"]["Id"] for t in health["TargetHealthDescriptions"]}
    assert registered == {i["InstanceId"] for i in live_group(autoscaling, "workers")["Instances"]}
    assert replaces(Attachment, inputs, {"lbTargetGroupArn": target_groups[1]})
    assert replaces(Attachment, inputs, {"autoscalingGroupName": "other"})

    delete(aws, Attachment, id_, outputs)
    assert live_group(autoscaling, "workers")["TargetGroupARNs"] == []
    health = elbv2.describe_target_health(TargetGroupArn=target_groups[0])
    assert health["TargetHealthDescriptions"] == []

    # An attachment whose group is gone is gone too.
    autoscaling.delete_auto_scaling_group(AutoScalingGroupName="workers", ForceDelete=True)
    with pytest.raises(NotFound):
        REGISTRY[Attachment.token].read(aws, request(Attachment), id_, outputs)
    REGISTRY[Attachment.token].delete(aws, request(Attachment), id_, outputs)


def test_a_groups_metrics_are_collected_as_declared(
    aws: Aws, autoscaling: Any, subnets: list[str], template: str, metrics_gap_closed: None
) -> None:
    """kops has its groups collect metrics; a group that stops declaring one stops it."""
    declared: Props = {
        "name": "nodes-a",
        "minSize": 0,
        "maxSize": 1,
        "vpcZoneIdentifiers": [subnets[0]],
        "launchTemplate": {"id": template, "version": "1"},
        "enabledMetrics": ["GroupMinSize", "GroupMaxSize", "GroupTotalInstances"],
    }
    id_, inputs, outputs = create(aws, Group, declared)
    collected = {m["Metric"] for m in live_group(autoscaling, id_)["EnabledMetrics"]}
    assert collected == {"GroupMinSize", "GroupMaxSize", "GroupTotalInstances"}
    assert outputs["metricsGranularity"] == "1Minute"
    assert not replaces(Group, inputs, {"enabledMetrics": ["GroupMinSize"]})
    fewer = {"enabledMetrics": ["GroupMinSize", "GroupStandbyInstances"]}
    inputs, outputs = update(aws, Group, id_, inputs, outputs, fewer)
    collected = {m["Metric"] for m in live_group(autoscaling, id_)["EnabledMetrics"]}
    assert collected == {"GroupMinSize", "GroupStandbyInstances"}
    assert outputs["enabledMetrics"] == ["GroupMinSize", "GroupStandbyInstances"]
