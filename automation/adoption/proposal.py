"""Propose the stack file's ``kubeshift:cluster`` block from what runs.

The proposal reads kubeshift's own tags and the conventions kops shares with it
(the cluster tag, ``k8s.io/role/master`` on the control plane, the
cluster-autoscaler's ``node-template`` label and taint tags on the worker groups).
Worker groups become pools by their pool tag (``kubeshift.io/pool``, else kops'
``kops.k8s.io/instancegroup``); a group that carries neither (a Terraform module's,
named after what it runs: ``<cluster>-workers-m5-large-us-east-1a-spot``) by its name
less the cluster's name and the instance type, AZ and capacity type it runs
(:func:`named_pool`), noted. A group whose name is all of those cannot be placed, a
problem sentence. Members are numbered by kubeshift's member tag,
else by kops's instance group names, else by turns from their AZs
(:func:`member_numbers`): another tool's cluster has none of kubeshift's own tags.
What a tag cannot say, the resource says: a group's instance types and capacity type
come from its mixed-instances policy (or its template's spot market options), a pool's
root volume from its launch template, the listeners from the load balancer in front of
the groups.
"""

from __future__ import annotations

import ipaddress
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from automation.adoption.live import Balancer, LiveCluster, Raw, tags_of, template_spec
from components.contract import userdata
from components.contract.checks import POOL_NAME
from components.contract.naming import stable_hash
from components.contract.tags import (
    AUTOSCALER_TAG_PREFIX,
    LEGACY_CLUSTER_TAG,
    MASTER_ROLE_TAG,
    node_template,
)

POOL_TAGS = ("kubeshift.io/pool", "kops.k8s.io/instancegroup")
MEMBER_TAG = "kubeshift.io/member"
MAIN_ETCD_TAG = "k8s.io/etcd/main"
"""kops's tag on a member's volume of the main etcd: ``<member>/<every member>``, by which
etcd-manager claims it."""
EVENTS_TAG = "k8s.io/etcd/events"
"""kops's tag on a member's volume of its second etcd, which keeps the cluster's events."""
OWN_LABELS = {userdata.POOL_LABEL, userdata.GENERATION_LABEL, userdata.LIFECYCLE_LABEL}
OWN_TAGS = ("Name", LEGACY_CLUSTER_TAG, "managed-by", "kubernetes.io/cluster/")


@dataclass
class Proposal:
    cluster: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    """Choices a reviewer should check (one sentence each)."""
    problems: list[str] = field(default_factory=list)
    """What stops a proposal (one sentence each)."""


