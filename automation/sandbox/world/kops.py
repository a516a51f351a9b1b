"""The names kops gives a cluster's resources, for the sandbox's foreign-built world.

kops names what it builds after the cluster's DNS name (``<cluster>.k8s.local`` for a
gossip cluster) and its instance groups: an instance group's Auto Scaling group and
launch template are ``<group>.<cluster domain>`` (``master-<zone>-<n>.masters.<…>`` for
control-plane members), its security groups and IAM roles are ``nodes.<…>`` and
``masters.<…>`` (instance profiles share the role's name), the API load balancer is
``api-<cluster>-<hash>`` and its target group ``tcp-<cluster>-<hash>``, trimmed to the
32 characters AWS allows; a role's inline policy carries the role's name
(:func:`kops_policy`, which the program does not declare: kubeshift's grants are a
policy of their own). kops builds no ingress load balancer: adoption adds
kubeshift's, under kubeshift's names.

The mapping is keyed as ``kubeshift:cluster.names`` is: ``<kind>:<kubeshift's name>``.

Every launch template boots nodeup, kops's node agent (:func:`nodeup_script`), not
kubeshift's script: the node's settings come from kops's state store, its labels from
kops-controller, after its instance group, and a member's etcd volume is claimed by
etcd-manager, by tags.

kops also opens its groups in its own way (:data:`KOPS_RULES`, after kops's firewall
model): every member and node admits its own role, members admit nodes on every port
but etcd's, both admit SSH from anywhere, the API load balancer's group admits HTTPS
and path-MTU ICMP from anywhere and reaches the members on 443, and each group may
send anything anywhere over IPv4 and IPv6; with Calico, members admit the nodes' IP-in-IP
(:data:`CALICO_RULES`). None of this is in kubeshift's program: it
is the world's own, found by ``adopt``, listed and left alone.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from automation.adoption.proposal import EVENTS_TAG, MAIN_ETCD_TAG

_LB_LIMIT = 32
"""Characters AWS allows in a load balancer's or target group's name."""


def domain(cluster: str) -> str:
    """A gossip cluster's DNS name, as kops spells it."""
    return f"{cluster}.k8s.local"


def _short_hash(text: str) -> str:
    digest = hashlib.sha1(text.encode()).digest()  # a name's hash, not a secret
    return base64.b32encode(digest).decode().lower()[:6]


def load_balancer_name(prefix: str, cluster: str, derived: str) -> str:
    """kops's name of a load balancer or target group: ``<prefix>-<cluster>-<hash of
    derived>``, trimmed to the 32 characters AWS allows."""
    tail = f"-{_short_hash(derived)}"
    head = f"{prefix}-{cluster}"[: _LB_LIMIT - len(tail)].rstrip("-")
    return head + tail


def etcd_volume_name(member: str, cluster: str) -> str:
    """What kops names ``member``'s main etcd volume (etcd-manager's ``etcd-main``) in
    the cluster kops names ``cluster`` (its DNS name)."""
    return f"{member}.etcd-main.{cluster}"


DESCRIPTIONS: Mapping[str, str] = {
    "masters": "Security group for masters",
    "nodes": "Security group for nodes",
    "api-elb": "Security group for api ELB",
}
"""What kops says its three security groups are for (kops's firewall and API load
balancer models); the groups it does not build keep the program's."""


STATE_STORE = "kops-state-store"
"""The S3 bucket of kops's state store: each node reads its cluster's settings there."""


def _allow(
    sid: str, actions: list[str], resource: str = "*", condition: Mapping[str, str] | None = None
) -> dict[str, Any]:
    statement: dict[str, Any] = {"Sid": sid, "Effect": "Allow", "Action": actions}
    statement["Resource"] = resource
    if condition:
        statement["Condition"] = {"StringEquals": dict(condition)}
    return statement


