"""Checks AWS enforces but emulators do not, run before a phase relies on them.

Seed 001's constraints — instances cannot join a target group in another VPC,
security groups may reference groups only in the same or a peered VPC, peered VPCs
must not overlap — are refused by AWS at apply time, half-way through a phase. moto
accepts all three, so neither the tests nor a local run would notice. These checks
read the account and report every violation up front, in one ``PreflightReport``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from botocore.exceptions import ClientError

from automation.aws.targets import short_tg_name
from automation.core.errors import PreconditionFailed, from_client_error
from automation.core.waiting import summarize

if TYPE_CHECKING:
    from mypy_boto3_ec2 import EC2Client
    from mypy_boto3_ec2.type_defs import (
        FilterTypeDef,
        InstanceTypeDef,
        VpcCidrBlockStateTypeDef,
        VpcPeeringConnectionTypeDef,
        VpcTypeDef,
    )
    from mypy_boto3_elbv2 import ElasticLoadBalancingv2Client

T = TypeVar("T")


@dataclass(frozen=True)
class PreflightReport:
    """Which checks ran and what each found wrong."""

    checks: tuple[str, ...]
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    def message(self) -> str:
        if self.ok:
            return f"Preflight passed: {', '.join(self.checks)}."
        shown = "; ".join(self.problems[:5])
        more = f"; … and {len(self.problems) - 5} more" if len(self.problems) > 5 else ""
        return f"Preflight found {len(self.problems)} problem(s) AWS would refuse: {shown}{more}."

    def require(self) -> PreflightReport:
        if not self.ok:
            raise PreconditionFailed(self.message())
        return self


def _call(action: str, fn: Callable[..., T], **kwargs: Any) -> T:
    try:
        return fn(**kwargs)
    except ClientError as exc:
        raise from_client_error(exc, action) from exc


def _networks(cidrs: Iterable[str]) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    return [ipaddress.ip_network(c, strict=False) for c in cidrs]


def vpc_cidrs(vpc: VpcTypeDef) -> tuple[str, ...]:
    """Every IPv4 and IPv6 CIDR associated with a VPC (primary and secondary)."""
    cidrs = [
        a["CidrBlock"]
        for a in vpc.get("CidrBlockAssociationSet", [])
        if _live(a.get("CidrBlockState"))
    ]
    cidrs += [
        a["Ipv6CidrBlock"]
        for a in vpc.get("Ipv6CidrBlockAssociationSet", [])
        if _live(a.get("Ipv6CidrBlockState"))
    ]
    if not cidrs and vpc.get("CidrBlock"):
        cidrs.append(vpc["CidrBlock"])
    return tuple(dict.fromkeys(cidrs))


def _live(state: VpcCidrBlockStateTypeDef | None) -> bool:
    """Whether an association in this state (absent: assume associated) is in use."""
    return (state or {}).get("State", "associated") in {"associated", "associating"}


def overlapping(a: Iterable[str], b: Iterable[str]) -> list[tuple[str, str]]:
    """Pairs of CIDRs, one from each side, that overlap."""
    return [
        (str(x), str(y))
        for x in _networks(a)
        for y in _networks(b)
        if x.version == y.version and x.overlaps(y)  # type: ignore[arg-type]
    ]


# --- target groups -----------------------------------------------------------------------


def target_group_vpc_problems(
    elbv2: ElasticLoadBalancingv2Client, ec2: EC2Client, target_group_arns: Sequence[str]
) -> list[str]:
    """Instance targets outside their group's VPC; IP targets outside its CIDRs.

    IP targets registered with ``AvailabilityZone=all`` may live outside the VPC
    (peered or on-premises) and are not flagged.
    """
    problems: list[str] = []
    if not target_group_arns:
        return problems
    groups = _call(
        "read target groups", elbv2.describe_target_groups, TargetGroupArns=list(target_group_arns)
    )["TargetGroups"]
    for group in groups:
        arn, vpc_id = group["TargetGroupArn"], group.get("VpcId")
        name = short_tg_name(arn)
        health = _call(f"read targets of {name}", elbv2.describe_target_health, TargetGroupArn=arn)[
            "TargetHealthDescriptions"
        ]
        targets = [h["Target"] for h in health]
        if group.get("TargetType", "instance") == "instance":
            ids = sorted({t["Id"] for t in targets})
            for instance in _instances(ec2, ids):
                if instance.get("VpcId") != vpc_id:
                    problems.append(
                        f"target group {name} (in {vpc_id}) has instance {instance['InstanceId']} "
                        f"from {instance.get('VpcId')}; AWS refuses targets from another VPC"
                    )
        elif group.get("TargetType") == "ip":
            vpc = _call("read VPC", ec2.describe_vpcs, VpcIds=[vpc_id])["Vpcs"][0]
            networks = _networks(vpc_cidrs(vpc))
            for target in targets:
                if target.get("AvailabilityZone") == "all":
                    continue
                address = ipaddress.ip_address(target["Id"])
                if not any(address in n for n in networks):
                    problems.append(
                        f"target group {name} (in {vpc_id}) has IP target {address} outside "
                        "the VPC; register it with AvailabilityZone=all if it is peered"
                    )
    return problems


def _instances(ec2: EC2Client, ids: Sequence[str]) -> list[InstanceTypeDef]:
    if not ids:
        return []
    try:
        pages = ec2.get_paginator("describe_instances").paginate(InstanceIds=list(ids))
        return [i for page in pages for r in page["Reservations"] for i in r["Instances"]]
    except ClientError as exc:
        raise from_client_error(exc, f"read instances {summarize(ids)}") from exc


# --- security-group references -----------------------------------------------------------


def active_peerings(ec2: EC2Client, vpc_ids: Sequence[str]) -> list[VpcPeeringConnectionTypeDef]:
    """The active peering connections with an end in one of ``vpc_ids``."""
    if not vpc_ids:
        return []
    found: dict[str, VpcPeeringConnectionTypeDef] = {}
    paginator = ec2.get_paginator("describe_vpc_peering_connections")
    for side in ("requester-vpc-info.vpc-id", "accepter-vpc-info.vpc-id"):
        filters: list[FilterTypeDef] = [
            {"Name": side, "Values": list(vpc_ids)},
            {"Name": "status-code", "Values": ["active"]},
        ]
        try:
            for page in paginator.paginate(Filters=filters):
                for pcx in page.get("VpcPeeringConnections", []):
                    found[pcx["VpcPeeringConnectionId"]] = pcx
        except ClientError as exc:
            raise from_client_error(exc, "read VPC peering connections") from exc
    return list(found.values())


def _peered(peerings: Iterable[VpcPeeringConnectionTypeDef], a: str, b: str) -> bool:
    for pcx in peerings:
        ends = {pcx["RequesterVpcInfo"].get("VpcId"), pcx["AccepterVpcInfo"].get("VpcId")}
        if ends == {a, b} and pcx.get("Status", {}).get("Code") == "active":
            return True
    return False


def sg_reference_problems(ec2: EC2Client, group_ids: Sequence[str]) -> list[str]:
    """Rules of ``group_ids`` referencing groups outside their VPC and its active peers."""
    if not group_ids:
        return []
    unique = list(dict.fromkeys(group_ids))  # one group may play two parts (node, admitting)
    groups = _call("read security groups", ec2.describe_security_groups, GroupIds=unique)[
        "SecurityGroups"
    ]
    refs: dict[str, set[str]] = {}
    for group in groups:
        for perm in [*group.get("IpPermissions", []), *group.get("IpPermissionsEgress", [])]:
            for pair in perm.get("UserIdGroupPairs", []):
                if pair.get("GroupId"):
                    refs.setdefault(group["GroupId"], set()).add(pair["GroupId"])
    referenced = sorted({r for rs in refs.values() for r in rs})
    vpc_of = {g["GroupId"]: g.get("VpcId") for g in groups}
    problems: list[str] = []
    for ref in referenced:
        if ref in vpc_of:
            continue
        try:
            answer = ec2.describe_security_groups(GroupIds=[ref])["SecurityGroups"]
            vpc_of[ref] = answer[0].get("VpcId") if answer else None
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "InvalidGroup.NotFound":
                raise from_client_error(exc, f"read security group {ref}") from exc
            vpc_of[ref] = None
    peerings = active_peerings(ec2, sorted({v for v in vpc_of.values() if v}))
    for group_id in sorted(refs):
        own = vpc_of[group_id]
        for ref in sorted(refs[group_id]):
            other = vpc_of.get(ref)
            if other is None:
                problems.append(
                    f"security group {group_id} references {ref}, which this account cannot "
                    "see (deleted, or in another account/region)"
                )
            elif other != own and not _peered(peerings, str(own), other):
                problems.append(
                    f"security group {group_id} (in {own}) references {ref} in {other}, "
                    "which is not actively peered with it"
                )
    return problems


# --- peered CIDRs ------------------------------------------------------------------------


def peering_cidr_problems(ec2: EC2Client, vpc_ids: Sequence[str]) -> list[str]:
    """Active peerings of ``vpc_ids`` whose two sides' CIDRs overlap."""
    problems: list[str] = []
    peerings = active_peerings(ec2, vpc_ids)
    sides = sorted(
        {side["VpcId"] for p in peerings for side in (p["RequesterVpcInfo"], p["AccepterVpcInfo"])}
    )
    vpcs = _describe_vpcs(ec2, sides)
    for pcx in sorted(peerings, key=lambda p: p["VpcPeeringConnectionId"]):
        a, b = pcx["RequesterVpcInfo"]["VpcId"], pcx["AccepterVpcInfo"]["VpcId"]
        if a in vpcs and b in vpcs:
            for x, y in overlapping(vpc_cidrs(vpcs[a]), vpc_cidrs(vpcs[b])):
                problems.append(
                    f"peering {pcx['VpcPeeringConnectionId']}: {a} {x} overlaps {b} {y}"
                )
    return problems