def propose(live: LiveCluster, zone_id: str | None) -> Proposal:
    """The ``kubeshift:cluster`` block that describes ``live``."""
    proposal = Proposal(cluster={"name": live.name})
    network = _network(live)
    proposal.cluster["network"] = network
    members = member_groups(live)
    masters = [g for g in live.groups if g["AutoScalingGroupName"] in members]
    workers = [g for g in live.groups if g["AutoScalingGroupName"] not in members]
    if masters and not any(MASTER_ROLE_TAG in tags_of(g) for g in masters):
        proposal.notes.append(
            f"No group carries {MASTER_ROLE_TAG}; the {len(masters)} single-instance group(s) "
            "behind the API's target groups (a port outside the node ports) are taken as "
            f"the control-plane members ({', '.join(sorted(members))}): check them."
        )
    if live.groups and not any(LEGACY_CLUSTER_TAG in tags_of(g) for g in live.groups):
        proposal.cluster["legacy_tags"] = False
        proposal.notes.append(
            f"No group carries the legacy {LEGACY_CLUSTER_TAG} tag; legacy_tags: false "
            f"leaves it (and {MASTER_ROLE_TAG}) off what kubeshift declares, so adopting retags "
            "nothing."
        )
    if workers and not any(
        key.startswith(AUTOSCALER_TAG_PREFIX) for g in workers for key in tags_of(g)
    ):
        proposal.cluster["autoscaler_tags"] = False
        proposal.notes.append(
            f"No worker group carries a cluster-autoscaler tag ({AUTOSCALER_TAG_PREFIX}…); "
            "autoscaler_tags: false declares none, so adopting retags nothing and an "
            "autoscaler that discovers groups by tag keeps leaving them alone."
        )
    image = next(
        (live.templates[template_spec(g)["LaunchTemplateId"]].get("ImageId") for g in workers),
        None,
    )
    if image:
        proposal.cluster["image_id"] = image
    else:
        proposal.problems.append("No worker group of the cluster runs a launch template.")
    subnet_azs = {s["SubnetId"]: s["AvailabilityZone"] for s in live.subnets}
    proposal.cluster["control_plane"] = _control_plane(live, masters, network, subnet_azs)
    _membership(live, masters, subnet_azs, proposal)
    proposal.cluster["worker_pools"] = _pools(live, workers, network["azs"], subnet_azs, proposal)
    api, ingress = front(live)
    vpc_cidr = live.vpc["CidrBlock"]
    if ingress is not None:
        proposal.cluster["ingress"] = {
            "internal": ingress.internal,
            "listeners": _listeners(ingress),
            "allowed_cidrs": _allowed(ingress, vpc_cidr),
        }
    if api is not None:
        proposal.cluster["api"] = {"internal": api.internal, "allowed_cidrs": []}
        ports = [int(entry["Port"]) for entry in api.listeners]
        if ports:
            proposal.cluster["control_plane"]["api_port"] = ports[0]
        if ingress is not None:
            extra = [c for c in _allowed(api, vpc_cidr) if c not in _allowed(ingress, vpc_cidr)]
            proposal.cluster["api"]["allowed_cidrs"] = extra
    proposal.cluster["dns"] = _dns(live, zone_id, api, ingress, proposal)
    tags = {k: v for k, v in tags_of(live.vpc).items() if not k.startswith(OWN_TAGS)}
    if tags:
        proposal.cluster["tags"] = tags
    return proposal


def _network(live: LiveCluster) -> dict[str, Any]:
    public, private = {}, {}
    for subnet in live.subnets:
        tags = tags_of(subnet)
        az, cidr = subnet["AvailabilityZone"], subnet["CidrBlock"]
        if "kubernetes.io/role/elb" in tags or subnet.get("MapPublicIpOnLaunch"):
            public[az] = cidr
        elif "kubernetes.io/role/internal-elb" in tags:
            private[az] = cidr
    azs = sorted(set(private) | set(public))
    return {
        "cidr": live.vpc["CidrBlock"],
        "azs": azs,
        "public_subnets": [public[az] for az in azs if az in public],
        "private_subnets": [private[az] for az in azs if az in private],
        "enable_internet_gateway": live.internet_gateway,
        "enable_nat_gateway": live.nat_gateways > 0,
        "single_nat_gateway": live.nat_gateways == 1 and len(azs) > 1,
    }


_NUMBERED_GROUP = re.compile(r"-(\d+)$")
_INTERFACE_MEMBER = re.compile(r"^etcd member (\d+) of ")
_NAMED_MEMBER = re.compile(r"(?:^|[-_.])etcd[-_]?(\d+)$")


def instance_group(group: Raw) -> str:
    """kops's instance group of ``group``: its tag, else its name's first label."""
    tags = tags_of(group)
    return tags.get("kops.k8s.io/instancegroup") or group["AutoScalingGroupName"].split(".")[0]


NODE_PORTS = range(30000, 32768)
"""Kubernetes's default node-port range: where an ingress load balancer sends traffic."""


def member_groups(live: LiveCluster) -> frozenset[str]:
    """The control plane's groups, by name: those tagged ``k8s.io/role/master`` (kops,
    kubeshift); where none is (a Terraform module's), the single-instance groups behind
    a target group on a port outside the node ports, which only the API's are."""
    tagged = frozenset(
        g["AutoScalingGroupName"] for g in live.groups if MASTER_ROLE_TAG in tags_of(g)
    )
    if tagged:
        return tagged
    ports = {
        arn: int(target.get("Port") or 0)
        for balancer in live.balancers.values()
        for arn, target in balancer.target_groups.items()
    }
    return frozenset(
        g["AutoScalingGroupName"]
        for g in live.groups
        if g.get("MaxSize", 2) <= 1
        and any(
            arn in ports and ports[arn] not in NODE_PORTS for arn in g.get("TargetGroupARNs", [])
        )
    )


