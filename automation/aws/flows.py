"""Traffic still reaching a load balancer, as CloudWatch counts it: the DNS drain's evidence.

Clients resolve a record and keep the answer for its TTL (and some resolvers and
clients longer), so a load balancer still receives traffic for a while after its records
moved away. Before kubeshift deletes one, it asks CloudWatch whether anything still
arrives: Elastic Load Balancing publishes, per load balancer and per minute,
``NewFlowCount`` in ``AWS/NetworkELB`` (network load balancers: new connections) and
``RequestCount`` in ``AWS/ApplicationELB`` (application load balancers) and ``AWS/ELB``
(classic), each with the ``Sum`` statistic, under the dimension ``LoadBalancer`` — the
ARN's part after ``loadbalancer/`` (``net/<name>/<id>``) — or ``LoadBalancerName`` for a
classic one (AWS, "CloudWatch metrics for your Network Load Balancer" and "… for your
Application Load Balancer"). A minute with no traffic has no datapoint, so "no
datapoint" reads as zero. Needs ``cloudwatch:GetMetricStatistics`` and
``elasticloadbalancing:DescribeLoadBalancers``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from automation.core.errors import from_client_error
from automation.core.waiting import Pending

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch import CloudWatchClient
    from mypy_boto3_elb import ElasticLoadBalancingClient
    from mypy_boto3_elbv2 import ElasticLoadBalancingv2Client

PERIOD = 60  # seconds: ELB publishes one datapoint per minute


@dataclass(frozen=True)
class TrafficMetric:
    """Where CloudWatch counts one load balancer's new traffic."""

    balancer: str  # the load balancer's name, for people
    namespace: str
    metric: str
    dimension: tuple[str, str]

    @classmethod
    def of_v2(cls, arn: str, name: str, kind: str) -> TrafficMetric:
        """An application, network or gateway load balancer, from its ARN."""
        value = arn.split(":loadbalancer/", 1)[-1]
        if kind == "network":
            return cls(name, "AWS/NetworkELB", "NewFlowCount", ("LoadBalancer", value))
        return cls(name, "AWS/ApplicationELB", "RequestCount", ("LoadBalancer", value))

    @classmethod
    def of_classic(cls, name: str) -> TrafficMetric:
        """A classic load balancer (what the AWS cloud provider makes for a Service by
        default); ``RequestCount`` counts its HTTP listeners' requests only."""
        return cls(name, "AWS/ELB", "RequestCount", ("LoadBalancerName", name))


def metrics_for(
    elbv2: ElasticLoadBalancingv2Client,
    elb: ElasticLoadBalancingClient,
    dns_names: Iterable[str],
) -> list[TrafficMetric]:
    """The traffic metric of each load balancer, of either API, answering at one of
    ``dns_names`` (one that no longer exists has none: nothing can reach it)."""
    wanted = {name.lower().rstrip(".") for name in dns_names}
    if not wanted:
        return []
    found: list[TrafficMetric] = []
    try:
        for page in elbv2.get_paginator("describe_load_balancers").paginate():
            for lb in page.get("LoadBalancers", []):
                if str(lb.get("DNSName", "")).lower() in wanted:
                    arn, name = lb["LoadBalancerArn"], lb["LoadBalancerName"]
                    found.append(TrafficMetric.of_v2(arn, name, str(lb.get("Type", ""))))
        for classic_page in elb.get_paginator("describe_load_balancers").paginate():
            for classic in classic_page.get("LoadBalancerDescriptions", []):
                if str(classic.get("DNSName", "")).lower() in wanted:
                    found.append(TrafficMetric.of_classic(classic["LoadBalancerName"]))
    except ClientError as exc:
        raise from_client_error(exc, "describe load balancers") from exc
    return found


def recent_traffic(
    cloudwatch: CloudWatchClient,
    metric: TrafficMetric,
    minutes: int,
    now: dt.datetime,
) -> float:
    """How many new flows or requests ``metric`` counted over the last ``minutes``."""
    try:
        response: Any = cloudwatch.get_metric_statistics(
            Namespace=metric.namespace,
            MetricName=metric.metric,
            Dimensions=[{"Name": metric.dimension[0], "Value": metric.dimension[1]}],
            StartTime=now - dt.timedelta(minutes=minutes),
            EndTime=now,
            Period=PERIOD,
            Statistics=["Sum"],
        )
    except ClientError as exc:
        raise from_client_error(exc, f"read {metric.metric} of {metric.balancer}") from exc
    return float(sum(point.get("Sum", 0.0) for point in response.get("Datapoints", [])))


def traffic_pending(
    cloudwatch: CloudWatchClient,
    metrics: Sequence[TrafficMetric],
    minutes: int,
    clock: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
) -> Pending:
    """Pending while any of ``metrics`` counted traffic in the last ``minutes``."""
    now = clock()
    flowing = []
    for metric in metrics:
        count = recent_traffic(cloudwatch, metric, minutes, now)
        if count > 0:
            unit = "new flows" if metric.metric == "NewFlowCount" else "requests"
            flowing.append(f"{metric.balancer}: {count:g} {unit} in the last {minutes} min")
    quiet = len(metrics) - len(flowing)
    return Pending.of(flowing, f"{quiet}/{len(metrics)} load balancers without traffic")
