"""Whether a cluster's instances in two peered VPCs can reach each other, read from the account.

Before vpc-move's DNS cutover, traffic that used to stay in one VPC must cross the
peering: old nodes forward node-port traffic to ingress pods on new nodes, pods talk
across nodes, new workers reach the API on members still in the source VPC, and those
members reach the new kubelets. AWS lets a packet through only when three things agree
(VPC User Guide, "Route tables", "Network ACLs", "Security groups"):

- **Routes.** A subnet uses its own route table, else the VPC's main table; of the routes
  whose destination holds an address the most specific wins. Each subnet that must talk
  to the other VPC needs a route that covers the other subnet and targets an active
  peering connection between the two VPCs, with no more specific route taking part of
  it elsewhere.
- **Network ACLs**, stateless: the subnet's one ACL's entries are evaluated in
  rule-number order, the first that matches decides (the last, ``*``, denies). So the
  sender's egress and the receiver's ingress must allow the traffic, and the replies
  (TCP to ephemeral ports 1024-65535) the other way.
- **Security groups**, stateful: one of the receiver's groups admits the sender (by one
  of the sender's groups, referenced across the peering, or a range holding its address)
  and one of the sender's groups lets it out to the receiver.

Each :class:`Need` is a kind of traffic between two sets of instances; each problem
names the subnet pair, table, ACL rule or group that stops it. Reachability Analyzer
would answer the same on a real account, but moto has none; this check works on both.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from automation.aws.nodes import ClusterInstance
from automation.aws.preflight import active_peerings
from automation.core.errors import from_client_error

if TYPE_CHECKING:
    from mypy_boto3_ec2 import EC2Client

ALL = "-1"
TCP = "6"
EPHEMERAL = (1024, 65535)
Network = ipaddress.IPv4Network


@dataclass(frozen=True)
class Need:
    """Traffic that must flow from ``sources`` to ``destinations`` (all of it, or TCP to
    one port)."""

    what: str
    sources: tuple[ClusterInstance, ...]
    destinations: tuple[ClusterInstance, ...]
    port: int | None = None  # None: every protocol and port

    @property
    def protocol(self) -> str:
        return ALL if self.port is None else TCP

    @property
    def traffic(self) -> str:
        return "all traffic" if self.port is None else f"TCP {self.port}"


@dataclass(frozen=True)
class _Account:
    """What the checks read, once per check."""

    subnets: Mapping[str, Network]
    tables: Mapping[str, dict[str, Any]]  # subnet id -> its route table
    acls: Mapping[str, dict[str, Any]]  # subnet id -> its network ACL
    groups: Mapping[str, dict[str, Any]]  # group id -> security group
    peerings: Mapping[frozenset[str], tuple[str, ...]]  # {vpc a, vpc b} -> active pcx ids


def reachability_problems(ec2: EC2Client, needs: Sequence[Need]) -> list[str]:
    """Every route, ACL entry and security group rule missing for ``needs``, in words."""
    instances = [i for need in needs for i in (*need.sources, *need.destinations)]
    if not instances:
        return []
    account = _read(ec2, instances)
    problems: list[str] = []
    for need in needs:
        for problem in _need_problems(account, need):
            if problem not in problems:
                problems.append(problem)
    return problems


def _need_problems(account: _Account, need: Need) -> Iterable[str]:
    pairs = {
        (src.subnet_id, dst.subnet_id): (src, dst)
        for src in need.sources
        for dst in need.destinations
        if src.vpc_id != dst.vpc_id
    }
    for (src_subnet, dst_subnet), (src, dst) in sorted(pairs.items()):
        yield from _route_problems(account, src, dst)
        yield from _route_problems(account, dst, src)
        yield from _acl_problems(account, need, src_subnet, dst_subnet)
    group_pairs = {
        (src.security_group_ids, dst.security_group_ids): (src, dst)
        for src in need.sources
        for dst in need.destinations
        if src.vpc_id != dst.vpc_id
    }
    for _, (src, dst) in sorted(group_pairs.items()):
        yield from _group_problems(account, need, src, dst)


# --- routes ------------------------------------------------------------------------------


def _route_problems(account: _Account, src: ClusterInstance, dst: ClusterInstance) -> Iterable[str]:
    table = account.tables.get(src.subnet_id)
    peer = account.subnets[dst.subnet_id]
    where = f"subnet {src.subnet_id} -> {dst.subnet_id} ({peer})"
    if table is None:
        yield f"{where}: the subnet has no route table"
        return
    pcxs = account.peerings.get(frozenset({src.vpc_id, dst.vpc_id}), ())
    table_id = table["RouteTableId"]
    if not pcxs:
        yield f"{where}: {src.vpc_id} and {dst.vpc_id} have no active peering connection"
        return
    covering: list[tuple[Network, dict[str, Any]]] = []
    for route in table.get("Routes", []):
        cidr = route.get("DestinationCidrBlock")
        if not cidr:
            continue
        net = ipaddress.ip_network(cidr)
        if isinstance(net, Network) and net.overlaps(peer):
            covering.append((net, route))
    best = max(
        (r for r in covering if peer.subnet_of(r[0])), key=lambda r: r[0].prefixlen, default=None
    )
    if best is None:
        yield f"{where}: route table {table_id} has no route to {peer}"
        return
    for net, route in covering:
        if net.prefixlen < best[0].prefixlen:
            continue  # less specific than the covering route: never chosen
        target = route.get("VpcPeeringConnectionId")
        if target not in pcxs:
            via = target or route.get("GatewayId") or route.get("NatGatewayId") or "elsewhere"
            yield f"{where}: route table {table_id} sends {net} to {via}, not over the peering"
        elif route.get("State") == "blackhole":
            yield f"{where}: route table {table_id}'s route to {net} over {target} is a blackhole"


# --- network ACLs ------------------------------------------------------------------------


def _acl_problems(account: _Account, need: Need, src_subnet: str, dst_subnet: str) -> Iterable[str]:
    src_net, dst_net = account.subnets[src_subnet], account.subnets[dst_subnet]
    ports = None if need.port is None else (need.port, need.port)
    replies = None if need.port is None else EPHEMERAL
    checks = (
        (src_subnet, True, dst_net, ports, need.traffic),
        (dst_subnet, False, src_net, ports, need.traffic),
        (dst_subnet, True, src_net, replies, "its replies"),
        (src_subnet, False, dst_net, replies, "its replies"),
    )
    for subnet, egress, peer, span, what in checks:
        acl = account.acls.get(subnet)
        if acl is None:
            continue
        verdict = _acl_verdict(acl.get("Entries", []), egress, peer, span)
        if verdict:
            way = "out to" if egress else "in from"
            yield (
                f"network ACL {acl['NetworkAclId']} of subnet {subnet}: {verdict} "
                f"({need.what}: {what} {way} {peer})"
            )


def _acl_verdict(
    entries: Sequence[Mapping[str, Any]], egress: bool, peer: Network, span: tuple[int, int] | None
) -> str | None:
    """None when ``span`` (None: every protocol and port) to or from ``peer`` is allowed."""
    for entry in sorted(
        (e for e in entries if bool(e.get("Egress")) == egress), key=lambda e: e["RuleNumber"]
    ):
        net = ipaddress.ip_network(entry.get("CidrBlock") or "0.0.0.0/0")
        if not (isinstance(net, Network) and net.overlaps(peer)):
            continue
        protocol = str(entry.get("Protocol"))
        low, high = _entry_ports(entry)
        other_traffic = protocol != TCP or high < span[0] or span[1] < low if span else False
        if span is not None and protocol != ALL and other_traffic:
            continue  # TCP to ``span`` is asked for: this entry is about other traffic
        number = entry["RuleNumber"]
        if entry.get("RuleAction") != "allow":
            return f"rule {number} denies {_entry_text(entry)}"
        whole = peer.subnet_of(net) and (
            protocol == ALL or (span is not None and low <= span[0] and span[1] <= high)
        )
        if whole:
            return None
    return "no rule allows it (the last rule denies everything)"


def _entry_ports(entry: Mapping[str, Any]) -> tuple[int, int]:
    span = entry.get("PortRange") or {}
    return int(span.get("From", 0)), int(span.get("To", 65535))


def _entry_text(entry: Mapping[str, Any]) -> str:
    protocol = str(entry.get("Protocol"))
    if protocol == ALL:
        return f"all traffic for {entry.get('CidrBlock')}"
    low, high = _entry_ports(entry)
    return f"protocol {protocol} ports {low}-{high} for {entry.get('CidrBlock')}"


# --- security groups ---------------------------------------------------------------------


def _group_problems(
    account: _Account, need: Need, src: ClusterInstance, dst: ClusterInstance
) -> Iterable[str]:
    if not any(_admits(account.groups.get(g), False, src, need) for g in dst.security_group_ids):
        yield (
            f"security groups {', '.join(dst.security_group_ids)} of {dst.instance_id} "
            f"admit no {need.traffic} from {src.instance_id}'s groups or address ({need.what})"
        )
    if not any(_admits(account.groups.get(g), True, dst, need) for g in src.security_group_ids):
        yield (
            f"security groups {', '.join(src.security_group_ids)} of {src.instance_id} "
            f"let no {need.traffic} out to {dst.instance_id} ({need.what})"
        )


def _admits(
    group: Mapping[str, Any] | None, egress: bool, peer: ClusterInstance, need: Need
) -> bool:
    """Whether ``group`` lets ``need``'s traffic in from (or out to) ``peer``."""
    if group is None:
        return False
    rules = group.get("IpPermissionsEgress" if egress else "IpPermissions", [])
    address = ipaddress.ip_address(peer.private_ip) if peer.private_ip else None
    for rule in rules:
        protocol = str(rule.get("IpProtocol"))
        if protocol == ALL:
            fits = True
        elif need.port is None or protocol not in ("tcp", TCP):
            fits = False
        else:
            fits = int(rule.get("FromPort", 0)) <= need.port <= int(rule.get("ToPort", 65535))
        if not fits:
            continue
        pairs = rule.get("UserIdGroupPairs", [])
        if any(p.get("GroupId") in peer.security_group_ids for p in pairs):
            return True
        for span in rule.get("IpRanges", []):
            if address is not None and address in ipaddress.ip_network(span["CidrIp"]):
                return True
    return False


