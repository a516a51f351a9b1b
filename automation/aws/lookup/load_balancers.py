"""Network load balancers, their target groups and listeners."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from automation.aws.lookup.model import Found, Lookup, Missing, Props, finds, only


def _named(describe: Callable[..., Any], field: str, name: str) -> list[dict[str, Any]]:
    """What ``describe(Names=[name])`` lists under ``field``; none when AWS says not found
    (ELBv2 answers an unknown name with an error, not an empty list)."""
    try:
        return list(describe(Names=[name])[field])
    except ClientError as exc:
        if "NotFound" in exc.response.get("Error", {}).get("Code", ""):
            return []
        raise


@finds("aws:lb/loadBalancer:LoadBalancer")
def load_balancer(lookup: Lookup, name: str, inputs: Props) -> Found:
    """The load balancer with the declared name (unique per region); id = its ARN."""
    lb_name = inputs["name"]
    balancers = _named(lookup.clients.elbv2.describe_load_balancers, "LoadBalancers", lb_name)
    arn = only(name, f"load balancer {lb_name}", [b["LoadBalancerArn"] for b in balancers])
    live = next(b for b in balancers if b["LoadBalancerArn"] == arn)
    return Found(
        arn,
        arn,
        {
            "arn": arn,
            "dnsName": live["DNSName"],
            "zoneId": live.get("CanonicalHostedZoneId", ""),
            "arnSuffix": arn.split(":loadbalancer/", 1)[-1],
        },
    )


@finds("aws:lb/targetGroup:TargetGroup")
def target_group(lookup: Lookup, name: str, inputs: Props) -> Found:
    """The target group with the declared name (unique per region); id = its ARN."""
    group_name = inputs["name"]
    groups = _named(lookup.clients.elbv2.describe_target_groups, "TargetGroups", group_name)
    arn = only(name, f"target group {group_name}", [g["TargetGroupArn"] for g in groups])
    return Found(
        arn, arn, {"arn": arn, "arnSuffix": "targetgroup/" + arn.split(":targetgroup/", 1)[-1]}
    )


@finds("aws:lb/listener:Listener")
def listener(lookup: Lookup, name: str, inputs: Props) -> Found:
    """The load balancer's listener on the declared port; id = its ARN."""
    lb_arn, port = inputs["loadBalancerArn"], int(inputs["port"])
    pages = lookup.clients.elbv2.get_paginator("describe_listeners").paginate(
        LoadBalancerArn=lb_arn
    )
    listeners = [entry for page in pages for entry in page["Listeners"]]
    if not listeners and not lb_arn.startswith("arn:"):
        raise Missing(f"{name}: {lb_arn} is not a load balancer ARN.")
    arn = only(
        name,
        f"listener on port {port} of {lb_arn}",
        [entry["ListenerArn"] for entry in listeners if entry["Port"] == port],
    )
    return Found(arn, arn, {"arn": arn})
