"""Import reads what pulumi-aws reads: for every type the stand-in serves, the attributes
its read reports on moto, with those its ``not_read`` gives a reason for, are exactly the
attributes of pulumi-aws's state for the type (the pinned SDK's), no more, no fewer."""

from __future__ import annotations

import pytest
from pulumi.runtime.proto import provider_pb2

from automation.sandbox.moto_gaps.ec2 import reservation_descriptions_kept
from automation.sandbox.provider import types  # noqa: F401  (registers every type)
from automation.sandbox.provider.model import REGISTRY, Aws, Props, Request
from automation.sandbox.provider.servicer import AwsProvider, props_of, struct_of
from automation.sandbox.provider.types.autoscaling_groups import Group
from automation.sandbox.provider.types.gateways import NatGateway
from automation.sandbox.provider.types.launch_templates import LaunchTemplate
from automation.sandbox.provider.types.target_groups import TargetGroup
from tests.automation.sandbox.provider.samples import SAMPLES, World, read_attributes
from tests.automation.sandbox.provider.sdk_attributes import state_attributes
from tests.support.moto_fixtures import MotoServer

pytestmark = pytest.mark.moto


@pytest.fixture
def aws(moto: MotoServer, monkeypatch: pytest.MonkeyPatch) -> Aws:
    """The stand-in's AWS: moto as the sandbox runs it, with the gap that hides a
    reservation's description closed (``moto_gaps.ec2.reservation_descriptions_kept``)."""
    from moto.ec2.responses.subnets import Subnets

    name = "create_subnet_cidr_reservation"
    monkeypatch.setattr(Subnets, name, getattr(Subnets, name))
    reservation_descriptions_kept()
    return Aws(region=moto.region, endpoint_url=moto.endpoint_url)


def test_every_type_served_has_samples() -> None:
    assert sorted(SAMPLES) == sorted(REGISTRY)
    assert len(REGISTRY) >= 30


@pytest.mark.parametrize("token", sorted(REGISTRY))
def test_read_and_not_read_are_the_attributes_pulumi_aws_imports(
    token: str, aws: Aws, moto: MotoServer
) -> None:
    sdk = state_attributes(token)
    not_read = set(REGISTRY[token].not_read)
    read = read_attributes(aws, World(moto), token)
    assert {
        "read but not pulumi-aws's": sorted(read - sdk),
        "reasons for no attribute of pulumi-aws's": sorted(not_read - sdk),
        "read and also given a reason": sorted(read & not_read),
        "neither read nor given a reason": sorted(sdk - read - not_read),
    } == {
        "read but not pulumi-aws's": [],
        "reasons for no attribute of pulumi-aws's": [],
        "read and also given a reason": [],
        "neither read nor given a reason": [],
    }


# -- attributes read since issue 45 item 7: a live value set out of band is imported ----


@pytest.fixture
def provider(moto: MotoServer) -> AwsProvider:
    served = AwsProvider()
    served.Configure(provider_pb2.ConfigureRequest(args=struct_of({"region": moto.region})), None)
    return served


def imported(provider: AwsProvider, token: str, id_: str) -> tuple[Props, Props]:
    """(outputs, inputs) of ``pulumi import`` by ``id_``: the engine compares the
    program's declared inputs with these inputs."""
    urn = f"urn:pulumi:s::kubeshift::{token}::adopted"
    answer = provider.Read(provider_pb2.ReadRequest(id=id_, urn=urn), None)
    return props_of(answer.properties), props_of(answer.inputs)