def planned_peering_problems(ec2: EC2Client, vpc_a: str, vpc_b: str) -> list[str]:
    """Overlaps that would make AWS refuse peering ``vpc_a`` with ``vpc_b``."""
    vpcs = _describe_vpcs(ec2, [vpc_a, vpc_b])
    return [
        f"planned peering {vpc_a} - {vpc_b}: {x} overlaps {y}"
        for x, y in overlapping(vpc_cidrs(vpcs[vpc_a]), vpc_cidrs(vpcs[vpc_b]))
    ]


def address_problems(ec2: EC2Client, vpc_id: str, planned: Mapping[str, str]) -> list[str]:
    """Each planned fixed address (address -> the description the program gives its
    interface) that another interface in ``vpc_id`` holds: AWS refuses the create
    (``InvalidIPAddress.InUse``). An interface the program made already (its own
    description, at its address) is no problem: an earlier update got that far."""
    if not planned:
        return []
    filters: list[FilterTypeDef] = [
        {"Name": "vpc-id", "Values": [vpc_id]},
        {"Name": "addresses.private-ip-address", "Values": sorted(planned)},
    ]
    found = _call("describe network interfaces", ec2.describe_network_interfaces, Filters=filters)[
        "NetworkInterfaces"
    ]
    problems = []
    for interface in found:
        held = {a.get("PrivateIpAddress") for a in interface.get("PrivateIpAddresses", [])}
        held.add(interface.get("PrivateIpAddress"))
        for address in sorted(str(a) for a in held if a in planned):
            if interface.get("Description") == planned[address]:
                continue
            holder = interface.get("Attachment", {}).get("InstanceId") or interface.get(
                "NetworkInterfaceId", "an interface"
            )
            problems.append(f"{address} (for {planned[address]}) is held by {holder}")
    return problems


