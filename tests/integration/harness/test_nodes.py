"""Node pools look like AWS nodes; unmanaged nodes' conditions are ours to post."""

from __future__ import annotations

import pytest
from kubernetes.client import ApiClient, CoreV1Api

from tests.support.nodes import (
    ASG_LABEL,
    INSTANCE_TYPE_LABEL,
    NO_ROUTE,
    ROUTE_CREATED,
    VPC_LABEL,
    ZONE_LABEL,
    Condition,
    NodePools,
    NodePoolSpec,
)
from tests.support.waiting import eventually

pytestmark = pytest.mark.controlplane


def _ready(client: ApiClient, node: str) -> str | None:
    conds = CoreV1Api(client).read_node_status(node).status.conditions or []
    return next((c.status for c in conds if c.type == "Ready"), None)


def test_pool_nodes_carry_aws_identity_and_turn_ready(
    primary_client: ApiClient, node_pools: NodePools
) -> None:
    pool = node_pools.create(
        NodePoolSpec("old-workers", count=2, zone="eu-west-1b", vpc_id="vpc-0123456789abcdef0",
                     instance_type="c6i.xlarge")
    )  # fmt: skip
    core = CoreV1Api(primary_client)

    nodes = core.list_node(label_selector=pool.selector).items

    assert sorted(n.metadata.name for n in nodes) == sorted(pool.node_names)
    for node in nodes:
        labels = node.metadata.labels
        assert labels[ZONE_LABEL] == "eu-west-1b"
        assert labels[VPC_LABEL] == "vpc-0123456789abcdef0"
        assert labels[ASG_LABEL] == pool.asg
        assert labels[INSTANCE_TYPE_LABEL] == "c6i.xlarge"
        assert node.spec.provider_id.startswith("aws:///eu-west-1b/i-")
        name = node.metadata.name
        eventually(
            f"{name} Ready", lambda n=name: _ready(primary_client, n), until=lambda s: s == "True"
        )
    managed = node_pools.condition(pool.node_names[0], "NetworkUnavailable")
    assert managed == Condition("NetworkUnavailable", "False", "RouteCreated", managed.message)


def test_unmanaged_node_condition_patched_through_status_reads_back(
    primary_client: ApiClient, node_pools: NodePools
) -> None:
    pool = node_pools.create(NodePoolSpec("overlay", count=1, managed=False, network=NO_ROUTE))
    (node,) = pool.node_names

    assert node_pools.condition(node, "NetworkUnavailable") == NO_ROUTE
    assert _ready(primary_client, node) == "True"

    node_pools.set_condition(node, ROUTE_CREATED)

    assert node_pools.condition(node, "NetworkUnavailable") == ROUTE_CREATED
    status = CoreV1Api(primary_client).read_node_status(node).status
    reasons = {c.type: c.reason for c in status.conditions}
    assert reasons["NetworkUnavailable"] == "RouteCreated"
    assert reasons["Ready"] == "KubeletReady"  # the patch merged, it did not replace