def member_numbers(live: LiveCluster) -> dict[str, int]:
    """Each control-plane group's member number, by group name: kubeshift's member tag
    where every member carries it; else the number kops ends each member's instance
    group name with (``master-<zone>-<n>``) where those are 1 to n; else the members
    taken by turns from their AZs (the cluster's AZs in order, names in order within
    one), as the program places member n in the n-th AZ of the rotation."""
    members = member_groups(live)
    masters = [g for g in live.groups if g["AutoScalingGroupName"] in members]
    names = [g["AutoScalingGroupName"] for g in masters]
    expected = set(range(1, len(masters) + 1))
    tagged = [tags_of(g).get(MEMBER_TAG, "") for g in masters]
    if all(t.isdigit() for t in tagged) and {int(t) for t in tagged} == expected:
        return dict(zip(names, map(int, tagged), strict=True))
    found = [_NUMBERED_GROUP.search(instance_group(g)) for g in masters]
    numbered = [int(f.group(1)) for f in found if f]
    if len(numbered) == len(masters) and set(numbered) == expected:
        return dict(zip(names, numbered, strict=True))
    subnet_azs = {s["SubnetId"]: s["AvailabilityZone"] for s in live.subnets}
    by_az: dict[str, list[str]] = {}
    for group in sorted(masters, key=lambda g: g["AutoScalingGroupName"]):
        az = subnet_azs.get(group["VPCZoneIdentifier"].split(",")[0], "")
        by_az.setdefault(az, []).append(group["AutoScalingGroupName"])
    queues = [by_az[az] for az in sorted(by_az)]
    order: list[str] = []
    while any(queues):
        order += [queue.pop(0) for queue in queues if queue]
    return {name: number for number, name in enumerate(order, start=1)}


def interface_member(interface: Raw) -> int | None:
    """The member a fixed interface is for: its member tag, else its description
    (``etcd member <n> of <cluster>``, as the program describes it), else the number its
    Name gives after ``etcd`` (a module's ``count``: ``<cluster>-etcd-<n>``)."""
    tagged = tags_of(interface).get(MEMBER_TAG, "")
    if tagged.isdigit():
        return int(tagged)
    described = _INTERFACE_MEMBER.match(interface.get("Description") or "")
    if described:
        return int(described.group(1))
    return named_member(tags_of(interface).get("Name", ""))


def named_member(name: str) -> int | None:
    """The member number a name gives after ``etcd`` (``<cluster>-etcd-2``), if any."""
    found = _NAMED_MEMBER.search(name)
    return int(found.group(1)) if found else None


def _control_plane(
    live: LiveCluster, masters: list[Raw], network: dict[str, Any], subnet_azs: dict[str, str]
) -> dict[str, Any]:
    numbers = member_numbers(live)
    members = sorted(masters, key=lambda g: numbers[g["AutoScalingGroupName"]])
    plane: dict[str, Any] = {"members": len(members)}
    if members:
        data = live.templates.get(template_spec(members[0]).get("LaunchTemplateId", ""), {})
        if data.get("InstanceType"):
            plane["instance_type"] = data["InstanceType"]
        if size := root_volume_size(data):
            plane["root_volume_size"] = size
        member_azs = [subnet_azs.get(g["VPCZoneIdentifier"].split(",")[0], "") for g in members]
        rotation = [network["azs"][i % len(network["azs"])] for i in range(len(members))]
        if member_azs != rotation:
            plane["azs"] = list(dict.fromkeys(member_azs))
    main = [v for v in live.volumes if EVENTS_TAG not in tags_of(v)]
    if main:
        sizes = Counter((v["Size"], v["VolumeType"]) for v in main)
        plane["etcd_volume_size"], plane["etcd_volume_type"] = sizes.most_common(1)[0][0]
    first = next((i for i in live.interfaces if interface_member(i) == 1), None)
    if first is not None:
        address = ipaddress.IPv4Address(first["PrivateIpAddress"])
        subnet = next(s for s in live.subnets if s["SubnetId"] == first["SubnetId"])
        plane["host_index"] = int(address) - int(
            ipaddress.IPv4Network(subnet["CidrBlock"]).network_address
        )
    return plane


