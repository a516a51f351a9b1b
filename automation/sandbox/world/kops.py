"""The names kops gives a cluster's resources, for the sandbox's foreign-built world.

kops names what it builds after the cluster's DNS name (``<cluster>.k8s.local`` for a
gossip cluster) and its instance groups: an instance group's Auto Scaling group and
launch template are ``<group>.<cluster domain>`` (``master-<zone>-<n>.masters.<…>`` for
control-plane members), its security groups and IAM roles are ``nodes.<…>`` and
``masters.<…>`` (instance profiles share the role's name), the API load balancer is
``api-<cluster>-<hash>`` and its target group ``tcp-<cluster>-<hash>``, trimmed to the
32 characters AWS allows; a role's inline policy carries the role's name
(:func:`kops_policy`, which the program does not declare: kubeshift's grants are a
policy of their own). Resources
kops does not build (the ingress load balancer and its group) get names in the
same style.

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
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from automation.adoption.proposal import EVENTS_TAG, MAIN_ETCD_TAG
from components.naming import NameKind, kind_key, physical_name

KINDS: Mapping[str, NameKind] = {
    "aws:autoscaling/group:Group": NameKind.AUTOSCALING_GROUP,
    "aws:ec2/launchTemplate:LaunchTemplate": NameKind.LAUNCH_TEMPLATE,
    "aws:ec2/securityGroup:SecurityGroup": NameKind.SECURITY_GROUP,
    "aws:iam/role:Role": NameKind.IAM_ROLE,
    "aws:iam/instanceProfile:InstanceProfile": NameKind.INSTANCE_PROFILE,
    "aws:lb/loadBalancer:LoadBalancer": NameKind.LOAD_BALANCER,
    "aws:lb/targetGroup:TargetGroup": NameKind.TARGET_GROUP,
}
VOLUME = "aws:ebs/volume:Volume"
_ZONE = re.compile(r"[a-z]{2}(?:-gov)?-[a-z]+-\d[a-z]")
_GROUP_ROLES = {"node": "nodes", "control-plane": "masters", "api-lb": "api-elb"}
_LB_LIMIT = 32


def domain(cluster: str) -> str:
    """A gossip cluster's DNS name, as kops spells it."""
    return f"{cluster}.k8s.local"


def _short_hash(text: str) -> str:
    digest = hashlib.sha1(text.encode()).digest()  # a name's hash, not a secret
    return base64.b32encode(digest).decode().lower()[:6]


def load_balancer_name(prefix: str, cluster: str, derived: str) -> str:
    tail = f"-{_short_hash(derived)}"
    head = f"{prefix}-{cluster}"[: _LB_LIMIT - len(tail)].rstrip("-")
    return head + tail


def _zone_of(resource: Mapping[str, Any]) -> str:
    found = _ZONE.search(str(resource.get("vpcZoneIdentifiers") or ""))
    return found.group(0) if found else ""


def kops_name(kind: NameKind, cluster: str, derived: str, zone: str = "") -> str:
    """What kops would have called the resource kubeshift names ``derived`` (``zone``:
    a control-plane member's, which names its instance group)."""
    dns = domain(cluster)
    role = derived.removeprefix(f"{cluster}-")
    member = re.fullmatch(r"control-plane-(\d+)", role)
    if kind in (NameKind.AUTOSCALING_GROUP, NameKind.LAUNCH_TEMPLATE):
        if member:
            group = f"master-{zone}-{member.group(1)}" if zone else f"master-{member.group(1)}"
            return f"{group}.masters.{dns}"
        return f"{role.removeprefix('workers-')}.{dns}"
    if kind is NameKind.SECURITY_GROUP:
        return f"{_GROUP_ROLES.get(role, role)}.{dns}"
    if kind in (NameKind.IAM_ROLE, NameKind.INSTANCE_PROFILE):
        return f"masters.{dns}" if role.startswith("control-plane") else f"nodes.{dns}"
    if kind is NameKind.LOAD_BALANCER:
        return load_balancer_name(role, cluster, derived)
    return load_balancer_name("tcp", cluster, derived)  # target groups


