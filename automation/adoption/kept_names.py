"""The names a live cluster's resources carry where kubeshift would give others.

Each named resource is told apart by the part it plays, not by its name: a worker
group by its pool, instance type, AZ and capacity type; a member's group by its
member number; a launch template by the groups that launch from it; the security
groups by which templates and load balancers use them (``shared`` is the one both
workers and members carry); the load balancers by the groups behind them; a target
group by its listener's port; a member's etcd volume by its member (kubeshift's or
kops's etcd tag, else the AZ its member alone runs in); an instance profile by the
templates that name it, and its role through it (the role's inline policies are
another tool's grants, left alone). Every live name that differs from the one kubeshift
would derive becomes an entry of
``kubeshift:cluster.names``, qualified by kind, so the program keeps it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from typing import cast

from automation.adoption.live import (
    LiveCluster,
    Raw,
    profile_name,
    tags_of,
    template_groups,
    template_spec,
)
from automation.adoption.proposal import (
    EVENTS_TAG,
    MAIN_ETCD_TAG,
    MEMBER_TAG,
    capacity_of,
    front,
    instance_group,
    instance_types,
    member_groups,
    member_numbers,
    named_member,
    pool_of,
    pools_of,
    spans,
    templates_per_group,
    zones_of,
)
from components.contract.naming import NameKind, Namer, kind_key
from components.identity import IdentityRole
from components.worker_pools import group_key, spanning_key


def kept_names(live: LiveCluster) -> dict[str, str]:
    """``<kind>:<derived name>`` -> live name, for every name that differs."""
    namer = Namer(live.name)
    found = dict(_groups_and_templates(live, namer))
    found.update(_security_groups(live, namer))
    found.update(_balancers(live, namer))
    found.update(_identities(live, namer))
    found.update(_etcd_volumes(live, namer))
    return {key: name for key, (derived, name) in sorted(found.items()) if derived != name}


Found = Iterator[tuple[str, tuple[str, str]]]


def _entry(kind: NameKind, derived: str, live_name: str) -> tuple[str, tuple[str, str]]:
    return f"{kind_key(kind)}:{derived}", (derived, live_name)


def _group_roles(live: LiveCluster) -> Iterator[tuple[Raw, str, str]]:
    """(group, its part, its launch template's part) for each group whose part is plain:
    a member's by its number, a worker group's by its pool, type, AZ and capacity."""
    subnet_azs = {s["SubnetId"]: s["AvailabilityZone"] for s in live.subnets}
    members = member_numbers(live)
    workers = [g for g in live.groups if g["AutoScalingGroupName"] not in members]
    own_templates = {
        pool for pool, groups in pools_of(live, workers).items()
        if templates_per_group(live, groups)
    }  # fmt: skip
    for group in live.groups:
        if group["AutoScalingGroupName"] in members:
            role = f"control-plane-{members[group['AutoScalingGroupName']]}"
            yield group, role, role
            continue
        pool = pool_of(group, live)
        data = live.templates.get(template_spec(group).get("LaunchTemplateId", ""), {})
        types = instance_types(group, data)
        if pool is None or not types:
            continue  # the proposal names such a group as a problem
        capacity = capacity_of(group, data)
        if spans(group, data, subnet_azs):  # a kops instance group: group_per capacity
            key = spanning_key(pool, capacity)
        else:
            key = group_key(pool, types[0], zones_of(group, subnet_azs)[0], capacity)
        template = key if pool in own_templates else f"{pool}-{capacity}"
        yield group, f"workers-{key}", f"workers-{template}"


def template_roles(live: LiveCluster) -> dict[str, str]:
    """Launch template id -> its part (``workers-<pool>-<capacity>``, a group's own
    ``workers-<pool>-<type>-<az>-<capacity>``, ``control-plane-<n>``)."""
    return {
        template_spec(group).get("LaunchTemplateId", ""): role
        for group, _, role in _group_roles(live)
    }


def _groups_and_templates(live: LiveCluster, namer: Namer) -> Found:
    for group, group_role, template_role in _group_roles(live):
        template = live.template_names.get(template_spec(group).get("LaunchTemplateId", ""), "")
        yield _entry(
            NameKind.AUTOSCALING_GROUP,
            namer.autoscaling_group(group_role),
            group["AutoScalingGroupName"],
        )
        if template:
            yield _entry(NameKind.LAUNCH_TEMPLATE, namer.launch_template(template_role), template)


def _template_groups(live: LiveCluster, masters: bool) -> set[str]:
    ids: set[str] = set()
    members = member_groups(live)
    for group in live.groups:
        if (group["AutoScalingGroupName"] in members) == masters:
            data = live.templates.get(template_spec(group).get("LaunchTemplateId", ""), {})
            ids.update(template_groups(data))
    return ids


def shares_no_group(live: LiveCluster) -> bool:
    """Whether the cluster's workers and members carry security groups, none of them in
    common (as kubeshift's ``shared`` is): a kops cluster's carry ``nodes`` or
    ``masters`` only. False where either carries none, which says nothing."""
    workers, members = _template_groups(live, False), _template_groups(live, True)
    return bool(workers) and bool(members) and not workers & members


def security_group_roles(live: LiveCluster) -> Iterator[tuple[str, str]]:
    """(role, group id) for each group whose part is plain: the one group that only
    workers carry, only members, both, or a load balancer."""
    workers, members = _template_groups(live, False), _template_groups(live, True)
    roles: dict[str, set[str]] = {
        "shared": workers & members,
        "node": workers - members,
        "control-plane": members - workers,
    }
    for role, ids in roles.items():
        if len(ids) == 1:
            yield role, next(iter(ids))
    api, ingress = front(live)
    for role, balancer in (("api-lb", api), ("ingress-lb", ingress)):
        groups = balancer.lb.get("SecurityGroups", []) if balancer else []
        if len(groups) == 1:
            yield role, groups[0]


def _security_groups(live: LiveCluster, namer: Namer) -> Found:
    for role, group_id in security_group_roles(live):
        name = live.group_names.get(group_id, "")
        yield _entry(NameKind.SECURITY_GROUP, namer.security_group(role), name)


def _balancers(live: LiveCluster, namer: Namer) -> Found:
    api, ingress = front(live)
    for role, balancer in (("api", api), ("ingress", ingress)):
        if balancer is None:
            continue
        yield _entry(
            NameKind.LOAD_BALANCER, namer.load_balancer(role), balancer.lb["LoadBalancerName"]
        )
        for listener in balancer.listeners:
            actions: list[Raw] = listener.get("DefaultActions") or [{}]
            target = balancer.target_groups.get(actions[0].get("TargetGroupArn", ""))
            if target is not None:
                derived = namer.target_group(f"{role}-{listener['Port']}")
                yield _entry(NameKind.TARGET_GROUP, derived, target["TargetGroupName"])


def identity_profiles(live: LiveCluster) -> dict[IdentityRole, str]:
    """The one instance profile the workers' (``node``) or the members' templates run
    as, for each that has exactly one."""
    found: dict[IdentityRole, str] = {}
    members = member_groups(live)
    for masters, role in ((False, "node"), (True, "control-plane")):
        profiles = {
            profile_name(live.templates.get(template_spec(g).get("LaunchTemplateId", ""), {}))
            for g in live.groups
            if (g["AutoScalingGroupName"] in members) == masters
        } - {""}
        if len(profiles) == 1:
            found[cast(IdentityRole, role)] = profiles.pop()
    return found


def _identities(live: LiveCluster, namer: Namer) -> Found:
    for role, profile in identity_profiles(live).items():
        yield _entry(NameKind.INSTANCE_PROFILE, namer.instance_profile(f"{role}-profile"), profile)
        if profile in live.profile_roles:
            live_role = live.profile_roles[profile]
            derived_role = namer.iam_role(f"{role}-role")
            # its inline policies are the other tool's grants: left alone, not named
            yield _entry(NameKind.IAM_ROLE, derived_role, live_role)


_KOPS_MEMBER_GROUP = re.compile(r"^master-(?:[a-z]+-)+\d([a-z])(-\d+)?$")
"""A member's instance group as kops names it (``master-<zone>[-<n>]``): its etcd member
is the zone's letter (``-<n>`` kept), ``master-us-east-1a-2`` -> ``a-2``."""


def kops_etcd_member(instance_group: str) -> str | None:
    """The etcd member kops names after a member's instance group, if kops named it."""
    found = _KOPS_MEMBER_GROUP.fullmatch(instance_group)
    return found.group(1) + (found.group(2) or "") if found else None


def etcd_volume_members(live: LiveCluster) -> dict[str, int]:
    """Each main etcd volume's member number, by volume id (:func:`_volume_member`). A
    number claimed by two volumes is no one's."""
    subnet_azs = {s["SubnetId"]: s["AvailabilityZone"] for s in live.subnets}
    numbers = member_numbers(live)
    in_zone: dict[str, list[int]] = {}
    kops_named: dict[str, list[int]] = {}
    for group in live.groups:
        number = numbers.get(group["AutoScalingGroupName"])
        if number is None:
            continue
        az = subnet_azs.get(group["VPCZoneIdentifier"].split(",")[0], "")
        in_zone.setdefault(az, []).append(number)
        kops_member = kops_etcd_member(instance_group(group))
        if kops_member:
            kops_named.setdefault(kops_member, []).append(number)
    claims: dict[str, int] = {}
    for volume in live.volumes:
        if EVENTS_TAG in tags_of(volume):
            continue  # the events etcd's: not the program's
        member = _volume_member(volume, set(numbers.values()), kops_named, in_zone)
        if member is not None:
            claims[volume["VolumeId"]] = member
    counted = Counter(claims.values())
    return {volume: number for volume, number in claims.items() if counted[number] == 1}


def _volume_member(
    volume: Raw, numbers: set[int], kops_named: dict[str, list[int]], in_zone: dict[str, list[int]]
) -> int | None:
    """The member a main etcd volume serves: kubeshift's member tag; else kops's etcd tag
    (``<member>/<every member>``) where it is a member number, or the member kops names
    after one member's instance group (``a-2`` for ``master-<region>a-2``); else the one
    member whose group runs in the volume's AZ, or among those the one its Name numbers
    (a module's ``count``: ``<cluster>-etcd-<n>``)."""
    tags = tags_of(volume)
    kops_member = tags.get(MAIN_ETCD_TAG, "").split("/", 1)[0]
    for claim in (tags.get(MEMBER_TAG, ""), kops_member):
        if claim.isdigit() and int(claim) in numbers:
            return int(claim)
    zone = volume.get("AvailabilityZone", "")
    for candidates in (kops_named.get(kops_member, []), in_zone.get(zone, [])):
        if len(candidates) == 1:
            return candidates[0]
    numbered = named_member(tags.get("Name", ""))
    return numbered if numbered in in_zone.get(zone, []) else None


def _etcd_volumes(live: LiveCluster, namer: Namer) -> Found:
    members = etcd_volume_members(live)
    for volume in live.volumes:
        name = tags_of(volume).get("Name")
        if name and volume["VolumeId"] in members:
            yield _entry(NameKind.TAG, namer.tag(f"etcd-{members[volume['VolumeId']]}"), name)