def _membership(
    live: LiveCluster, masters: list[Raw], subnet_azs: dict[str, str], proposal: Proposal
) -> None:
    """etcd-manager's membership where the members' volumes carry kops's etcd tags
    (``<name>/<every name>``): each member's name, where not its number, by its AZ."""
    tagged = {
        tags_of(v)[MAIN_ETCD_TAG].split("/")[0]: v.get("AvailabilityZone", "")
        for v in live.volumes
        if tags_of(v).get(MAIN_ETCD_TAG)
    }
    if not tagged:
        return
    plane = proposal.cluster["control_plane"]
    plane["membership"] = "etcd-manager"
    events = sum(1 for v in live.volumes if EVENTS_TAG in tags_of(v))
    proposal.notes.append(
        f"The members' volumes carry {MAIN_ETCD_TAG} ({len(tagged)}) and {EVENTS_TAG} "
        f"({events}): kops's etcd-manager keeps membership of a main and an events etcd, so "
        "membership: etcd-manager checks both through each move and writes no peer URL; "
        "set runtime.etcd.endpoints and events_endpoints (kops: ports 4001 and 4002)."
    )
    numbers = [str(k) for k in range(1, len(masters) + 1)]
    if sorted(tagged) == sorted(numbers):
        return
    numbered = member_numbers(live)
    by_number = sorted(masters, key=lambda g: numbered[g["AutoScalingGroupName"]])
    zones = [subnet_azs.get(g["VPCZoneIdentifier"].split(",")[0], "") for g in by_number]
    names = [[n for n, az in tagged.items() if az == zone] for zone in zones]
    if any(len(found) != 1 for found in names) or len(tagged) != len(masters):
        proposal.problems.append(
            f"etcd-manager's member names ({', '.join(sorted(tagged))}, from {MAIN_ETCD_TAG}) "
            "cannot be matched to the members one AZ each; set "
            "control_plane.etcd_names in member order."
        )
        return
    plane["etcd_names"] = [found[0] for found in names]


def _pool_tag(group: Raw) -> str | None:
    tags = tags_of(group)
    return next((tags[t] for t in POOL_TAGS if tags.get(t)), None)


def pool_of(group: Raw, live: LiveCluster) -> str | None:
    """The pool a worker group belongs to: its pool tag's value, else its name's
    (:func:`named_pool`), as a valid pool name."""
    tagged = _pool_tag(group)
    return named_pool(group, live) if tagged is None else pool_name(tagged)


_CAPACITY_WORDS = ("on-demand", "ondemand", "spot", "od")
_SEPARATORS = "-_."


def named_pool(group: Raw, live: LiveCluster) -> str | None:
    """The pool a group without a pool tag is named for: its name less the cluster's
    name (before it), its AZs, its instance types (``m5.large``, ``m5-large``,
    ``m5large``) and its capacity type's words; None where nothing is left."""
    subnet_azs = {s["SubnetId"]: s["AvailabilityZone"] for s in live.subnets}
    data = template_data(live, group)
    name = str(group["AutoScalingGroupName"]).lower()
    for prefix in {live.name, *(live.name.split(".")[:1])}:
        if name.startswith(prefix) and name[len(prefix) : len(prefix) + 1] in _SEPARATORS:
            name = name[len(prefix) + 1 :]
    words: set[str] = set(_CAPACITY_WORDS)
    for zone in zones_of(group, subnet_azs):
        words |= {zone, zone.replace("-", "")}
    for kind in instance_types(group, data):
        words |= {kind, kind.replace(".", "-"), kind.replace(".", ""), kind.replace(".", "_")}
    split = "[" + re.escape(_SEPARATORS) + "]"
    for word in sorted(words, key=len, reverse=True):
        name = re.sub(rf"(^|{split}){re.escape(word)}(?=$|{split})", r"\1", name)
    left = re.sub(rf"{split}+", "-", name).strip("-")
    return pool_name(left) if re.search("[a-z]", left) else None


