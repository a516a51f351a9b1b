"""The world a migration runs in, read from outside: moto's inventory, the nodes and
their taints, the workloads and where they run, the DNS records.

Two readings compare equal when nothing anyone would notice differs: the same groups
with the same instances, the same load balancers, target groups with the same
instances registered, the same records, nodes with the same taints and
schedulability, every workload Available. ``kubeshift back`` is judged by it: taking
phases back must leave the world as it was before they ran.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Client = Callable[[str], Any]
"""boto3 client of a service on the sandbox's moto, by service name."""


@dataclass(frozen=True)
class World:
    groups: dict[str, tuple[str, ...]]
    """Auto Scaling group -> its in-service instances."""
    load_balancers: frozenset[str]
    target_groups: dict[str, tuple[str, ...]]
    """Target group -> the running instances registered in it."""
    launch_templates: frozenset[str]
    vpcs: frozenset[str]
    """CIDR blocks of the VPCs."""
    security_groups: frozenset[str]
    records: dict[str, str]
    """``name type`` -> alias target or values."""
    nodes: dict[str, tuple[bool, tuple[str, ...]]]
    """Node -> (unschedulable, taint keys)."""
    workloads: dict[str, bool]
    """``namespace/name`` of each Deployment -> every replica Available."""
    pods_on: frozenset[str]
    """The nodes the Deployments' running pods are on."""

    def differences(self, other: World) -> list[str]:
        """What ``other`` has otherwise, one line per field (``pods_on`` may shrink:
        pods spread back over time)."""
        lines = []
        for name in self.__dataclass_fields__:
            mine, theirs = getattr(self, name), getattr(other, name)
            if name == "pods_on":
                if not theirs <= mine:
                    lines.append(f"pods_on: pods run on {sorted(theirs - mine)} now")
            elif mine != theirs:
                lines.append(f"{name}: {_delta(mine, theirs)}")
        return lines


def _delta(mine: Any, theirs: Any) -> str:
    if isinstance(mine, dict):
        gone = sorted(set(mine) - set(theirs))
        new = sorted(set(theirs) - set(mine))
        changed = sorted(k for k in set(mine) & set(theirs) if mine[k] != theirs[k])
        shown = [f"{k}: {mine[k]} -> {theirs[k]}" for k in changed[:5]]
        return f"gone {gone}, new {new}, changed {shown}"
    return f"gone {sorted(mine - theirs)}, new {sorted(theirs - mine)}"


def read_world(client: Client, kube: Any, zone_id: str) -> World:
    """The world as moto and the primary cluster's API serve it now."""
    return World(**_aws(client, zone_id), **_cluster(kube))


def _aws(client: Client, zone_id: str) -> dict[str, Any]:
    ec2, asg, elbv2 = client("ec2"), client("autoscaling"), client("elbv2")
    running = {
        i["InstanceId"]
        for r in ec2.describe_instances()["Reservations"]
        for i in r["Instances"]
        if i["State"]["Name"] == "running"
    }
    groups = {
        g["AutoScalingGroupName"]: tuple(sorted(i["InstanceId"] for i in g["Instances"]))
        for g in asg.describe_auto_scaling_groups()["AutoScalingGroups"]
    }
    target_groups = {}
    for tg in elbv2.describe_target_groups()["TargetGroups"]:
        health = elbv2.describe_target_health(TargetGroupArn=tg["TargetGroupArn"])
        ids = (t["Target"]["Id"] for t in health["TargetHealthDescriptions"])
        target_groups[tg["TargetGroupName"]] = tuple(sorted(i for i in ids if i in running))
    records = {}
    route53 = client("route53")
    for record in route53.list_resource_record_sets(HostedZoneId=zone_id)["ResourceRecordSets"]:
        alias = (record.get("AliasTarget") or {}).get("DNSName")
        values = sorted(v["Value"] for v in record.get("ResourceRecords") or [])
        records[f"{record['Name']} {record['Type']}"] = alias or ",".join(values)
    return {
        "groups": groups,
        "load_balancers": frozenset(
            lb["LoadBalancerName"] for lb in elbv2.describe_load_balancers()["LoadBalancers"]
        ),
        "target_groups": target_groups,
        "launch_templates": frozenset(
            t["LaunchTemplateName"] for t in ec2.describe_launch_templates()["LaunchTemplates"]
        ),
        "vpcs": frozenset(v["CidrBlock"] for v in ec2.describe_vpcs()["Vpcs"]),
        "security_groups": frozenset(
            g["GroupName"] for g in ec2.describe_security_groups()["SecurityGroups"]
        ),
        "records": records,
    }


def _cluster(kube: Any) -> dict[str, Any]:
    import kubernetes

    core, apps = kubernetes.client.CoreV1Api(kube), kubernetes.client.AppsV1Api(kube)
    nodes = {
        n.metadata.name: (
            bool(n.spec.unschedulable),
            tuple(sorted(t.key for t in n.spec.taints or [])),
        )
        for n in core.list_node().items
    }
    workloads = {
        f"{d.metadata.namespace}/{d.metadata.name}": (d.status.available_replicas or 0)
        >= (d.spec.replicas or 0)
        for d in apps.list_deployment_for_all_namespaces().items
    }
    pods_on = frozenset(
        p.spec.node_name
        for p in core.list_pod_for_all_namespaces().items
        if p.spec.node_name
        and p.status.phase == "Running"
        and any(o.kind == "ReplicaSet" for o in p.metadata.owner_references or [])
    )
    return {"nodes": nodes, "workloads": workloads, "pods_on": pods_on}
