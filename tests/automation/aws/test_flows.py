"""Traffic still reaching a load balancer, read from CloudWatch on moto (real HTTP)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from automation.aws.clients import AwsClients
from automation.aws.flows import TrafficMetric, metrics_for, traffic_pending
from tests.support.moto_world import make_network

NOW = dt.datetime.now(dt.UTC).replace(microsecond=0)


def _balancer(aws: AwsClients, name: str, kind: str = "network") -> dict[str, Any]:
    net = make_network(aws.ec2, subnet="10.0.1.0/24")
    made = aws.elbv2.create_load_balancer(Name=name, Subnets=[net.subnet_id], Type=kind)
    return dict(made["LoadBalancers"][0])


def _count(aws: AwsClients, metric: TrafficMetric, value: float, minutes_ago: float) -> None:
    aws.cloudwatch.put_metric_data(
        Namespace=metric.namespace,
        MetricData=[
            {
                "MetricName": metric.metric,
                "Dimensions": [{"Name": metric.dimension[0], "Value": metric.dimension[1]}],
                "Timestamp": NOW - dt.timedelta(minutes=minutes_ago),
                "Value": value,
                "Unit": "Count",
            }
        ],
    )


@pytest.mark.moto
def test_a_network_load_balancer_with_new_flows_is_named_until_they_age_out(
    aws: AwsClients,
) -> None:
    old = _balancer(aws, "web-old")
    [metric] = metrics_for(aws.elbv2, aws.elb, [old["DNSName"].upper() + "."])
    assert metric == TrafficMetric(
        "web-old",
        "AWS/NetworkELB",
        "NewFlowCount",
        ("LoadBalancer", old["LoadBalancerArn"].split(":loadbalancer/")[1]),
    )
    assert traffic_pending(aws.cloudwatch, [metric], 3, clock=lambda: NOW).done
    _count(aws, metric, 12, minutes_ago=1)
    _count(aws, metric, 3, minutes_ago=2)
    pending = traffic_pending(aws.cloudwatch, [metric], 3, clock=lambda: NOW)
    assert pending.items == ("web-old: 15 new flows in the last 3 min",)
    later = NOW + dt.timedelta(minutes=4)
    assert traffic_pending(aws.cloudwatch, [metric], 3, clock=lambda: later).done


@pytest.mark.moto
def test_another_load_balancers_traffic_does_not_count(aws: AwsClients) -> None:
    old, busy = _balancer(aws, "web-old"), _balancer(aws, "web-new")
    [old_metric] = metrics_for(aws.elbv2, aws.elb, [old["DNSName"]])
    [busy_metric] = metrics_for(aws.elbv2, aws.elb, [busy["DNSName"]])
    _count(aws, busy_metric, 40, minutes_ago=1)
    assert traffic_pending(aws.cloudwatch, [old_metric], 3, clock=lambda: NOW).done
    assert not traffic_pending(aws.cloudwatch, [busy_metric], 3, clock=lambda: NOW).done


@pytest.mark.moto
def test_application_and_classic_load_balancers_count_requests(aws: AwsClients) -> None:
    app = _balancer(aws, "api-old", kind="application")
    net = make_network(aws.ec2, cidr="10.1.0.0/16", subnet="10.1.1.0/24")
    classic = aws.elb.create_load_balancer(
        LoadBalancerName="svc-mirror",
        Listeners=[{"Protocol": "TCP", "LoadBalancerPort": 80, "InstancePort": 30080}],
        Subnets=[net.subnet_id],
    )
    metrics = metrics_for(aws.elbv2, aws.elb, [app["DNSName"], classic["DNSName"]])
    by_name = {m.balancer: m for m in metrics}
    assert by_name["api-old"].namespace == "AWS/ApplicationELB"
    assert by_name["svc-mirror"] == TrafficMetric(
        "svc-mirror", "AWS/ELB", "RequestCount", ("LoadBalancerName", "svc-mirror")
    )
    _count(aws, by_name["svc-mirror"], 7, minutes_ago=0.5)
    pending = traffic_pending(aws.cloudwatch, metrics, 3, clock=lambda: NOW)
    assert pending.items == ("svc-mirror: 7 requests in the last 3 min",)
    assert pending.detail == "1/2 load balancers without traffic"


@pytest.mark.moto
def test_a_load_balancer_already_gone_has_nothing_to_drain(aws: AwsClients) -> None:
    assert metrics_for(aws.elbv2, aws.elb, ["gone-123.elb.us-west-2.amazonaws.com"]) == []
    assert traffic_pending(aws.cloudwatch, [], 3).done