def _describe_vpcs(ec2: EC2Client, vpc_ids: Sequence[str]) -> dict[str, VpcTypeDef]:
    if not vpc_ids:
        return {}
    vpcs = _call("read VPCs", ec2.describe_vpcs, VpcIds=list(vpc_ids))["Vpcs"]
    return {v["VpcId"]: v for v in vpcs}


# --- all together ------------------------------------------------------------------------


def preflight(
    ec2: EC2Client,
    elbv2: ElasticLoadBalancingv2Client,
    *,
    target_group_arns: Sequence[str] = (),
    security_group_ids: Sequence[str] = (),
    vpc_ids: Sequence[str] = (),
    planned_peerings: Sequence[tuple[str, str]] = (),
    fixed_addresses: tuple[str, Mapping[str, str]] | None = None,
) -> PreflightReport:
    """Run the checks that have inputs; read-only. ``.require()`` refuses on problems."""
    checks: list[str] = []
    problems: list[str] = []
    if target_group_arns:
        checks.append("target-group VPCs")
        problems += target_group_vpc_problems(elbv2, ec2, target_group_arns)
    if security_group_ids:
        checks.append("security-group references")
        problems += sg_reference_problems(ec2, security_group_ids)
    if vpc_ids:
        checks.append("peered CIDRs")
        problems += peering_cidr_problems(ec2, vpc_ids)
    for a, b in planned_peerings:
        checks.append(f"planned peering {a}-{b}")
        problems += planned_peering_problems(ec2, a, b)
    if fixed_addresses is not None:
        checks.append("fixed addresses free")
        problems += address_problems(ec2, *fixed_addresses)
    return PreflightReport(tuple(checks), tuple(problems))
