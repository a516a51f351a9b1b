"""The API record followed through moto: who would take a client's connection now."""

from __future__ import annotations

from typing import Any

import pytest

from automation.aws.api_record import ApiRecordReader, Serving, record_name
from automation.aws.clients import AwsClients
from tests.support.moto_world import MOTO_AMI, make_network, make_zone, put_record

pytestmark = pytest.mark.moto

ZONE = "example.test"


class World:
    def __init__(self, aws: AwsClients) -> None:
        self.aws = aws
        self.net = make_network(aws.ec2, "10.1.0.0/16", "10.1.0.0/23")
        self.zone_id = make_zone(aws.route53, ZONE)

    def member(self, address: str) -> str:
        made = self.aws.ec2.run_instances(
            ImageId=MOTO_AMI, MinCount=1, MaxCount=1, SubnetId=self.net.subnet_id,
            PrivateIpAddress=address,
        )  # fmt: skip
        return str(made["Instances"][0]["InstanceId"])

    def member_on_interface(self, address: str) -> str:
        """A member as kubeshift builds one: its fixed address on a second interface."""
        instance = self.member(address.rsplit(".", 1)[0] + ".99")
        interface = self.aws.ec2.create_network_interface(
            SubnetId=self.net.subnet_id, PrivateIpAddress=address
        )["NetworkInterface"]["NetworkInterfaceId"]
        self.aws.ec2.attach_network_interface(
            NetworkInterfaceId=interface, InstanceId=instance, DeviceIndex=1
        )
        return instance

    def record(self, name: str, kind: str, *values: str) -> None:
        records = [{"Value": v} for v in values]
        put_record(
            self.aws.route53, self.zone_id,
            {"Name": f"{name}.{ZONE}", "Type": kind, "TTL": 60, "ResourceRecords": records},
        )  # fmt: skip

    def balancer(self, name: str, instances: list[str]) -> dict[str, Any]:
        elbv2 = self.aws.elbv2
        lb = elbv2.create_load_balancer(Name=name, Subnets=[self.net.subnet_id], Type="network")
        balancer = lb["LoadBalancers"][0]
        group = elbv2.create_target_group(
            Name=f"{name}-tg", Protocol="TCP", Port=443, VpcId=self.net.vpc_id
        )["TargetGroups"][0]["TargetGroupArn"]
        elbv2.create_listener(
            LoadBalancerArn=balancer["LoadBalancerArn"], Protocol="TCP", Port=443,
            DefaultActions=[{"Type": "forward", "TargetGroupArn": group}],
        )  # fmt: skip
        elbv2.register_targets(TargetGroupArn=group, Targets=[{"Id": i} for i in instances])
        return dict(balancer)

    def serving(self, name: str = "api") -> Serving:
        aws = self.aws
        return ApiRecordReader(
            route53=aws.route53, ec2=aws.ec2, elbv2=aws.elbv2, elb=aws.client("elb"),
            zone_id=self.zone_id, name=record_name(aws.route53, self.zone_id, name),
        ).serving()  # fmt: skip


@pytest.fixture
def world(aws: AwsClients) -> World:
    return World(aws)


def test_an_a_record_serves_while_a_running_instance_holds_its_address(world: World) -> None:
    member = world.member("10.1.1.10")
    world.record("api", "A", "10.1.1.10")
    assert world.serving() == Serving(("10.1.1.10",), "A 10.1.1.10")

    world.aws.ec2.stop_instances(InstanceIds=[member])
    stopped = world.serving()
    assert stopped.addresses == ()
    assert stopped.answer == "A 10.1.1.10: no running instance holds it"


def test_a_members_fixed_address_on_its_second_interface_is_found(world: World) -> None:
    member = world.member_on_interface("10.1.1.40")
    world.record("api", "A", "10.1.1.40")
    assert world.serving().addresses == ("10.1.1.40",)

    balancer = world.balancer("api-lb", [member])  # a load balancer sends to the first
    world.record("api2", "CNAME", balancer["DNSName"])
    assert sorted(world.serving("api2").addresses) == ["10.1.1.40", "10.1.1.99"]

    world.aws.ec2.stop_instances(InstanceIds=[member])
    assert world.serving().addresses == ()


def test_a_cname_to_the_member_record_is_followed_within_the_zone(world: World) -> None:
    world.member("10.1.1.11")
    world.record("member.api", "A", "10.1.1.11")
    world.record("api", "CNAME", f"member.api.{ZONE}")
    assert world.serving().addresses == ("10.1.1.11",)


def test_a_load_balancer_serves_through_its_healthy_targets(world: World) -> None:
    running, stopped = world.member("10.1.1.20"), world.member("10.1.1.21")
    balancer = world.balancer("api-new", [running, stopped])
    world.record("api", "CNAME", balancer["DNSName"])
    world.aws.ec2.stop_instances(InstanceIds=[stopped])
    serving = world.serving()
    assert serving.addresses == ("10.1.1.20",)
    assert serving.answer == "load balancer api-new"

    world.aws.ec2.stop_instances(InstanceIds=[running])
    assert world.serving() == Serving((), "load balancer api-new has no healthy target")


def test_an_alias_to_a_load_balancer_is_followed(world: World) -> None:
    balancer = world.balancer("api-alias", [world.member("10.1.1.30")])
    alias = {"HostedZoneId": balancer["CanonicalHostedZoneId"], "DNSName": balancer["DNSName"],
             "EvaluateTargetHealth": False}  # fmt: skip
    put_record(
        world.aws.route53, world.zone_id,
        {"Name": f"api.{ZONE}", "Type": "A", "AliasTarget": alias},
    )  # fmt: skip
    assert world.serving().addresses == ("10.1.1.30",)


def test_a_missing_record_or_balancer_is_named(world: World) -> None:
    assert world.serving() == Serving((), f"no record api.{ZONE}")
    world.record("api", "CNAME", "gone-123.elb.eu-west-1.amazonaws.com")
    assert world.serving() == Serving(
        (), "no load balancer is named gone-123.elb.eu-west-1.amazonaws.com"
    )


def test_a_relative_record_name_is_read_in_its_zone(world: World) -> None:
    assert record_name(world.aws.route53, world.zone_id, "api") == f"api.{ZONE}"
    assert record_name(world.aws.route53, world.zone_id, f"API.{ZONE}.") == f"api.{ZONE}"
