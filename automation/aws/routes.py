"""Route tables for native pod routing: capacity before the switch, routes after it.

Seed 002 switches Calico from IPIP to native routing, which needs one VPC route per
node pod CIDR in every route table of the cluster. Two things go wrong in practice:
a table runs into AWS's "Routes per route table" quota (50 by default) half-way
through, and a node's ``NetworkUnavailable=False`` condition claims routes that a table
lacks (or holds as ``blackhole``). So the capacity precheck counts, per table, the
routes the switch will need — nodes of both VPCs while both exist, plus every
non-node route already there — against the account's quota (Service Quotas
``vpc/L-93826ACB`` when readable, AWS's default otherwise) and refuses with the
numbers; and the verification looks at every table for every node.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Unpack

from botocore.exceptions import BotoCoreError, ClientError

from automation.aws.nodes import (
    LEGACY_CLUSTER_TAG,
    ClusterInstance,
    cluster_node_names,
    cluster_tag_key,
)
from automation.core.errors import PreconditionFailed, UserError, from_client_error
from automation.core.waiting import Pending, summarize

if TYPE_CHECKING:
    from mypy_boto3_ec2 import EC2Client
    from mypy_boto3_ec2.type_defs import (
        DescribeRouteTablesRequestPaginateTypeDef,
        FilterTypeDef,
        RouteTableTypeDef,
        RouteTypeDef,
    )
    from mypy_boto3_service_quotas import ServiceQuotasClient

ROUTES_QUOTA_SERVICE = "vpc"
ROUTES_QUOTA_CODE = "L-93826ACB"  # "Routes per route table"
AWS_DEFAULT_ROUTES_PER_TABLE = 50
PROPAGATED = "EnableVgwRoutePropagation"  # propagated routes have their own quota


@dataclass(frozen=True)
class NodeRoute:
    """A node and the route its pod CIDR needs: to its instance, or one of its ENIs."""

    node: str
    pod_cidr: str
    instance_id: str
    network_interface_ids: tuple[str, ...] = ()

    @classmethod
    def for_instance(cls, node: str, pod_cidr: str, instance: ClusterInstance) -> NodeRoute:
        return cls(node, pod_cidr, instance.instance_id, instance.network_interface_ids)


def node_routes(
    nodes: Mapping[str, ClusterInstance], pod_cidrs: Mapping[str, str | None]
) -> tuple[NodeRoute, ...]:
    """Join node→instance (``NodeMatch.nodes``) with node→``spec.podCIDR``.

    A node without a pod CIDR is a ``UserError``: native routing cannot serve it.
    """
    missing = sorted(name for name in nodes if not pod_cidrs.get(name))
    if missing:
        raise UserError(
            f"Nodes {summarize(missing)} have no spec.podCIDR; native routing needs the "
            "controller-manager to allocate node CIDRs (--allocate-node-cidrs)."
        )
    return tuple(
        NodeRoute.for_instance(name, str(pod_cidrs[name]), instance)
        for name, instance in sorted(nodes.items())
    )


def cluster_node_routes(
    ec2: EC2Client,
    *,
    cluster: str,
    vpc_ids: Sequence[str],
    provider_ids: Mapping[str, str | None],
    pod_cidrs: Mapping[str, str | None],
) -> tuple[NodeRoute, ...]:
    """The routes every node of ``cluster`` in ``vpc_ids`` needs (both VPCs while both exist).

    ``provider_ids`` and ``pod_cidrs`` map Kubernetes node names to ``spec.providerID``
    and ``spec.podCIDR``; instances that are no node (yet) need no route.
    """
    matched: dict[str, ClusterInstance] = {}
    for vpc_id in vpc_ids:
        matched.update(
            cluster_node_names(ec2, cluster=cluster, vpc_id=vpc_id, nodes=provider_ids).nodes
        )
    return node_routes(matched, pod_cidrs)


# --- the limit ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RouteLimit:
    """Routes allowed per table, and where that number comes from."""

    value: int
    source: str


def route_table_limit(quotas: ServiceQuotasClient) -> RouteLimit:
    """The account's applied quota when readable, else AWS's default of 50."""
    try:
        answer = quotas.get_service_quota(
            ServiceCode=ROUTES_QUOTA_SERVICE, QuotaCode=ROUTES_QUOTA_CODE
        )
        value = int(answer["Quota"]["Value"])
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "error")
        return RouteLimit(AWS_DEFAULT_ROUTES_PER_TABLE, f"AWS default (quota not readable: {code})")
    except (BotoCoreError, KeyError, TypeError, ValueError) as exc:
        return RouteLimit(
            AWS_DEFAULT_ROUTES_PER_TABLE,
            f"AWS default (quota not readable: {type(exc).__name__})",
        )
    return RouteLimit(value, f"Service Quotas {ROUTES_QUOTA_SERVICE}/{ROUTES_QUOTA_CODE}")


# --- reading tables ----------------------------------------------------------------------


def _describe_tables(
    ec2: EC2Client, action: str, **kwargs: Unpack[DescribeRouteTablesRequestPaginateTypeDef]
) -> list[RouteTableTypeDef]:
    try:
        return [
            table
            for page in ec2.get_paginator("describe_route_tables").paginate(**kwargs)
            for table in page.get("RouteTables", [])
        ]
    except ClientError as exc:
        raise from_client_error(exc, action) from exc


def cluster_route_tables(
    ec2: EC2Client, *, vpc_ids: Sequence[str], cluster: str | None = None
) -> tuple[str, ...]:
    """Route-table ids in ``vpc_ids``; with ``cluster``, only tables tagged for it."""
    base: list[FilterTypeDef] = [{"Name": "vpc-id", "Values": list(vpc_ids)}]
    if cluster is None:
        styles: list[list[FilterTypeDef]] = [[]]
    else:
        styles = [
            [{"Name": f"tag:{LEGACY_CLUSTER_TAG}", "Values": [cluster]}],
            [{"Name": "tag-key", "Values": [cluster_tag_key(cluster)]}],
        ]
    ids: set[str] = set()
    for style in styles:
        tables = _describe_tables(ec2, "list route tables", Filters=base + style)
        ids.update(t["RouteTableId"] for t in tables)
    return tuple(sorted(ids))


def _tables(ec2: EC2Client, route_table_ids: Sequence[str]) -> list[RouteTableTypeDef]:
    if not route_table_ids:
        raise UserError("No route tables were given to check; name the cluster's route tables.")
    tables = _describe_tables(
        ec2, f"read route tables {summarize(route_table_ids)}", RouteTableIds=list(route_table_ids)
    )
    return sorted(tables, key=lambda t: t["RouteTableId"])


def _destination(route: RouteTypeDef) -> str | None:
    return route.get("DestinationCidrBlock") or route.get("DestinationIpv6CidrBlock")


def _same_cidr(a: str, b: str) -> bool:
    try:
        return ipaddress.ip_network(a, strict=False) == ipaddress.ip_network(b, strict=False)
    except ValueError:
        return a == b


# --- capacity ----------------------------------------------------------------------------


@dataclass(frozen=True)
class TableCapacity:
    """Routes one table will hold after the switch, against the limit."""

    route_table_id: str
    node_routes: int
    other_routes: int
    limit: int

    @property
    def needed(self) -> int:
        return self.node_routes + self.other_routes

    @property
    def fits(self) -> bool:
        return self.needed <= self.limit

    def describe(self) -> str:
        return (
            f"{self.route_table_id} needs {self.needed} routes ({self.node_routes} node pod "
            f"CIDRs + {self.other_routes} others) of {self.limit}"
        )


@dataclass(frozen=True)
class CapacityReport:
    tables: tuple[TableCapacity, ...]
    limit: RouteLimit

    @property
    def ok(self) -> bool:
        return all(t.fits for t in self.tables)

    @property
    def over(self) -> tuple[TableCapacity, ...]:
        return tuple(t for t in self.tables if not t.fits)

    def message(self) -> str:
        worst = max(self.tables, key=lambda t: t.needed, default=None)
        if self.ok:
            peak = f"; fullest: {worst.describe()}" if worst else ""
            return f"{len(self.tables)} route table(s) fit ({self.limit.source}){peak}."
        over = "; ".join(t.describe() for t in self.over)
        wanted = max(t.needed for t in self.over)
        return (
            f"Route tables are too small for native routing: {over} ({self.limit.source}). "
            f"Raise 'Routes per route table' to at least {wanted} (up to 1000): aws "
            f"service-quotas request-service-quota-increase --service-code "
            f"{ROUTES_QUOTA_SERVICE} --quota-code {ROUTES_QUOTA_CODE} --desired-value {wanted}; "
            "or stay on the overlay."
        )

    def require(self) -> CapacityReport:
        """Raise ``PreconditionFailed`` with the numbers when any table is too small."""
        if not self.ok:
            raise PreconditionFailed(self.message())
        return self


def route_capacity(
    ec2: EC2Client,
    quotas: ServiceQuotasClient,
    *,
    route_table_ids: Sequence[str],
    nodes: Iterable[NodeRoute],
    limit: RouteLimit | None = None,
) -> CapacityReport:
    """Count per table: one route per distinct node pod CIDR, plus every other route.

    Pass the nodes of both VPCs while both exist. Existing routes to a node's pod CIDR
    count once (as that node's route); any other non-propagated route — the local
    route included, conservatively — counts as well. Read-only.
    """
    limit = limit or route_table_limit(quotas)
    cidrs = {n.pod_cidr for n in nodes}
    tables = []
    for table in _tables(ec2, route_table_ids):
        others = sum(
            1
            for route in table.get("Routes", [])
            if route.get("Origin") != PROPAGATED
            and (dest := _destination(route))
            and not any(_same_cidr(dest, cidr) for cidr in cidrs)
        )
        tables.append(TableCapacity(table["RouteTableId"], len(cidrs), others, limit.value))
    return CapacityReport(tuple(tables), limit)


def require_route_capacity(
    ec2: EC2Client,
    quotas: ServiceQuotasClient,
    *,
    route_table_ids: Sequence[str],
    nodes: Iterable[NodeRoute],
    limit: RouteLimit | None = None,
) -> CapacityReport:
    """``route_capacity`` that refuses (``PreconditionFailed``) when a table is too small."""
    return route_capacity(
        ec2, quotas, route_table_ids=route_table_ids, nodes=nodes, limit=limit
    ).require()


# --- verification ------------------------------------------------------------------------


@dataclass(frozen=True)
class RouteProblem:
    route_table_id: str
    node: str
    pod_cidr: str
    problem: str  # "missing", "blackhole", "misrouted to <target>", "<state>"

    def describe(self) -> str:
        return f"{self.route_table_id}: {self.node} {self.pod_cidr} {self.problem}"


@dataclass(frozen=True)
class RouteVerification:
    """Every node's pod CIDR checked in every table."""

    route_table_ids: tuple[str, ...]
    nodes: int
    problems: tuple[RouteProblem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    def by_table(self) -> dict[str, list[RouteProblem]]:
        out: dict[str, list[RouteProblem]] = {t: [] for t in self.route_table_ids}
        for problem in self.problems:
            out[problem.route_table_id].append(problem)
        return out

    def pending(self) -> Pending:
        detail = f"{self.nodes} node(s) x {len(self.route_table_ids)} route table(s)"
        return Pending.of([p.describe() for p in self.problems], detail=detail)

    def message(self) -> str:
        if self.ok:
            return (
                f"All {self.nodes} node pod CIDRs have active routes in "
                f"{len(self.route_table_ids)} route table(s)."
            )
        parts = []
        for table, problems in self.by_table().items():
            if problems:
                kinds: dict[str, int] = {}
                for p in problems:
                    kinds[p.problem.split(" ")[0]] = kinds.get(p.problem.split(" ")[0], 0) + 1
                counts = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
                parts.append(f"{table}: {counts} ({summarize([p.node for p in problems], 3)})")
        return "Node routes incomplete: " + "; ".join(parts) + "."


def _route_problem(route: RouteTypeDef | None, node: NodeRoute) -> str | None:
    if route is None:
        return "missing"
    state = route.get("State", "active")
    if state == "blackhole":
        return "blackhole"
    if state != "active":
        return state
    if route.get("InstanceId") == node.instance_id:
        return None
    if route.get("NetworkInterfaceId") in node.network_interface_ids:
        return None
    target = (
        route.get("InstanceId")
        or route.get("NetworkInterfaceId")
        or route.get("GatewayId")
        or "another target"
    )
    return f"misrouted to {target}"


def verify_node_routes(
    ec2: EC2Client, *, route_table_ids: Sequence[str], nodes: Sequence[NodeRoute]
) -> RouteVerification:
    """Check each node's pod CIDR has an ``active`` route to its instance in every table."""
    problems = []
    tables = _tables(ec2, route_table_ids)
    for table in tables:
        routes = [r for r in table.get("Routes", []) if _destination(r)]
        for node in sorted(nodes, key=lambda n: n.node):
            route = next(
                (r for r in routes if _same_cidr(str(_destination(r)), node.pod_cidr)), None
            )
            problem = _route_problem(route, node)
            if problem:
                problems.append(
                    RouteProblem(table["RouteTableId"], node.node, node.pod_cidr, problem)
                )
    return RouteVerification(tuple(t["RouteTableId"] for t in tables), len(nodes), tuple(problems))


def routes_pending(
    ec2: EC2Client, *, route_table_ids: Sequence[str], nodes: Sequence[NodeRoute]
) -> Pending:
    """Gate check: the (table, node) pairs whose route is missing, blackhole or wrong."""
    return verify_node_routes(ec2, route_table_ids=route_table_ids, nodes=nodes).pending()
