"""Gates against a real control plane: each reports exactly what is missing."""

from __future__ import annotations

import pytest
from kubernetes.client import AppsV1Api

from automation.kube.gates import nodes_ready, routes_created, workloads_available
from tests.automation.kube.conftest import Fleet
from tests.support.nodes import NO_ROUTE, ROUTE_CREATED, Condition
from tests.support.waiting import eventually

pytestmark = pytest.mark.controlplane

CALICO_UP = Condition("NetworkUnavailable", "False", "CalicoIsUp", "Calico is running")


def test_nodes_ready_counts_and_names_nodes(fleet: Fleet) -> None:
    pool = fleet.pool("ready", 2)
    status = eventually(
        "pool Ready",
        lambda: nodes_ready(fleet.kube, pool.selector, expected=2),
        until=lambda p: p.done,
    )
    assert status.detail == "2/2 nodes present"
    short = nodes_ready(fleet.kube, pool.selector, expected=3)
    assert short.items == (f"1 more node(s) matching '{pool.selector}'",)
    sick = fleet.pool("sick", 1, managed=False, ready=False)
    pending = nodes_ready(fleet.kube, sick.selector, expected=1)
    assert pending.items == (f"node {sick.node_names[0]}: Ready=False (KubeletNotReady)",)


def test_routes_created_needs_exactly_route_created(fleet: Fleet) -> None:
    pool = fleet.pool("routes", 3, managed=False, network=ROUTE_CREATED)
    _, b, c = pool.node_names
    fleet.pools.set_condition(b, CALICO_UP)
    fleet.pools.set_condition(c, NO_ROUTE)
    status = routes_created(fleet.kube, pool.selector)
    assert status.items == tuple(
        sorted(
            [
                f"node {b}: NetworkUnavailable=False (CalicoIsUp)",
                f"node {c}: NetworkUnavailable=True (NoRouteCreated)",
            ]
        )
    )
    assert status.detail == "1/3 nodes have RouteCreated"
    fleet.pools.set_condition(b, ROUTE_CREATED)
    fleet.pools.set_condition(c, ROUTE_CREATED)
    assert routes_created(fleet.kube, pool.selector).done
    bare = fleet.pool("bare", 1, managed=False, network=None)
    assert routes_created(fleet.kube, bare.selector).items == (
        f"node {bare.node_names[0]}: no NetworkUnavailable condition",
    )


def test_workloads_available_reports_unready_deployment_and_budget(fleet: Fleet) -> None:
    fleet.pool("wl", 1)
    fleet.deploy("ok", 2, min_available=1)
    fleet.deploy("never", 2, min_available=2)
    fleet.wait_ready("ok", 2)
    # "never" cannot schedule: its node selector matches no node
    AppsV1Api(fleet.kube.api_client).patch_namespaced_deployment(
        "never",
        fleet.namespace,
        {"spec": {"template": {"spec": {"nodeSelector": {"nowhere": "true"}}}}},
        _content_type="application/merge-patch+json",
    )
    status = eventually(
        "gate to settle on 'never'",
        lambda: workloads_available(fleet.kube, [fleet.namespace]),
        until=lambda p: (
            any("deployment" in i and "/never" in i for i in p.items)
            and not any("/ok" in i for i in p.items)
        ),
    )
    assert not status.done
