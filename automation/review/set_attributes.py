"""The attributes pulumi-aws keeps as sets, by resource type: their order means nothing.

Terraform's ``TypeSet`` values have no order: the provider's diff ignores it, and the
bridge writes them into the outputs in the set's own (hash) order, which is seldom the
order a program declares them in. Compared in order, such an attribute would count as
changed at every phase. Listed for the types kubeshift declares, from
terraform-provider-aws (``internal/service/autoscaling/group.go``: ``availability_zones``,
``enabled_metrics``, ``load_balancers``, ``suspended_processes``, ``tag``,
``target_group_arns``, ``vpc_zone_identifier``; ``internal/service/elbv2/load_balancer.go``:
``security_groups``, ``subnets``; ``internal/service/ec2/ec2_launch_template.go``:
``vpc_security_group_ids``; ``internal/service/ec2/vpc_network_interface.go``:
``security_groups``, ``private_ips``, ``ipv6_addresses``; ``internal/service/elbv2/
target_group.go``: ``load_balancer_arns``), under their Pulumi names.
"""

from __future__ import annotations

from collections.abc import Mapping

SET_ATTRIBUTES: Mapping[str, frozenset[str]] = {
    "aws:autoscaling/group:Group": frozenset(
        {
            "availabilityZones",
            "enabledMetrics",
            "loadBalancers",
            "suspendedProcesses",
            "tags",
            "targetGroupArns",
            "vpcZoneIdentifiers",
        }
    ),
    "aws:lb/loadBalancer:LoadBalancer": frozenset({"securityGroups", "subnets"}),
    "aws:ec2/launchTemplate:LaunchTemplate": frozenset({"vpcSecurityGroupIds"}),
    "aws:ec2/networkInterface:NetworkInterface": frozenset(
        {"securityGroups", "privateIps", "ipv6Addresses"}
    ),
    "aws:lb/targetGroup:TargetGroup": frozenset({"loadBalancerArns"}),
}