# --- reading the account -----------------------------------------------------------------


def _read(ec2: EC2Client, instances: Sequence[ClusterInstance]) -> _Account:
    subnet_ids = sorted({i.subnet_id for i in instances})
    vpc_ids = sorted({i.vpc_id for i in instances})
    group_ids = sorted({g for i in instances for g in i.security_group_ids})
    try:
        subnets = ec2.describe_subnets(SubnetIds=subnet_ids)["Subnets"]
        tables = _pages(ec2, "describe_route_tables", "RouteTables", vpc_ids)
        acls = _pages(ec2, "describe_network_acls", "NetworkAcls", vpc_ids)
        groups = (
            ec2.describe_security_groups(GroupIds=group_ids)["SecurityGroups"] if group_ids else []
        )
    except ClientError as exc:
        raise from_client_error(exc, "read routes, network ACLs and security groups") from exc
    return _Account(
        subnets={s["SubnetId"]: ipaddress.IPv4Network(s["CidrBlock"]) for s in subnets},
        tables=_by_subnet(tables, subnets, "RouteTableId"),
        acls=_by_subnet(acls, subnets, "NetworkAclId"),
        groups={g["GroupId"]: dict(g) for g in groups},
        peerings=_by_ends(active_peerings(ec2, vpc_ids)),
    )