_ETCD_VOLUME = re.compile(r"-etcd-(\d+)$|^(\d+)\.etcd-main\.")
"""A member's main etcd volume's ``Name``: kubeshift's (``<cluster>-etcd-<n>``), or
kops's (``<member>.etcd-main.<cluster domain>``)."""


def _etcd_member(volume_name: str) -> str | None:
    """The member whose main etcd volume is named ``volume_name``, if it is one."""
    found = _ETCD_VOLUME.search(volume_name)
    return (found.group(1) or found.group(2)) if found else None


def etcd_volume_name(member: str, cluster: str) -> str:
    """What kops names ``member``'s main etcd volume (etcd-manager's ``etcd-main``)."""
    return f"{member}.etcd-main.{domain(cluster)}"


def _volume_names(
    cluster: str, resources: Iterable[tuple[str, Mapping[str, Any]]]
) -> Iterable[tuple[str, str]]:
    """(``tag:<kubeshift's Name>``, kops's) for each member's main etcd volume."""
    for token, inputs in resources:
        if token != VOLUME:
            continue
        name = str(dict(inputs.get("tags") or {}).get("Name", ""))
        member = _etcd_member(name)
        if member:
            yield f"{kind_key(NameKind.TAG)}:{name}", etcd_volume_name(member, cluster)


