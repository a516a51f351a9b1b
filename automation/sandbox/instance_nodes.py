"""Instances and the Nodes they become: what the node bridge needs of one EC2
instance, and the Node a kubelet (with the cloud controller's help) registers for it.

The Node is named after the instance's private DNS name, with ``spec.providerID =
aws:///<az>/<instance-id>``, the cloud's zone/region/instance-type labels, its
addresses, an approximate capacity for its instance type, and the labels and taints its
kubelet registers with (:mod:`automation.sandbox.kubelet_flags`); a control-plane
member gets the role label and ``NoSchedule`` taint kops-controller adds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from automation.sandbox.kubelet_flags import KubeletFlags
from components.contract.userdata import LIFECYCLE_LABEL

CONTROL_PLANE_ROLE = "node-role.kubernetes.io/control-plane"
MEMBER_TAGS = ("kubeshift.io/member", "k8s.io/role/master", "k8s.io/role/control-plane")
MAX_PODS = "110"

_ARCH = {"x86_64": "amd64", "arm64": "arm64", "i386": "386"}
_GIB_PER_VCPU = {"c": 2, "m": 4, "t": 4, "r": 8, "x": 16, "z": 8}
_SIZES = {"nano": 2, "micro": 2, "small": 2, "medium": 2, "large": 2, "xlarge": 4, "metal": 96}


@dataclass(frozen=True)
class Instance:
    """What the bridge needs of one EC2 instance."""

    instance_id: str
    zone: str
    private_dns_name: str
    private_ip: str
    instance_type: str = ""
    architecture: str = "x86_64"
    spot: bool = False
    public_ip: str = ""
    tags: Mapping[str, str] = field(default_factory=dict)
    subnet_id: str = ""
    image_id: str = ""

    @classmethod
    def from_ec2(cls, raw: Mapping[str, Any]) -> Instance:
        return cls(
            instance_id=raw["InstanceId"],
            zone=(raw.get("Placement") or {}).get("AvailabilityZone", ""),
            private_dns_name=raw.get("PrivateDnsName") or "",
            private_ip=raw.get("PrivateIpAddress") or "",
            instance_type=raw.get("InstanceType") or "",
            architecture=raw.get("Architecture") or "x86_64",
            spot=raw.get("InstanceLifecycle") == "spot",
            public_ip=raw.get("PublicIpAddress") or "",
            tags={t["Key"]: t["Value"] for t in raw.get("Tags") or []},
            subnet_id=raw.get("SubnetId") or "",
            image_id=raw.get("ImageId") or "",
        )

    @property
    def provider_id(self) -> str:
        return f"aws:///{self.zone}/{self.instance_id}"

    @property
    def region(self) -> str:
        return self.zone[:-1] if self.zone[-1:].isalpha() else self.zone

    @property
    def control_plane(self) -> bool:
        return any(self.tags.get(tag) for tag in MEMBER_TAGS)


def capacity(instance_type: str) -> dict[str, str]:
    """Approximate capacity of an instance type (vCPUs by size, memory by family)."""
    family, _, size = instance_type.partition(".")
    multiple = re.fullmatch(r"(\d+)xlarge", size)
    cpus = 4 * int(multiple.group(1)) if multiple else _SIZES.get(size, 2)
    memory = cpus * _GIB_PER_VCPU.get(family[:1], 4)
    return {
        "cpu": str(cpus),
        "memory": f"{memory}Gi",
        "pods": MAX_PODS,
        "ephemeral-storage": "100Gi",
    }


def node_manifest(
    instance: Instance,
    flags: KubeletFlags,
    *,
    pod_cidr: str | None,
    extra_labels: Mapping[str, str],
) -> dict[str, Any]:
    """The Node a kubelet (with the cloud controller's help) registers for ``instance``."""
    name = instance.private_dns_name
    labels = {
        LIFECYCLE_LABEL: "spot" if instance.spot else "on-demand",
        **flags.labels,
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": _ARCH.get(instance.architecture, instance.architecture),
        "topology.kubernetes.io/zone": instance.zone,
        "topology.kubernetes.io/region": instance.region,
        **(
            {"node.kubernetes.io/instance-type": instance.instance_type}
            if instance.instance_type
            else {}
        ),
        **({CONTROL_PLANE_ROLE: ""} if instance.control_plane else {}),
        **extra_labels,
    }
    taints = {(k, e): (k, v, e) for k, v, e in flags.taints}
    if instance.control_plane:
        taints.setdefault(
            (CONTROL_PLANE_ROLE, "NoSchedule"), (CONTROL_PLANE_ROLE, "", "NoSchedule")
        )
    addresses = [{"type": "InternalIP", "address": instance.private_ip}]
    if instance.public_ip:
        addresses.append({"type": "ExternalIP", "address": instance.public_ip})
    addresses += [{"type": "InternalDNS", "address": name}, {"type": "Hostname", "address": name}]
    spec: dict[str, Any] = {
        "providerID": instance.provider_id,
        "taints": [
            {"key": k, "effect": e, **({"value": v} if v else {})} for k, v, e in taints.values()
        ],
    }
    if pod_cidr:
        spec.update(podCIDR=pod_cidr, podCIDRs=[pod_cidr])
    size = capacity(instance.instance_type)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
        "status": {"addresses": addresses, "capacity": size, "allocatable": size},
    }