def _pages(ec2: EC2Client, operation: str, key: str, vpc_ids: Sequence[str] | None) -> list[Any]:
    kwargs: dict[str, Any] = {}
    if vpc_ids is not None:
        kwargs["Filters"] = [{"Name": "vpc-id", "Values": list(vpc_ids)}]
    found: list[Any] = []
    for page in ec2.get_paginator(operation).paginate(**kwargs):  # type: ignore[call-overload]
        found.extend(page.get(key, []))
    return found


def _by_subnet(
    items: Sequence[Mapping[str, Any]], subnets: Sequence[Mapping[str, Any]], id_key: str
) -> dict[str, dict[str, Any]]:
    """Subnet id -> the table (or ACL) associated with it, else its VPC's main/default one."""
    explicit: dict[str, dict[str, Any]] = {}
    main: dict[str, dict[str, Any]] = {}
    for item in items:
        for association in item.get("Associations", []):
            if association.get("SubnetId"):
                explicit[association["SubnetId"]] = dict(item)
            if association.get("Main"):
                main[item["VpcId"]] = dict(item)
        if item.get("IsDefault"):
            main[item["VpcId"]] = dict(item)
    return {
        s["SubnetId"]: explicit.get(s["SubnetId"]) or main[s["VpcId"]]
        for s in subnets
        if s["SubnetId"] in explicit or s["VpcId"] in main
    }


def _by_ends(peerings: Sequence[Mapping[str, Any]]) -> dict[frozenset[str], tuple[str, ...]]:
    found: dict[frozenset[str], tuple[str, ...]] = {}
    for pcx in peerings:
        ends = frozenset({pcx["RequesterVpcInfo"]["VpcId"], pcx["AccepterVpcInfo"]["VpcId"]})
        found[ends] = (*found.get(ends, ()), pcx["VpcPeeringConnectionId"])
    return found
