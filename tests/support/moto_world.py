"""Small builders that arrange an AWS world in moto for the AWS hook tests.

Each returns the ids it created so a test reads top to bottom: a VPC with a subnet,
cluster instances tagged either way, a target group with targets, a hosted zone.
Fleets stay small: moto's ``DescribeInstances`` costs ~3 ms per instance returned.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Network:
    vpc_id: str
    subnet_id: str
    cidr: str


def make_network(ec2: Any, cidr: str = "10.0.0.0/16", subnet: str | None = None) -> Network:
    vpc_id = ec2.create_vpc(CidrBlock=cidr)["Vpc"]["VpcId"]
    subnet_cidr = subnet or cidr.replace(".0.0/16", ".1.0/24")
    subnet_id = ec2.create_subnet(VpcId=vpc_id, CidrBlock=subnet_cidr)["Subnet"]["SubnetId"]
    return Network(vpc_id, subnet_id, cidr)


# An AMI moto ships in every region; listing all ~1300 images costs seconds per call.
MOTO_AMI = "ami-12c6146b"


def run_instances(
    ec2: Any, network: Network, count: int, tags: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """``count`` running instances in the network's subnet, tagged with ``tags``."""
    spec: dict[str, Any] = {}
    if tags:
        spec["TagSpecifications"] = [
            {"ResourceType": "instance", "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}
        ]
    answer = ec2.run_instances(
        ImageId=MOTO_AMI, MinCount=count, MaxCount=count, SubnetId=network.subnet_id, **spec
    )
    return list(answer["Instances"])


def make_target_group(elbv2: Any, vpc_id: str, name: str, instance_ids: list[str]) -> str:
    arn = elbv2.create_target_group(
        Name=name, Protocol="HTTP", Port=80, VpcId=vpc_id, TargetType="instance"
    )["TargetGroups"][0]["TargetGroupArn"]
    if instance_ids:
        elbv2.register_targets(TargetGroupArn=arn, Targets=[{"Id": i} for i in instance_ids])
    return str(arn)


def make_zone(route53: Any, name: str = "example.com") -> str:
    zone = route53.create_hosted_zone(Name=name, CallerReference=name)["HostedZone"]["Id"]
    return str(zone).rsplit("/", 1)[-1]


def put_record(route53: Any, zone_id: str, record: dict[str, Any]) -> None:
    route53.change_resource_record_sets(
        HostedZoneId=zone_id,
        ChangeBatch={"Changes": [{"Action": "CREATE", "ResourceRecordSet": record}]},
    )


def records_named(route53: Any, zone_id: str, name: str) -> list[dict[str, Any]]:
    fqdn = name.rstrip(".") + "."
    answer = route53.list_resource_record_sets(HostedZoneId=zone_id)
    return [rr for rr in answer["ResourceRecordSets"] if rr["Name"] == fqdn]