def pool_name(tagged: str) -> str:
    """``tagged`` (a kops instance group's name, say) as a pool name kubeshift accepts:
    itself when valid, else lower-cased, other characters as hyphens, cut to fit and
    ended with a hash of the whole, so no two tagged names share a pool."""
    if POOL_NAME.fullmatch(tagged):
        return tagged
    cleaned = re.sub(r"[^a-z0-9-]+", "-", tagged.lower()).strip("-")
    cleaned = re.sub(r"^[^a-z]+", "", cleaned) or "pool"
    tail = f"-{stable_hash(tagged, 6)}"
    return cleaned[: 24 - len(tail)].rstrip("-") + tail


def _pools(
    live: LiveCluster,
    workers: list[Raw],
    network_azs: list[str],
    subnet_azs: dict[str, str],
    proposal: Proposal,
) -> list[dict[str, Any]]:
    grouped = pools_of(live, workers)
    pooled = {g["AutoScalingGroupName"] for groups in grouped.values() for g in groups}
    proposal.problems += [
        f"Auto Scaling group {g['AutoScalingGroupName']} matches no pool: it carries none "
        f"of the tags {', '.join(POOL_TAGS)}, and its name says no more than its AZ, "
        "instance type and capacity type."
        for g in sorted(workers, key=lambda g: g["AutoScalingGroupName"])
        if g["AutoScalingGroupName"] not in pooled
    ]
    named = {
        pool: names
        for pool, groups in grouped.items()
        if (names := [g["AutoScalingGroupName"] for g in groups if _pool_tag(g) is None])
    }
    proposal.notes += [
        f"Pool {pool} gathers {len(groups)} group(s) that carry no pool tag "
        f"({', '.join(POOL_TAGS)}) by their names less the AZ, instance type and capacity "
        f"type each runs ({groups[0]}{', …' if len(groups) > 1 else ''}); check it."
        for pool, groups in named.items()
    ]
    tagged_names = {tagged for g in workers if (tagged := _pool_tag(g)) is not None}
    proposal.notes += [
        f"Pool {pool_name(tagged)} stands for {tagged!r}, which is not a pool name (1-24 "
        "lower-case letters, digits or hyphens); the live groups keep their names."
        for tagged in sorted(tagged_names, key=pool_name)
        if pool_name(tagged) != tagged
    ]
    return [
        _pool(live, name, groups, network_azs, subnet_azs, proposal)
        for name, groups in grouped.items()
    ]


def instance_types(group: Raw, data: Raw) -> list[str]:
    policy = group.get("MixedInstancesPolicy") or {}
    overrides = policy.get("LaunchTemplate", {}).get("Overrides", [])
    types = [o["InstanceType"] for o in overrides if o.get("InstanceType")]
    return types or ([data["InstanceType"]] if data.get("InstanceType") else [])


def template_data(live: LiveCluster, group: Raw) -> Raw:
    """The launch template data ``group`` runs (empty where it runs none)."""
    return live.templates.get(template_spec(group).get("LaunchTemplateId", ""), {})


def capacity_of(group: Raw, data: Raw | None = None) -> str:
    """spot where the group's mixed-instances policy launches spot above its base, or,
    without a policy, where its template asks for the spot market; else on-demand."""
    policy = group.get("MixedInstancesPolicy")
    if not policy:
        market = ((data or {}).get("InstanceMarketOptions") or {}).get("MarketType")
        return "spot" if market == "spot" else "on-demand"
    distribution = policy.get("InstancesDistribution", {})
    share = distribution.get("OnDemandPercentageAboveBaseCapacity", 100)
    return "on-demand" if int(share) == 100 else "spot"


