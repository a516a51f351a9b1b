"""Network load balancers in front of the ingress controller and the Kubernetes API.

A target group cannot hold instances of another VPC, so each side of a vpc-move gets
its own LB, target groups and listeners; auto scaling groups register with the
target groups through attachments, which is what a phase adds or removes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

import pulumi
import pulumi_aws as aws

from components.contract.naming import Namer
from components.contract.tags import merge_tags

LbRole = Literal["ingress", "api"]
"""What a load balancer fronts: the ingress controller's node ports or the API servers."""

DEREGISTRATION_DELAY = 30
"""Seconds a deregistered target drains (no new connections, open ones may finish).

One value for every target group. For the API servers it is what kops gives its API
NLB (30 s, pkg/model/awsmodel/api_loadbalancer.go): long enough for in-flight API calls
on a member being moved or replaced to finish, short enough not to stall the phase that
moves it; ingress backends drain the same way.
"""


@dataclass(frozen=True)
class LbListener:
    """A TCP listener forwarding ``port`` to ``target_port`` on the instances."""

    port: int
    target_port: int


@dataclass(frozen=True)
class LoadBalancerArgs:
    """Inputs of :class:`LoadBalancer`."""

    namer: Namer
    role: LbRole
    """Part of every physical name."""
    vpc_id: pulumi.Input[str]
    """VPC of the target groups (their instances must live in it)."""
    subnet_ids: list[pulumi.Input[str]]
    """One subnet per AZ the NLB spans."""
    security_group_ids: list[pulumi.Input[str]]
    listeners: list[LbListener]
    internal: bool = True
    attachments: Mapping[str, pulumi.Input[str]] = field(default_factory=dict)
    """Auto scaling groups registered with every target group, by a stable key."""
    tags: dict[str, str] = field(default_factory=dict)


class LoadBalancer(pulumi.ComponentResource):
    """An NLB with one instance target group + listener per port, and ASG attachments."""

    arn: pulumi.Output[str]
    dns_name: pulumi.Output[str]
    zone_id: pulumi.Output[str]
    target_group_arns: dict[int, pulumi.Output[str]]
    """Target group ARN per listener port."""

    def __init__(
        self, name: str, args: LoadBalancerArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("kubeshift:lb:LoadBalancer", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        lb_name = args.namer.load_balancer(args.role)
        lb = aws.lb.LoadBalancer(
            f"{name}-lb",
            name=lb_name,
            load_balancer_type="network",
            internal=args.internal,
            subnets=args.subnet_ids,
            security_groups=args.security_group_ids,
            enable_cross_zone_load_balancing=True,
            tags=merge_tags(args.tags, {"Name": lb_name}),
            opts=child,
        )
        self.target_group_arns = {}
        for listener in args.listeners:
            tg_name = args.namer.target_group(f"{args.role}-{listener.port}")
            tg = aws.lb.TargetGroup(
                f"{name}-tg-{listener.port}",
                name=tg_name,
                port=listener.target_port,
                protocol="TCP",
                target_type="instance",
                vpc_id=args.vpc_id,
                deregistration_delay=DEREGISTRATION_DELAY,
                health_check={
                    "protocol": "TCP",
                    "port": "traffic-port",
                    "interval": 10,
                    "healthy_threshold": 2,
                    "unhealthy_threshold": 2,
                },
                tags=merge_tags(args.tags, {"Name": tg_name}),
                opts=child,
            )
            aws.lb.Listener(
                f"{name}-listener-{listener.port}",
                load_balancer_arn=lb.arn,
                port=listener.port,
                protocol="TCP",
                default_actions=[{"type": "forward", "target_group_arn": tg.arn}],
                tags=merge_tags(args.tags, {"Name": f"{lb_name}-{listener.port}"}),
                opts=child,
            )
            for key, asg_name in args.attachments.items():
                aws.autoscaling.Attachment(
                    f"{name}-attach-{listener.port}-{key}",
                    autoscaling_group_name=asg_name,
                    lb_target_group_arn=tg.arn,
                    opts=child,
                )
            self.target_group_arns[listener.port] = tg.arn
        self.arn = lb.arn
        self.dns_name = lb.dns_name
        self.zone_id = lb.zone_id
        self.register_outputs(
            {
                "arn": self.arn,
                "dns_name": self.dns_name,
                "target_group_arns": {str(k): v for k, v in self.target_group_arns.items()},
            }
        )