def test_a_groups_termination_policies_protection_and_placement_are_imported(
    provider: AwsProvider, moto: MotoServer
) -> None:
    world = World(moto)
    autoscaling = moto.client("autoscaling")
    common = {
        "LaunchTemplate": {"LaunchTemplateId": world.launch_template},
        "MinSize": 0, "MaxSize": 1, "VPCZoneIdentifier": world.subnets[0],
    }  # fmt: skip
    autoscaling.create_auto_scaling_group(
        AutoScalingGroupName="kops-nodes", **common,
        TerminationPolicies=["OldestInstance"], NewInstancesProtectedFromScaleIn=True,
        PlacementGroup="kops-spread",
    )  # fmt: skip
    autoscaling.create_auto_scaling_group(AutoScalingGroupName="plain", **common)
    _, inputs = imported(provider, Group.token, "kops-nodes")
    assert inputs["terminationPolicies"] == ["OldestInstance"]
    assert inputs["protectFromScaleIn"] is True
    assert inputs["placementGroup"] == "kops-spread"
    outputs, inputs = imported(provider, Group.token, "plain")
    assert outputs["protectFromScaleIn"] is False  # AWS's ["Default"]: no policy chosen
    assert not {"terminationPolicies", "protectFromScaleIn", "placementGroup"} & set(inputs)


def test_a_templates_monitoring_and_other_launch_settings_are_imported(
    provider: AwsProvider, moto: MotoServer
) -> None:
    ec2 = moto.client("ec2")
    settings = {
        "ImageId": "ami-12c6146b",
        "Monitoring": {"Enabled": True},
        "DisableApiTermination": True,
        "CreditSpecification": {"CpuCredits": "unlimited"},
        "CpuOptions": {"CoreCount": 2, "ThreadsPerCore": 1},
        "InstanceMarketOptions": {"MarketType": "spot", "SpotOptions": {"MaxPrice": "0.05"}},
    }
    made = ec2.create_launch_template(LaunchTemplateName="kops-nodes", LaunchTemplateData=settings)
    plain = ec2.create_launch_template(
        LaunchTemplateName="plain", LaunchTemplateData={"ImageId": "ami-12c6146b"}
    )
    _, inputs = imported(provider, LaunchTemplate.token, made["LaunchTemplate"]["LaunchTemplateId"])
    assert inputs["monitoring"] == {"enabled": True}
    assert inputs["disableApiTermination"] is True
    assert inputs["creditSpecification"] == {"cpuCredits": "unlimited"}
    assert inputs["cpuOptions"] == {"coreCount": 2, "threadsPerCore": 1}
    assert inputs["instanceMarketOptions"] == {
        "marketType": "spot", "spotOptions": {"maxPrice": "0.05"}
    }  # fmt: skip
    _, inputs = imported(
        provider, LaunchTemplate.token, plain["LaunchTemplate"]["LaunchTemplateId"]
    )
    assert not {"monitoring", "disableApiTermination", "creditSpecification"} & set(inputs)


def test_a_target_groups_proxy_protocol_and_connection_termination_are_imported(
    provider: AwsProvider, moto: MotoServer
) -> None:
    world, elbv2 = World(moto), moto.client("elbv2")
    made = elbv2.create_target_group(Name="kops-api", Protocol="TCP", Port=443, VpcId=world.vpc)
    arn = made["TargetGroups"][0]["TargetGroupArn"]
    plain = elbv2.create_target_group(Name="plain", Protocol="TCP", Port=443, VpcId=world.vpc)
    elbv2.modify_target_group_attributes(
        TargetGroupArn=arn,
        Attributes=[
            {"Key": "proxy_protocol_v2.enabled", "Value": "true"},
            {"Key": "deregistration_delay.connection_termination.enabled", "Value": "true"},
        ],
    )
    _, inputs = imported(provider, TargetGroup.token, arn)
    assert inputs["proxyProtocolV2"] is True
    assert inputs["connectionTermination"] is True
    _, inputs = imported(provider, TargetGroup.token, plain["TargetGroups"][0]["TargetGroupArn"])
    assert not {"proxyProtocolV2", "connectionTermination"} & set(inputs)


def test_a_nat_gateways_vpc_is_read(aws: Aws, moto: MotoServer) -> None:
    world, ec2 = World(moto), moto.client("ec2")
    allocation = ec2.allocate_address(Domain="vpc")["AllocationId"]
    nat = ec2.create_nat_gateway(SubnetId=world.subnets[0], AllocationId=allocation)
    id_ = nat["NatGateway"]["NatGatewayId"]
    req = Request(name="adopted", token=NatGateway.token)
    assert REGISTRY[NatGateway.token].read(aws, req, id_, {})["vpcId"] == world.vpc