def root_volume_size(data: Raw) -> int | None:
    """The size of the root volume a launch template's data maps, GiB (None: none)."""
    disks = data.get("BlockDeviceMappings") or []
    return next((d["Ebs"]["VolumeSize"] for d in disks if d.get("Ebs", {}).get("VolumeSize")), None)


def zones_of(group: Raw, subnet_azs: Mapping[str, str]) -> list[str]:
    """The AZs of a group's subnets, in its order."""
    return _ordered(subnet_azs.get(s, "") for s in group["VPCZoneIdentifier"].split(","))


def templates_per_group(live: LiveCluster, groups: list[Raw]) -> bool:
    """Whether a pool's groups each launch from a template of their own with no
    mixed-instances policy (``template_per: group``, as seed 001's Terraform modules made
    them): each its type, spot asked for by the template's market; rather than sharing
    one per capacity type. A pool of one group per capacity type that mixes nothing fits
    both, and stays shared."""
    templates = {template_spec(g).get("LaunchTemplateId") for g in groups}
    if len(templates) != len(groups) or any(g.get("MixedInstancesPolicy") for g in groups):
        return False
    capacities = [capacity_of(g, template_data(live, g)) for g in groups]
    return len(groups) > len(set(capacities)) or "spot" in capacities


def pools_of(live: LiveCluster, workers: Iterable[Raw]) -> dict[str, list[Raw]]:
    """The worker groups by the pool each belongs to, in name order (groups that match
    no pool left out)."""
    grouped: dict[str, list[Raw]] = {}
    for group in sorted(workers, key=lambda g: g["AutoScalingGroupName"]):
        pool = pool_of(group, live)
        if pool is not None:
            grouped.setdefault(pool, []).append(group)
    return grouped


def spans(group: Raw, data: Raw, subnet_azs: Mapping[str, str]) -> bool:
    """Whether a worker group spans several AZs or instance types, as a kops instance
    group does (``group_per: capacity``), rather than being one type in one AZ."""
    return len(instance_types(group, data)) > 1 or len(zones_of(group, subnet_azs)) > 1


