"""Which EC2 instances of a cluster live in a VPC, and which Kubernetes nodes they are.

The vpc-move scenario taints and drains the old VPC's nodes (seed 001 did it with
``aws ec2 describe-instances --filters tag:KubernetesCluster=… vpc-id=…``). Clusters
are tagged either the legacy way (``KubernetesCluster=<name>``) or the current way
(``kubernetes.io/cluster/<name>`` = owned/shared); EC2 ANDs filters, so each style is
one paginated query and the results are merged. Instances map to node names through
the node's ``spec.providerID`` (``aws:///<az>/<instance-id>``) when the caller has the
nodes, else through the instance's private DNS name (the kubelet's default name).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from automation.core.errors import from_client_error

if TYPE_CHECKING:
    from mypy_boto3_ec2 import EC2Client
    from mypy_boto3_ec2.type_defs import FilterTypeDef, InstanceTypeDef

LEGACY_CLUSTER_TAG = "KubernetesCluster"


def cluster_tag_key(cluster: str) -> str:
    """The current cluster tag key, ``kubernetes.io/cluster/<name>``."""
    return f"kubernetes.io/cluster/{cluster}"


@dataclass(frozen=True)
class ClusterInstance:
    """One EC2 instance of the cluster, with what routing and node matching need."""

    instance_id: str
    availability_zone: str
    vpc_id: str
    subnet_id: str
    private_dns_name: str
    private_ip: str | None
    network_interface_ids: tuple[str, ...] = ()
    state: str = "running"
    source_dest_check: bool = True
    """EC2 drops packets not addressed to the instance; native pod routing needs it off."""
    security_group_ids: tuple[str, ...] = ()
    auto_scaling_group: str | None = None
    """The group that launched it (its ``aws:autoscaling:groupName`` tag)."""

    @property
    def provider_id(self) -> str:
        """The ``spec.providerID`` the AWS cloud provider gives this instance's node."""
        return f"aws:///{self.availability_zone}/{self.instance_id}"


@dataclass(frozen=True)
class NodeMatch:
    """Instances mapped to node names; instances with no node are listed apart."""

    nodes: dict[str, ClusterInstance]
    unmatched: tuple[ClusterInstance, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self.nodes))


def find_cluster_instances(
    ec2: EC2Client,
    *,
    cluster: str,
    vpc_id: str | None = None,
    states: Sequence[str] = ("running",),
) -> tuple[ClusterInstance, ...]:
    """Instances tagged for ``cluster`` (either tag style) in ``vpc_id``, in ``states``.

    Read-only, so it needs no dry-run. Sorted by instance id.
    """
    common: list[FilterTypeDef] = [{"Name": "instance-state-name", "Values": list(states)}]
    if vpc_id:
        common.append({"Name": "vpc-id", "Values": [vpc_id]})
    styles: tuple[list[FilterTypeDef], ...] = (
        [{"Name": f"tag:{LEGACY_CLUSTER_TAG}", "Values": [cluster]}],
        [{"Name": "tag-key", "Values": [cluster_tag_key(cluster)]}],
    )
    found: dict[str, ClusterInstance] = {}
    for style in styles:
        for raw in _describe_instances(ec2, style + common, f"list instances of cluster {cluster}"):
            instance = _to_instance(raw)
            found[instance.instance_id] = instance
    return tuple(found[key] for key in sorted(found))


def _describe_instances(
    ec2: EC2Client, filters: list[FilterTypeDef], action: str
) -> Iterable[InstanceTypeDef]:
    try:
        for page in ec2.get_paginator("describe_instances").paginate(Filters=filters):
            for reservation in page.get("Reservations", []):
                yield from reservation.get("Instances", [])
    except ClientError as exc:
        raise from_client_error(exc, action) from exc


def _to_instance(raw: InstanceTypeDef) -> ClusterInstance:
    enis = tuple(
        eni["NetworkInterfaceId"]
        for eni in sorted(
            raw.get("NetworkInterfaces", []),
            key=lambda e: e.get("Attachment", {}).get("DeviceIndex", 0),
        )
    )
    return ClusterInstance(
        instance_id=raw["InstanceId"],
        availability_zone=raw.get("Placement", {}).get("AvailabilityZone", ""),
        vpc_id=raw.get("VpcId", ""),
        subnet_id=raw.get("SubnetId", ""),
        private_dns_name=raw.get("PrivateDnsName", ""),
        private_ip=raw.get("PrivateIpAddress"),
        network_interface_ids=enis,
        state=raw.get("State", {}).get("Name", ""),
        source_dest_check=raw.get("SourceDestCheck", True),
        security_group_ids=tuple(sorted(g["GroupId"] for g in raw.get("SecurityGroups", []))),
        auto_scaling_group=next(
            (t["Value"] for t in raw.get("Tags", []) if t["Key"] == "aws:autoscaling:groupName"),
            None,
        ),
    )


def instance_id_from_provider_id(provider_id: str | None) -> str | None:
    """``aws:///eu-west-1a/i-0abc`` → ``i-0abc``; None for anything else."""
    if not provider_id or not provider_id.startswith("aws://"):
        return None
    last = provider_id.rstrip("/").rsplit("/", 1)[-1]
    return last if last.startswith("i-") else None


def match_nodes(
    instances: Iterable[ClusterInstance], nodes: Mapping[str, str | None] | None = None
) -> NodeMatch:
    """Map instances to node names.

    ``nodes`` maps each Kubernetes node name to its ``spec.providerID`` (or None). An
    instance matches the node whose providerID names it, else the node named after its
    private DNS name (full or first label). Without ``nodes``, every instance is named
    by its private DNS name, as the kubelet names nodes by default on AWS.
    """
    instances = tuple(instances)
    if nodes is None:
        named = {i.private_dns_name: i for i in instances if i.private_dns_name}
        return NodeMatch(named, tuple(i for i in instances if not i.private_dns_name))
    by_instance_id = {
        iid: name for name, pid in nodes.items() if (iid := instance_id_from_provider_id(pid))
    }
    matched: dict[str, ClusterInstance] = {}
    unmatched: list[ClusterInstance] = []
    for instance in instances:
        name = by_instance_id.get(instance.instance_id)
        if name is None:
            dns = instance.private_dns_name
            candidates = (dns, dns.split(".", 1)[0]) if dns else ()
            name = next((c for c in candidates if c in nodes), None)
        if name is None:
            unmatched.append(instance)
        else:
            matched[name] = instance
    return NodeMatch(matched, tuple(unmatched))


def cluster_node_names(
    ec2: EC2Client,
    *,
    cluster: str,
    vpc_id: str,
    nodes: Mapping[str, str | None] | None = None,
) -> NodeMatch:
    """The Kubernetes nodes of ``cluster`` running in ``vpc_id`` (taint/drain input)."""
    return match_nodes(find_cluster_instances(ec2, cluster=cluster, vpc_id=vpc_id), nodes)