def kops_policy(role: Literal["masters", "nodes"], cluster: str) -> tuple[str, str]:
    """The inline policy kops gives ``role`` of the cluster it names ``cluster`` (its DNS
    name; after kops's strict IAM model): its name (the role's) and its document.
    Members read EC2, Auto Scaling and ELB, attach and tag the cluster's volumes, route
    and scale within the cluster's resources; both read the cluster's part of the state
    store. kubeshift declares none of it: an adoption lists it and leaves it alone."""
    dns = cluster
    owned = {"aws:ResourceTag/KubernetesCluster": cluster}
    store = [
        _allow("kopsK8sS3GetListBucket", ["s3:GetBucketLocation", "s3:ListBucket"],
               f"arn:aws:s3:::{STATE_STORE}"),
        _allow("kopsK8sS3NodeBucketSelectiveGet", ["s3:Get*"],
               f"arn:aws:s3:::{STATE_STORE}/{dns}/*"),
    ]  # fmt: skip
    if role == "nodes":
        statements = [
            _allow("kopsK8sEC2NodePerms", ["ec2:DescribeInstances", "ec2:DescribeRegions"]),
            *store,
        ]
    else:
        statements = [
            _allow("kopsK8sDescribe", [
                "autoscaling:DescribeAutoScalingGroups", "autoscaling:DescribeTags",
                "ec2:DescribeInstances", "ec2:DescribeRouteTables", "ec2:DescribeSecurityGroups",
                "ec2:DescribeSubnets", "ec2:DescribeVolumes", "ec2:DescribeVpcs",
                "elasticloadbalancing:DescribeLoadBalancers",
                "elasticloadbalancing:DescribeTargetGroups",
            ]),
            _allow("kopsK8sEC2MasterPermsTaggedResources", [
                "ec2:AttachVolume", "ec2:CreateRoute", "ec2:DeleteRoute", "ec2:DetachVolume",
                "ec2:ModifyInstanceAttribute",
            ], condition=owned),
            _allow("kopsK8sASMasterPermsTaggedResources", [
                "autoscaling:SetDesiredCapacity",
                "autoscaling:TerminateInstanceInAutoScalingGroup",
            ], condition=owned),
            _allow("kopsK8sEtcdManagerTagVolumes", ["ec2:CreateTags"],
                   "arn:aws:ec2:*:*:volume/*", owned),
            *store,
        ]  # fmt: skip
    document = {"Version": "2012-10-17", "Statement": statements}
    return f"{role}.{dns}", json.dumps(document)


NODEUP_VERSION = "1.28.4"


def nodeup_script(
    instance_group: str, cluster_domain: str, role: str = "Node", *, config_hash: str
) -> str:
    """The boot script kops writes into an instance group's launch template (``role``:
    ``Node`` or ``ControlPlane``): it fetches nodeup, leaves the group's bootstrap
    settings where nodeup reads them, and runs it; nodeup then reads the rest of the
    node's configuration from the state store (the group's file, whose hash
    ``config_hash`` is: :mod:`automation.sandbox.world.state_store`), kops-controller
    labels the node after its instance group, and on a member etcd-manager claims its
    etcd volume by tags."""
    url = f"https://artifacts.k8s.io/binaries/kops/{NODEUP_VERSION}/linux/amd64/nodeup"
    return "\n".join(
        [
            "#!/bin/bash",
            "set -o errexit",
            "set -o nounset",
            "set -o pipefail",
            "",
            f"NODEUP_URL_AMD64={url}",
            f"NODEUP_HASH_AMD64={hashlib.sha256(url.encode()).hexdigest()}",
            "",
            "mkdir -p /opt/kops/conf",
            "cat > /opt/kops/conf/kube_env.yaml << '__EOF_KUBE_ENV'",
            "CloudProvider: aws",
            f"ClusterName: {cluster_domain}",
            f"ConfigBase: s3://{STATE_STORE}/{cluster_domain}",
            f"InstanceGroupName: {instance_group}",
            f"InstanceGroupRole: {role}",
            f"NodeupConfigHash: {config_hash}",
            "__EOF_KUBE_ENV",
            "",
            'curl -fsSL --retry 5 -o /opt/kops/bin/nodeup "${NODEUP_URL_AMD64}"',
            'echo "${NODEUP_HASH_AMD64}  /opt/kops/bin/nodeup" | sha256sum -c -',
            "chmod +x /opt/kops/bin/nodeup",
            "/opt/kops/bin/nodeup --conf=/opt/kops/conf/kube_env.yaml --v=8",
            'echo "== nodeup node config done =="',
            "",
        ]
    )


ETCD_MAIN_TAG = MAIN_ETCD_TAG
"""kops's tag on a member's etcd volume: ``<member>/<every member>``."""
EVENTS_VOLUME_SIZE = 20
"""GiB: kops's default size of an etcd volume."""


def etcd_tag_value(member: str, members: int) -> str:
    """kops's etcd tag value: ``<member>/<every member>``, members numbered 1 to ``members``."""
    return f"{member}/{','.join(str(n) for n in range(1, members + 1))}"