def kops_names(cluster: str, resources: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[str, str]:
    """``kubeshift:cluster.names`` for a cluster kops built: for each named resource the
    program declares (its type token and inputs), and each member's etcd volume (by its
    ``Name`` tag), kubeshift's name -> kops's."""
    resources = list(resources)
    named = [
        (KINDS[token], str(inputs["name"]), inputs)
        for token, inputs in resources
        if token in KINDS and isinstance(inputs.get("name"), str)
    ]
    # a member's template is named after its group, whose subnets give the zone
    zones = {
        derived: _zone_of(inputs)
        for kind, derived, inputs in named
        if kind is NameKind.AUTOSCALING_GROUP
    }
    names = {
        f"{kind_key(kind)}:{derived}": kops_name(kind, cluster, derived, zones.get(derived, ""))
        for kind, derived, _ in named
    }
    return names | dict(_volume_names(cluster, resources))


DESCRIPTIONS: Mapping[str, str] = {
    "masters": "Security group for masters",
    "nodes": "Security group for nodes",
    "api-elb": "Security group for api ELB",
}
"""What kops says its three security groups are for (kops's firewall and API load
balancer models); the groups it does not build keep the program's."""


def kops_descriptions(cluster: str) -> dict[str, str]:
    """``kubeshift:cluster.descriptions`` for a cluster kops built: the name kubeshift
    gives each of kops's three groups -> kops's description of it."""
    return {
        physical_name(cluster, role, kind=NameKind.SECURITY_GROUP): DESCRIPTIONS[kops_role]
        for role, kops_role in _GROUP_ROLES.items()
    }


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
    """The inline policy kops gives a cluster's ``role`` (after kops's strict IAM
    model): its name (the role's) and its document. Members read EC2, Auto Scaling and
    ELB, attach and tag the cluster's volumes, route and scale within the cluster's
    resources; both read the cluster's part of the state store. kubeshift declares none
    of it: an adoption lists it and leaves it alone."""
    dns = domain(cluster)
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


def nodeup_script(instance_group: str, cluster_domain: str, role: str = "Node") -> str:
    """The boot script kops writes into an instance group's launch template (``role``:
    ``Node`` or ``ControlPlane``): it fetches nodeup, leaves the group's bootstrap
    settings where nodeup reads them, and runs it; nodeup then reads the rest of the
    node's configuration from the state store, kops-controller labels the node after
    its instance group, and on a member etcd-manager claims its etcd volume by tags."""
    digest = hashlib.sha256(f"{cluster_domain}/{instance_group}".encode()).hexdigest()
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
            f"NodeupConfigHash: {base64.b64encode(bytes.fromhex(digest)).decode()}",
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


def _instance_group(name: str) -> tuple[str, str, str] | None:
    """(instance group, cluster domain, role) of the template kops named ``name``."""
    group, _, cluster_domain = name.partition(".")
    if not cluster_domain:
        return None
    if cluster_domain.startswith("masters."):
        return group, cluster_domain.removeprefix("masters."), "ControlPlane"
    return group, cluster_domain, "Node"


def kops_boot_scripts(
    cluster: str, resources: Iterable[tuple[str, Mapping[str, Any]]]
) -> dict[str, str]:
    """``kubeshift:cluster.user_data`` for a cluster kops built: the name kubeshift
    gives each launch template the program declares -> kops's boot script."""
    resources = list(resources)
    names = kops_names(cluster, resources)
    key = kind_key(NameKind.LAUNCH_TEMPLATE)
    scripts = {}
    for kind, inputs in resources:
        derived = inputs.get("name")
        if kind != "aws:ec2/launchTemplate:LaunchTemplate" or not isinstance(derived, str):
            continue
        found = _instance_group(names[f"{key}:{derived}"])
        if found:
            scripts[derived] = nodeup_script(*found)
    return scripts


ETCD_MAIN_TAG = MAIN_ETCD_TAG
"""kops's tag on a member's etcd volume: ``<member>/<every member>``."""
EVENTS_VOLUME_SIZE = 20
"""GiB: kops's default size of an etcd volume."""


def etcd_tag_value(member: str, members: int) -> str:
    """kops's etcd tag value: ``<member>/<every member>``, members numbered 1 to ``members``."""
    return f"{member}/{','.join(str(n) for n in range(1, members + 1))}"


def events_volume_tags(cluster: str, member: str, members: int) -> dict[str, str]:
    """The tags kops gives member ``member``'s events volume (which the program does not
    declare: kubeshift moves the main etcd only)."""
    return {
        "Name": f"{member}.etcd-events.{domain(cluster)}",
        "KubernetesCluster": cluster,
        f"kubernetes.io/cluster/{cluster}": "owned",
        "k8s.io/role/master": "1",
        EVENTS_TAG: etcd_tag_value(member, members),
    }


def as_kops_makes(
    token: str, inputs: Mapping[str, Any], members: int = 3, instance_group: str | None = None
) -> dict[str, Any]:
    """``inputs`` as kops makes the resource: with the tags kops adds of its own (an
    instance group's name, and ``k8s.io/role/node`` for workers, on its Auto Scaling
    group, propagated to the instances; ``SubnetType`` on subnets; on a member's etcd
    volume ``k8s.io/etcd/main``, ``<member>/<all ``members``>``, which etcd-manager
    claims it by), kops's descriptions of its security groups, kops's boot script in its
    launch templates and, in its workers', kops's root volume size and IMDS hop limit.
    A group's instance group is its launch template's (``instance_group``; else the
    group's own name): kops's instance group is one template. Then kops's settings where
    kubeshift declares others AWS changes in place, which no stack file setting of
    kubeshift's names: its templates' security groups on their first network interface,
    its groups' metrics and health-check grace period
    (:data:`KOPS_GROUP_SETTINGS`), AWS's deregistration delay on its target groups, no
    cross-zone load balancing on its NLBs. (None of kubeshift's own tags is there: the
    world is rendered with ``own_tags: false``.)"""
    tagged = dict(inputs)
    if token == VOLUME:
        tags = dict(inputs.get("tags") or {})
        member = _etcd_member(str(tags.get("Name", "")))
        if member:
            tagged["tags"] = {**tags, ETCD_MAIN_TAG: etcd_tag_value(member, members)}
    booted = (
        _instance_group(str(inputs["name"]))
        if token == "aws:ec2/launchTemplate:LaunchTemplate" and isinstance(inputs.get("name"), str)
        else None
    )
    if booted:
        tagged["userData"] = base64.b64encode(nodeup_script(*booted).encode()).decode()
    if booted and booted[2] == "Node":
        tagged.update(_as_kops_node_template(tagged))
    if booted and tagged.get("vpcSecurityGroupIds"):
        tagged.update(_groups_on_interface(tagged))
    if token == "aws:ec2/securityGroup:SecurityGroup" and isinstance(inputs.get("name"), str):
        role = str(inputs["name"]).split(".", 1)[0]
        tagged["description"] = DESCRIPTIONS.get(role, inputs.get("description"))
    if token == "aws:autoscaling/group:Group" and isinstance(inputs.get("name"), str):
        blocks = list(inputs.get("tags") or [])
        keys = {b.get("key") for b in blocks}
        group = instance_group or str(inputs["name"]).split(".", 1)[0]
        extra = {"kops.k8s.io/instancegroup": group}
        if "k8s.io/role/master" not in keys:
            extra["k8s.io/role/node"] = "1"
        blocks += [{"key": k, "value": v, "propagateAtLaunch": True} for k, v in extra.items()]
        tagged["tags"] = blocks
        tagged |= KOPS_GROUP_SETTINGS
    if token == "aws:lb/targetGroup:TargetGroup":
        tagged.pop("deregistrationDelay", None)  # kops sets none: AWS's 300 s
    if token == "aws:lb/loadBalancer:LoadBalancer":
        tagged["enableCrossZoneLoadBalancing"] = False  # kops's default for the API's NLB
    if token == "aws:ec2/subnet:Subnet":
        tags = dict(inputs.get("tags") or {})
        tags["SubnetType"] = "Private" if "kubernetes.io/role/internal-elb" in tags else "Public"
        tagged["tags"] = tags
    return tagged


KOPS_GROUP_METRICS = (
    "GroupDesiredCapacity", "GroupInServiceInstances", "GroupMaxSize", "GroupMinSize",
    "GroupPendingInstances", "GroupStandbyInstances", "GroupTerminatingInstances",
    "GroupTotalInstances",
)  # fmt: skip
"""What kops has every instance group's Auto Scaling group collect, each minute."""
KOPS_GROUP_SETTINGS: dict[str, Any] = {
    "enabledMetrics": list(KOPS_GROUP_METRICS),
    "metricsGranularity": "1Minute",
    "healthCheckGracePeriod": 0,  # kops's call leaves it out: AWS's default
}
"""Where kops's Auto Scaling groups differ from kubeshift's in what AWS changes in
place; ``adopt --keep-live`` keeps them (``kubeshift:cluster.kept_inputs``)."""

NODE_ROOT_VOLUME_SIZE = 128
"""GiB: kops's default root volume of a node (``DefaultVolumeSizeNode``)."""
METADATA_HOP_LIMIT = 1
"""kops's IMDSv2 response hop limit: pods on the node's network do not reach it."""


def _groups_on_interface(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """kops gives a template's security groups to its first network interface, which
    takes no public address (its instances run in private subnets)."""
    interface = {
        "associatePublicIpAddress": "false", "deleteOnTermination": "true", "deviceIndex": 0,
        "securityGroups": list(inputs["vpcSecurityGroupIds"]),
    }  # fmt: skip
    return {"networkInterfaces": [interface], "vpcSecurityGroupIds": None}


def _as_kops_node_template(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """A worker template's settings where kops's defaults differ from kubeshift's: a
    root volume of 128 GiB and an IMDSv2 hop limit of 1."""
    options = {**dict(inputs.get("metadataOptions") or {})}
    options["httpPutResponseHopLimit"] = METADATA_HOP_LIMIT
    disks = []
    for disk in inputs.get("blockDeviceMappings") or []:
        ebs = {**dict(disk.get("ebs") or {}), "volumeSize": NODE_ROOT_VOLUME_SIZE}
        disks.append({**dict(disk), "ebs": ebs})
    return {"metadataOptions": options, "blockDeviceMappings": disks}


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