def _ordered(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _pool(
    live: LiveCluster,
    name: str,
    groups: list[Raw],
    network_azs: list[str],
    subnet_azs: dict[str, str],
    proposal: Proposal,
) -> dict[str, Any]:
    first = groups[0]
    data = live.templates.get(template_spec(first).get("LaunchTemplateId", ""), {})
    spanning = [spans(g, template_data(live, g), subnet_azs) for g in groups]
    # a spanning group's override order is its priority (on-demand launches the first)
    types = (
        instance_types(first, data)
        if all(spanning)
        else sorted(set(t for g in groups for t in instance_types(g, template_data(live, g))))
    )
    capacities = sorted({capacity_of(g, template_data(live, g)) for g in groups})
    azs = sorted({az for g in groups for az in zones_of(g, subnet_azs)})
    if any(spanning) and (not all(spanning) or len(groups) != len(capacities)):
        proposal.problems.append(
            f"Pool {name} mixes groups that span AZs or instance types with others: "
            "kubeshift models a pool as one group per capacity type or one per type, AZ "
            "and capacity type."
        )
    sizes = {(g["MinSize"], g["DesiredCapacity"], g["MaxSize"]) for g in groups}
    if len(sizes) > 1:
        proposal.notes.append(
            f"Pool {name}: its {len(groups)} groups differ in size; proposed those of "
            f"{first['AutoScalingGroupName']} for each."
        )
    tags = tags_of(first)
    pool: dict[str, Any] = {
        "name": name,
        "instance_types": types,
        "capacity_types": capacities,
        "min_size": first["MinSize"],
        "desired_size": first["DesiredCapacity"],
        "max_size": first["MaxSize"],
    }
    if all(spanning):
        pool["group_per"] = "capacity"
    elif templates_per_group(live, groups):
        pool["template_per"] = "group"
    if azs != sorted(network_azs):
        pool["azs"] = azs
    template_labels, template_taints = node_template(tags)
    labels = {k: v for k, v in template_labels.items() if k not in OWN_LABELS}
    if labels:
        pool["labels"] = labels
    taints = [{"key": k, "value": v, "effect": e} for k, v, e in template_taints]
    if taints:
        pool["taints"] = taints
    if size := root_volume_size(data):
        pool["root_volume_size"] = size
    hops = (data.get("MetadataOptions") or {}).get("HttpPutResponseHopLimit")
    if hops:
        pool["metadata_hop_limit"] = hops
    return pool


def front(live: LiveCluster) -> tuple[Balancer | None, Balancer | None]:
    """The API load balancer (in front of the members) and the ingress one (workers)."""

    members = member_groups(live)

    def in_front_of(masters: bool) -> Balancer | None:
        groups = [g for g in live.groups if (g["AutoScalingGroupName"] in members) == masters]
        arns = {arn for g in groups for arn in g.get("TargetGroupARNs", [])}
        return next((b for b in live.balancers.values() if arns & set(b.target_groups)), None)

    return in_front_of(True), in_front_of(False)


def _listeners(balancer: Balancer) -> list[dict[str, int]]:
    listeners = []
    for entry in sorted(balancer.listeners, key=lambda e: e["Port"]):
        actions = entry.get("DefaultActions") or [{}]
        target = balancer.target_groups.get(actions[0].get("TargetGroupArn", ""), {})
        listeners.append({"port": int(entry["Port"]), "node_port": int(target.get("Port", 0))})
    return listeners


def _allowed(balancer: Balancer, vpc_cidr: str) -> list[str]:
    """CIDRs the balancer's groups admit beyond the VPC and the whole internet."""
    cidrs = [r.get("CidrIpv4") for r in balancer.rules]
    return _ordered(c for c in cidrs if c and c not in (vpc_cidr, "0.0.0.0/0"))


def _dns(
    live: LiveCluster,
    zone_id: str | None,
    api: Balancer | None,
    ingress: Balancer | None,
    proposal: Proposal,
) -> dict[str, Any]:
    dns: dict[str, Any] = {"zone_id": zone_id or ""}
    if not zone_id:
        proposal.problems.append(
            "Give kubeshift:cluster.dns.zone_id in the stack file: the records are looked "
            "for in that hosted zone."
        )
        return dns

    def pointing_at(balancer: Balancer | None) -> list[Raw]:
        """CNAMEs to the balancer, and A records aliased to it (kops's API record)."""
        if balancer is None:
            return []
        target = _host(balancer.lb["DNSName"])
        return [r for r in live.records if target in _targets(r)]

    def name_of(record: Raw) -> str:
        return str(record["Name"]).rstrip(".").replace("\\052", "*")

    api_records = pointing_at(api)
    ingress_records = pointing_at(ingress)
    if api_records:
        dns["api_record"] = name_of(api_records[0])
        if "AliasTarget" in api_records[0]:
            dns["api_alias"] = True
    else:
        proposal.problems.append("No record in the zone points at the API load balancer.")
    if ingress_records:
        dns["ingress_records"] = [name_of(r) for r in ingress_records]
    timed = [r for r in (*api_records, *ingress_records) if "TTL" in r]
    if timed:  # an alias has none of its own: Route53 answers with the target's
        dns["ttl"] = int(timed[0]["TTL"])
    return dns


def _host(name: str) -> str:
    """A DNS name as compared: lower case, no trailing dot, no ``dualstack.`` (the
    prefix Route53 may give an alias to a load balancer)."""
    return name.rstrip(".").lower().removeprefix("dualstack.")


def _targets(record: Raw) -> set[str]:
    """The host names a CNAME record, or an A record's alias, points at."""
    if record["Type"] == "CNAME":
        return {_host(v["Value"]) for v in record.get("ResourceRecords", [])}
    alias = record.get("AliasTarget")
    return {_host(alias["DNSName"])} if record["Type"] == "A" and alias else set()