def events_volume_tags(cluster: str, member: str, members: int) -> dict[str, str]:
    """The tags kops gives member ``member``'s events volume in the cluster it names
    ``cluster`` (its DNS name; the program does not declare it: kubeshift moves the main
    etcd only)."""
    return {
        "Name": f"{member}.etcd-events.{cluster}",
        "KubernetesCluster": cluster,
        f"kubernetes.io/cluster/{cluster}": "owned",
        "k8s.io/role/master": "1",
        EVENTS_TAG: etcd_tag_value(member, members),
    }


KOPS_GROUP_METRICS = (
    "GroupDesiredCapacity", "GroupInServiceInstances", "GroupMaxSize", "GroupMinSize",
    "GroupPendingInstances", "GroupStandbyInstances", "GroupTerminatingInstances",
    "GroupTotalInstances",
)  # fmt: skip
"""What kops has every instance group's Auto Scaling group collect, each minute."""
NODE_ROOT_VOLUME_SIZE = 128
"""GiB: kops's default root volume of a node (``DefaultVolumeSizeNode``)."""
METADATA_HOP_LIMIT = 1
"""kops's IMDSv2 response hop limit: pods on the node's network do not reach it."""


KopsRole = Literal["masters", "nodes", "api-elb"]
ANYWHERE, ANYWHERE_V6 = "0.0.0.0/0", "::/0"


@dataclass(frozen=True)
class KopsRule:
    """One rule kops adds to a group of its own: ``peer`` is a CIDR or another role."""

    group: KopsRole
    protocol: str  # tcp | udp | icmp | -1 (all) | an IP protocol number (no ports)
    from_port: int
    to_port: int
    peer: str
    egress: bool = False

    @property
    def ported(self) -> bool:
        """Whether the rule has a port range (or ICMP type and code): AWS ignores ports
        for "all" and for any other IP protocol."""
        return self.protocol in ("tcp", "udp", "icmp")

    def name(self, dns: str) -> str:
        """kops's ``Name`` tag: ``from-<peer>-<direction>-<protocol>-<from>to<to>-<group>``."""
        protocol = "all" if self.protocol == "-1" else self.protocol
        ports = f"{self.from_port}to{self.to_port}" if self.ported else "0to0"
        peer = self.peer if "/" in self.peer else f"{self.peer}.{dns}"
        if self.egress:
            return f"from-{self.group}.{dns}-egress-{protocol}-{ports}-{peer}"
        return f"from-{peer}-ingress-{protocol}-{ports}-{self.group}.{dns}"


def _everything(group: KopsRole, peer: str, *, egress: bool = False) -> KopsRule:
    return KopsRule(group, "-1", 0, 0, peer, egress)


KOPS_RULES: tuple[KopsRule, ...] = (
    *(_everything(role, cidr, egress=True)
      for role in ("masters", "nodes", "api-elb") for cidr in (ANYWHERE, ANYWHERE_V6)),
    _everything("masters", "masters"),
    _everything("nodes", "nodes"),
    _everything("nodes", "masters"),
    # nodes reach the members on every port but etcd's peer and client ports
    KopsRule("masters", "tcp", 1, 2379, "nodes"),
    KopsRule("masters", "tcp", 2382, 4000, "nodes"),
    KopsRule("masters", "tcp", 4003, 65535, "nodes"),
    KopsRule("masters", "udp", 1, 65535, "nodes"),
    KopsRule("masters", "tcp", 22, 22, ANYWHERE),
    KopsRule("nodes", "tcp", 22, 22, ANYWHERE),
    KopsRule("api-elb", "tcp", 443, 443, ANYWHERE),
    KopsRule("api-elb", "icmp", 3, 4, ANYWHERE),  # path-MTU discovery
    KopsRule("masters", "tcp", 443, 443, "api-elb"),
)  # fmt: skip
"""The rules kops's firewall model gives a cluster's three groups (IPv4 and IPv6
egress, roles admitting each other, SSH and the API from anywhere)."""

CALICO_RULES: tuple[KopsRule, ...] = (KopsRule("masters", "4", 0, 0, "nodes"),)
"""What kops adds when the cluster runs Calico: the members admit the nodes' IP-in-IP
(protocol 4), the encapsulation of Calico's IPIP mode. Nodes admit each other already."""


def rules_for(calico: bool) -> tuple[KopsRule, ...]:
    """kops's rules for a cluster, with Calico's when it runs Calico."""
    return KOPS_RULES + CALICO_RULES if calico else KOPS_RULES
