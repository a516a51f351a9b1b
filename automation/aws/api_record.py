"""Where the API record sends clients right now, read from Route53 and checked on AWS.

The record is followed as a resolver follows it — a CNAME to another record of the
zone (kubeshift's member record) or to a load balancer's name, an alias to a load
balancer, an A record to addresses — and the answer is checked against what would
take the connection: an A record's addresses count while a running instance holds
them; a load balancer's count while they are its healthy targets. The result is the
private addresses that serve, or why none does; whether the member behind each address
answers is the caller's to ask (its etcd, its API server).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from automation.aws.dns.records import read_records
from automation.core.errors import KubeshiftError

if TYPE_CHECKING:
    from mypy_boto3_ec2 import EC2Client
    from mypy_boto3_elb import ElasticLoadBalancingClient
    from mypy_boto3_elbv2 import ElasticLoadBalancingv2Client
    from mypy_boto3_route53 import Route53Client

MAX_CNAME_HOPS = 4


@dataclass(frozen=True)
class Serving:
    """The private addresses the record's answer reaches, and what the answer was."""

    addresses: tuple[str, ...]
    answer: str  # "A 10.1.0.10", "load balancer api-1a2b (2 healthy)", or why nothing


@dataclass(frozen=True)
class ApiRecordReader:
    """Reads one record of one zone through the four services that say who serves it."""

    route53: Route53Client
    ec2: EC2Client
    elbv2: ElasticLoadBalancingv2Client
    elb: ElasticLoadBalancingClient
    zone_id: str
    name: str

    def serving(self) -> Serving:
        """The addresses behind the record now (empty with the reason when none)."""
        try:
            return self._follow(self.name, MAX_CNAME_HOPS)
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "error")
            return Serving((), f"AWS refused a read ({code})")
        except (BotoCoreError, KubeshiftError) as exc:
            return Serving((), f"AWS could not be read ({exc})")

    def _follow(self, name: str, hops: int) -> Serving:
        records = read_records(self.route53, self.zone_id, name)
        if not records:
            return Serving((), f"no record {name.rstrip('.')}")
        record = next((r for r in records if r["Type"] in ("A", "CNAME")), records[0])
        if alias := record.get("AliasTarget"):
            return self._balancer(alias["DNSName"])
        values = [v["Value"] for v in record.get("ResourceRecords", [])]
        if record["Type"] == "CNAME" and values:
            target = values[0].rstrip(".")
            if hops > 0 and read_records(self.route53, self.zone_id, target):
                return self._follow(target, hops - 1)
            return self._balancer(target)
        if record["Type"] == "A":
            running = self._running_addresses(values)
            if running:
                return Serving(tuple(running), f"A {','.join(values)}")
            return Serving((), f"A {','.join(values)}: no running instance holds it")
        return Serving((), f"{name} is a {record['Type']} record")

    def _running_addresses(self, addresses: Iterable[str]) -> list[str]:
        """Those of ``addresses`` a running instance holds, on any of its interfaces (a
        member's fixed address is a second interface's, not the instance's own)."""
        wanted = list(addresses)
        if not wanted:
            return []
        interfaces = self.ec2.describe_network_interfaces(
            Filters=[{"Name": "addresses.private-ip-address", "Values": wanted}]
        )["NetworkInterfaces"]
        holders = [i.get("Attachment", {}).get("InstanceId", "") for i in interfaces]
        held = set(self._instance_addresses([h for h in holders if h]))
        return [a for a in wanted if a in held]

    def _balancer(self, dns_name: str) -> Serving:
        wanted = _dns(dns_name)
        for balancer in _pages(self.elbv2, "describe_load_balancers", "LoadBalancers"):
            if _dns(balancer.get("DNSName", "")) == wanted:
                return self._healthy_v2(balancer["LoadBalancerArn"], balancer["LoadBalancerName"])
        for classic in _pages(self.elb, "describe_load_balancers", "LoadBalancerDescriptions"):
            if _dns(classic.get("DNSName", "")) == wanted:
                return self._healthy_classic(classic["LoadBalancerName"])
        return Serving((), f"no load balancer is named {dns_name.rstrip('.')}")

    def _healthy_v2(self, arn: str, name: str) -> Serving:
        groups = self.elbv2.describe_target_groups(LoadBalancerArn=arn)["TargetGroups"]
        instances: list[str] = []
        addresses: list[str] = []
        for group in groups:
            health = self.elbv2.describe_target_health(TargetGroupArn=group["TargetGroupArn"])
            for item in health.get("TargetHealthDescriptions", []):
                if item.get("TargetHealth", {}).get("State") != "healthy":
                    continue
                target = item.get("Target", {}).get("Id", "")
                (instances if target.startswith("i-") else addresses).append(target)
        addresses += self._instance_addresses(instances)
        if not addresses:
            return Serving((), f"load balancer {name} has no healthy target")
        return Serving(tuple(dict.fromkeys(addresses)), f"load balancer {name}")

    def _healthy_classic(self, name: str) -> Serving:
        states = self.elb.describe_instance_health(LoadBalancerName=name)["InstanceStates"]
        instances = [s["InstanceId"] for s in states if s.get("State") == "InService"]
        addresses = self._instance_addresses(instances)
        if not addresses:
            return Serving((), f"load balancer {name} has no instance in service")
        return Serving(tuple(addresses), f"load balancer {name}")

    def _instance_addresses(self, instance_ids: list[str]) -> list[str]:
        """Every private address of the running instances ``instance_ids``: the one a
        load balancer sends to, and the member's own on its second interface."""
        if not instance_ids:
            return []
        found = self.ec2.describe_instances(
            Filters=[
                {"Name": "instance-id", "Values": sorted(set(instance_ids))},
                {"Name": "instance-state-name", "Values": ["running"]},
            ]
        )
        return [
            address["PrivateIpAddress"]
            for reservation in found.get("Reservations", [])
            for instance in reservation.get("Instances", [])
            for interface in instance.get("NetworkInterfaces", [])
            for address in interface.get("PrivateIpAddresses", [])
            if address.get("PrivateIpAddress")
        ]


def record_name(route53: Route53Client, zone_id: str, name: str) -> str:
    """``name`` made absolute in the zone, as Route53's Terraform provider reads a name
    outside it (``api`` in ``example.com.`` is ``api.example.com``)."""
    zone = route53.get_hosted_zone(Id=zone_id)["HostedZone"]["Name"].rstrip(".").lower()
    bare = name.rstrip(".").lower()
    return bare if bare == zone or bare.endswith(f".{zone}") else f"{bare}.{zone}"


def _dns(name: str) -> str:
    """A load balancer's DNS name as compared (Route53 aliases may add ``dualstack.``)."""
    name = name.rstrip(".").lower()
    return name.removeprefix("dualstack.")


def _pages(client: Any, operation: str, key: str) -> Iterable[dict[str, Any]]:
    for page in client.get_paginator(operation).paginate():
        yield from page.get(key, [])
