"""Network load balancers, their target groups and listeners, and the Route53 records
that name them, under the names their tool gives them: kops's API load balancer
(``api-<cluster>-<hash>``, its target group ``tcp-<cluster>-<hash>``, the members'
groups attached; kops builds no ingress load balancer: adoption adds kubeshift's), or
a Terraform module's API and ingress ones (``world.modules``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from automation.sandbox.provider.model import Aws
from automation.sandbox.provider.types.route53_records import expand_name
from automation.sandbox.world.model import Built, WorldCluster, tag_list


@dataclass(frozen=True)
class Balanced:
    """A load balancer's listener port -> the port its targets serve."""

    name: str
    target_names: dict[int, str]
    """Each listener port's target group's name."""
    internal: bool
    subnets: list[str]
    group_id: str
    ports: dict[int, int]
    targets: list[str]
    """The Auto Scaling groups its target groups hold."""


@dataclass
class Balancer:
    arn: str = ""
    dns_name: str = ""
    zone_id: str = ""
    built: list[Built] = field(default_factory=list)


def build_balancer(aws: Aws, cluster: WorldCluster, vpc_id: str, wanted: Balanced) -> Balancer:
    elb = aws.client("elbv2")
    made = Balancer()
    name = wanted.name
    lb = elb.create_load_balancer(
        Name=name, Type="network", Scheme="internal" if wanted.internal else "internet-facing",
        Subnets=wanted.subnets, SecurityGroups=[wanted.group_id],
        Tags=tag_list(cluster.tags(name)),
    )["LoadBalancers"][0]  # fmt: skip
    made.arn, made.dns_name = lb["LoadBalancerArn"], lb["DNSName"]
    made.zone_id = lb["CanonicalHostedZoneId"]
    made.built.append(Built("elbv2:load-balancer", name, made.arn))
    elb.modify_load_balancer_attributes(  # NLBs do not balance across zones by default
        LoadBalancerArn=made.arn,
        Attributes=[{"Key": "load_balancing.cross_zone.enabled", "Value": "false"}],
    )
    autoscaling = aws.client("autoscaling")
    for port, target_port in wanted.ports.items():
        target_name = wanted.target_names[port]
        target = elb.create_target_group(
            Name=target_name, Protocol="TCP", Port=target_port, VpcId=vpc_id,
            TargetType="instance", HealthCheckProtocol="TCP", HealthCheckPort="traffic-port",
            HealthCheckIntervalSeconds=10, HealthyThresholdCount=2, UnhealthyThresholdCount=2,
            Tags=tag_list(cluster.tags(target_name)),
        )["TargetGroups"][0]  # fmt: skip
        made.built.append(Built("elbv2:target-group", target_name, target["TargetGroupArn"]))
        listener = elb.create_listener(
            LoadBalancerArn=made.arn, Protocol="TCP", Port=port,
            DefaultActions=[{"Type": "forward", "TargetGroupArn": target["TargetGroupArn"]}],
            Tags=tag_list(cluster.tags(f"{name}-{port}")),
        )["Listeners"][0]  # fmt: skip
        made.built.append(Built("elbv2:listener", f"{name}-{port}", listener["ListenerArn"]))
        for group in wanted.targets:
            autoscaling.attach_load_balancer_target_groups(
                AutoScalingGroupName=group, TargetGroupARNs=[target["TargetGroupArn"]]
            )
    return made


def write_records(
    aws: Aws, cluster: WorldCluster, api: Balancer, ingress: Balancer | None = None
) -> list[Built]:
    """The API's record (an alias, or a CNAME) and, where the tool built an ingress load
    balancer, the ingress records (CNAMEs); a name outside the zone is relative to it, as
    Route53's Terraform provider reads it."""
    dns = cluster.spec.dns
    route53 = aws.client("route53")
    zone = route53.get_hosted_zone(Id=dns.zone_id)["HostedZone"]["Name"]
    changes: list[dict[str, object]] = []
    if dns.api_alias:
        alias = {
            "HostedZoneId": api.zone_id, "DNSName": api.dns_name, "EvaluateTargetHealth": False,
        }  # fmt: skip
        changes.append({"Name": dns.api_record, "Type": "A", "AliasTarget": alias})
    else:
        changes.append(_cname(dns.api_record, api.dns_name, dns.ttl))
    if ingress is not None:
        changes += [_cname(record, ingress.dns_name, dns.ttl) for record in dns.ingress_records]
    for change in changes:
        change["Name"] = expand_name(str(change["Name"]), zone)
    route53.change_resource_record_sets(
        HostedZoneId=dns.zone_id,
        ChangeBatch={"Changes": [{"Action": "CREATE", "ResourceRecordSet": c} for c in changes]},
    )
    return [
        Built("route53:record", str(c["Name"]), f"{dns.zone_id}_{c['Name']}_{c['Type']}")
        for c in changes
    ]


def _cname(name: str, target: str, ttl: int) -> dict[str, object]:
    return {"Name": name, "Type": "CNAME", "TTL": ttl, "ResourceRecords": [{"Value": target}]}
