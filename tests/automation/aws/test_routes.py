"""Route-table capacity and per-table node-route verification, against moto's EC2."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from botocore.stub import Stubber

from automation.aws.clients import AwsClients
from automation.aws.nodes import cluster_node_names
from automation.aws.routes import (
    AWS_DEFAULT_ROUTES_PER_TABLE,
    NodeRoute,
    RouteLimit,
    cluster_node_routes,
    cluster_route_tables,
    node_routes,
    require_route_capacity,
    route_capacity,
    route_table_limit,
    routes_pending,
    verify_node_routes,
)
from automation.core.errors import PreconditionFailed, UserError
from tests.support.moto_patches import blackhole_routes
from tests.support.moto_world import Network, make_network, run_instances


@dataclass(frozen=True)
class Cluster:
    network: Network
    tables: tuple[str, str]
    nodes: tuple[NodeRoute, ...]
    igw: str


def _table(ec2: Any, vpc_id: str, tags: dict[str, str]) -> str:
    spec = [
        {"ResourceType": "route-table", "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}
    ]
    return str(
        ec2.create_route_table(VpcId=vpc_id, TagSpecifications=spec)["RouteTable"]["RouteTableId"]
    )


@pytest.fixture
def cluster(aws: AwsClients) -> Cluster:
    """Three nodes, two cluster route tables (each with a default route), no node routes."""
    ec2 = aws.ec2
    net = make_network(ec2)
    run_instances(ec2, net, 3, {"KubernetesCluster": "prod"})
    igw = ec2.create_internet_gateway()["InternetGateway"]["InternetGatewayId"]
    ec2.attach_internet_gateway(InternetGatewayId=igw, VpcId=net.vpc_id)
    tables = (
        _table(ec2, net.vpc_id, {"KubernetesCluster": "prod"}),
        _table(ec2, net.vpc_id, {"kubernetes.io/cluster/prod": "owned"}),
    )
    for table in tables:
        ec2.create_route(RouteTableId=table, DestinationCidrBlock="0.0.0.0/0", GatewayId=igw)
    match = cluster_node_names(ec2, cluster="prod", vpc_id=net.vpc_id)
    cidrs = {name: f"100.96.{i}.0/24" for i, name in enumerate(match.names)}
    return Cluster(net, tables, node_routes(match.nodes, cidrs), igw)


def _route_all(ec2: Any, cluster: Cluster, *, via_eni: bool = False) -> None:
    for table in cluster.tables:
        for node in cluster.nodes:
            target = (
                {"NetworkInterfaceId": node.network_interface_ids[0]}
                if via_eni
                else {"InstanceId": node.instance_id}
            )
            ec2.create_route(RouteTableId=table, DestinationCidrBlock=node.pod_cidr, **target)


def _synthetic(count: int, start: int = 0) -> list[NodeRoute]:
    return [
        NodeRoute(f"n{i}", f"100.{64 + i // 256}.{i % 256}.0/24", f"i-{i:08x}")
        for i in range(start, start + count)
    ]


@pytest.mark.moto
def test_cluster_route_tables_are_found_by_either_tag(aws: AwsClients, cluster: Cluster) -> None:
    _table(aws.ec2, cluster.network.vpc_id, {"KubernetesCluster": "other"})
    assert cluster_route_tables(aws.ec2, vpc_ids=[cluster.network.vpc_id], cluster="prod") == tuple(
        sorted(cluster.tables)
    )
    everything = cluster_route_tables(aws.ec2, vpc_ids=[cluster.network.vpc_id])
    assert set(cluster.tables) < set(everything)


@pytest.mark.moto
def test_limit_is_read_from_service_quotas(aws: AwsClients) -> None:
    limit = route_table_limit(aws.service_quotas)
    assert limit == RouteLimit(50, "Service Quotas vpc/L-93826ACB")


@pytest.mark.moto
@pytest.mark.parametrize(
    ("extra_nodes", "fits"),
    # each table holds local + default route; 3 real nodes; limit 50
    [(0, True), (45, True), (46, False), (60, False)],
    ids=["3-nodes", "at-the-limit", "one-over", "far-over"],
)
def test_capacity_counts_nodes_and_other_routes(
    aws: AwsClients, cluster: Cluster, extra_nodes: int, fits: bool
) -> None:
    """moto never fills a table (no quota): the count is checked against the quota it serves."""
    nodes = [*cluster.nodes, *_synthetic(extra_nodes)]
    report = route_capacity(
        aws.ec2, aws.service_quotas, route_table_ids=cluster.tables, nodes=nodes
    )
    assert [(t.node_routes, t.other_routes) for t in report.tables] == [(3 + extra_nodes, 2)] * 2
    assert report.ok is fits
    if not fits:
        needed = 5 + extra_nodes
        with pytest.raises(PreconditionFailed) as refused:
            report.require()
        text = str(refused.value)
        assert f"needs {needed} routes ({3 + extra_nodes} node pod CIDRs + 2 others) of 50" in text
        assert f"--quota-code L-93826ACB --desired-value {needed}" in text


@pytest.mark.moto
def test_existing_node_routes_count_once_and_both_vpcs_count(
    aws: AwsClients, cluster: Cluster
) -> None:
    _route_all(aws.ec2, cluster)
    new = make_network(aws.ec2, "10.1.0.0/16")
    new_instances = run_instances(aws.ec2, new, 3, {"KubernetesCluster": "prod"})
    provider_ids = {n.node: None for n in cluster.nodes}  # old nodes: named by private DNS
    pod_cidrs: dict[str, str | None] = {n.node: n.pod_cidr for n in cluster.nodes}
    for i, instance in enumerate(new_instances[:2]):  # the third has not joined yet
        az, iid = instance["Placement"]["AvailabilityZone"], instance["InstanceId"]
        provider_ids[f"new-{i}"] = f"aws:///{az}/{iid}"
        pod_cidrs[f"new-{i}"] = f"100.97.{i}.0/24"
    nodes = cluster_node_routes(
        aws.ec2,
        cluster="prod",
        vpc_ids=[cluster.network.vpc_id, new.vpc_id],
        provider_ids=provider_ids,
        pod_cidrs=pod_cidrs,
    )
    assert sorted(n.node for n in nodes) == sorted(pod_cidrs)
    report = require_route_capacity(
        aws.ec2, aws.service_quotas, route_table_ids=cluster.tables, nodes=nodes
    )
    assert [(t.node_routes, t.other_routes, t.needed) for t in report.tables] == [(5, 2, 7)] * 2
    assert report.message().startswith("2 route table(s) fit (Service Quotas vpc/L-93826ACB)")


@pytest.mark.parametrize(
    ("stub", "expected"),
    [
        (
            ("error", "AccessDeniedException"),
            RouteLimit(
                AWS_DEFAULT_ROUTES_PER_TABLE,
                "AWS default (quota not readable: AccessDeniedException)",
            ),
        ),
        (
            ("error", "NoSuchResourceException"),
            RouteLimit(50, "AWS default (quota not readable: NoSuchResourceException)"),
        ),
        (("value", 200.0), RouteLimit(200, "Service Quotas vpc/L-93826ACB")),
    ],
    ids=["no-permission", "no-such-quota", "raised-quota"],
)
def test_limit_falls_back_to_the_aws_default(stub: tuple[str, Any], expected: RouteLimit) -> None:
    """moto always serves the default 50: Stubber plays a raised or unreadable quota."""
    import boto3

    quotas = boto3.client(
        "service-quotas", region_name="eu-west-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    with Stubber(quotas) as stubber:
        kind, value = stub
        if kind == "error":
            stubber.add_client_error("get_service_quota", service_error_code=value)
        else:
            stubber.add_response(
                "get_service_quota",
                {"Quota": {"QuotaCode": "L-93826ACB", "ServiceCode": "vpc", "Value": value}},
                {"ServiceCode": "vpc", "QuotaCode": "L-93826ACB"},
            )
        assert route_table_limit(quotas) == expected


@pytest.mark.moto
@pytest.mark.parametrize("via_eni", [False, True], ids=["instance-routes", "eni-routes"])
def test_verification_passes_when_every_table_routes_every_node(
    aws: AwsClients, cluster: Cluster, via_eni: bool
) -> None:
    _route_all(aws.ec2, cluster, via_eni=via_eni)
    result = verify_node_routes(aws.ec2, route_table_ids=cluster.tables, nodes=cluster.nodes)
    assert result.ok, result.message()
    assert result.message() == "All 3 node pod CIDRs have active routes in 2 route table(s)."
    assert routes_pending(aws.ec2, route_table_ids=cluster.tables, nodes=cluster.nodes).done


@pytest.mark.moto
def test_verification_reports_missing_and_misrouted_per_table(
    aws: AwsClients, cluster: Cluster
) -> None:
    ec2 = aws.ec2
    first, second, third = cluster.nodes
    table_a, table_b = cluster.tables
    for node in cluster.nodes:  # table A complete
        ec2.create_route(
            RouteTableId=table_a, DestinationCidrBlock=node.pod_cidr, InstanceId=node.instance_id
        )
    ec2.create_route(
        RouteTableId=table_b, DestinationCidrBlock=first.pod_cidr, InstanceId=first.instance_id
    )
    ec2.create_route(  # second's CIDR sent to the third node: stale after a reschedule
        RouteTableId=table_b, DestinationCidrBlock=second.pod_cidr, InstanceId=third.instance_id
    )
    result = verify_node_routes(ec2, route_table_ids=cluster.tables, nodes=cluster.nodes)
    assert result.by_table()[table_a] == []
    assert [p.describe() for p in result.by_table()[table_b]] == [
        f"{table_b}: {second.node} {second.pod_cidr} misrouted to {third.instance_id}",
        f"{table_b}: {third.node} {third.pod_cidr} missing",
    ]
    assert result.message() == (
        f"Node routes incomplete: {table_b}: 1 misrouted, 1 missing ({second.node}, {third.node})."
    )


@pytest.mark.moto
def test_blackhole_routes_are_reported(
    aws: AwsClients, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """moto reports every route active: its in-process Route.state is patched to blackhole."""
    _route_all(aws.ec2, cluster)
    victim = cluster.nodes[1]
    blackhole_routes(monkeypatch, {victim.pod_cidr})
    pending = routes_pending(aws.ec2, route_table_ids=cluster.tables, nodes=cluster.nodes)
    assert pending.items == tuple(
        sorted(f"{t}: {victim.node} {victim.pod_cidr} blackhole" for t in cluster.tables)
    )


def test_nodes_without_pod_cidr_are_a_user_error() -> None:
    with pytest.raises(UserError, match=r"^Nodes a have no spec.podCIDR"):
        node_routes({"a": object()}, {"a": None})  # type: ignore[dict-item]


@pytest.mark.moto
def test_no_tables_is_a_user_error(aws: AwsClients) -> None:
    with pytest.raises(UserError, match="No route tables"):
        verify_node_routes(aws.ec2, route_table_ids=[], nodes=[])
