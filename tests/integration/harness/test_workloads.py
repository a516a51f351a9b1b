"""The harness runs real scheduling, readiness, taints, PDBs, eviction and EndpointSlices."""

from __future__ import annotations

import pytest
from kubernetes.client import (
    ApiClient,
    AppsV1Api,
    CoreV1Api,
    DiscoveryV1Api,
    PolicyV1Api,
    V1DeleteOptions,
    V1Eviction,
    V1ObjectMeta,
    V1Pod,
    V1Taint,
)
from kubernetes.client.exceptions import ApiException

from automation.sandbox.kwok import POD_CIDR
from tests.support.kubeapi import STRATEGIC_MERGE
from tests.support.nodes import NodePools, NodePoolSpec
from tests.support.waiting import eventually
from tests.support.workloads import deployment, pdb, service

pytestmark = pytest.mark.controlplane


def _is_ready(pod: V1Pod) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions or [])


def _pods(client: ApiClient, namespace: str, app: str) -> list[V1Pod]:
    pods = CoreV1Api(client).list_namespaced_pod(namespace, label_selector=f"app={app}").items
    return [p for p in pods if p.metadata.deletion_timestamp is None]


def _ready_pods(client: ApiClient, namespace: str, app: str, count: int) -> list[V1Pod]:
    return eventually(
        f"{count} ready pods of {namespace}/{app}",
        lambda: [p for p in _pods(client, namespace, app) if _is_ready(p)],
        until=lambda pods: len(pods) == count,
    )


def _evict(client: ApiClient, pod: V1Pod) -> None:
    body = V1Eviction(
        metadata=V1ObjectMeta(name=pod.metadata.name, namespace=pod.metadata.namespace),
        delete_options=V1DeleteOptions(grace_period_seconds=0),
    )
    CoreV1Api(client).create_namespaced_pod_eviction(
        pod.metadata.name, pod.metadata.namespace, body
    )


def test_deployment_pods_become_ready_on_kwok_nodes(
    primary_client: ApiClient, namespace: str, node_pools: NodePools
) -> None:
    pool = node_pools.create(NodePoolSpec("ready", count=2))
    AppsV1Api(primary_client).create_namespaced_deployment(
        namespace, deployment("web", 3, node_selector={"kubeshift.io/pool": pool.name})
    )

    pods = _ready_pods(primary_client, namespace, "web", 3)

    assert {p.spec.node_name for p in pods} <= set(pool.node_names)
    assert all(p.status.phase == "Running" and p.status.pod_ip for p in pods)
    prefix = POD_CIDR.split(".")[0] + "."
    assert all(p.status.pod_ip.startswith(prefix) for p in pods), [p.status.pod_ip for p in pods]
    dep = eventually(
        "deployment web available",
        lambda: AppsV1Api(primary_client).read_namespaced_deployment("web", namespace),
        until=lambda d: d.status.available_replicas == 3,
    )
    assert dep.status.ready_replicas == 3


def test_noschedule_taint_keeps_new_pods_off_the_node(
    primary_client: ApiClient, namespace: str, node_pools: NodePools
) -> None:
    pool = node_pools.create(NodePoolSpec("taint", count=2))
    tainted, free = pool.node_names
    CoreV1Api(primary_client).patch_node(
        tainted,
        {
            "spec": {
                "taints": [V1Taint(key="kubeshift.io/draining", value="true", effect="NoSchedule")]
            }
        },
    )
    eventually(
        "taint visible",
        lambda: CoreV1Api(primary_client).read_node(tainted).spec.taints or [],
        until=lambda taints: any(t.key == "kubeshift.io/draining" for t in taints),
    )

    AppsV1Api(primary_client).create_namespaced_deployment(
        namespace, deployment("api", 4, node_selector={"kubeshift.io/pool": pool.name})
    )

    pods = _ready_pods(primary_client, namespace, "api", 4)
    assert {p.spec.node_name for p in pods} == {free}


def test_eviction_blocked_by_pdb_answers_429(
    primary_client: ApiClient, namespace: str, node_pools: NodePools
) -> None:
    pool = node_pools.create(NodePoolSpec("pdb", count=2))
    AppsV1Api(primary_client).create_namespaced_deployment(
        namespace, deployment("db", 2, node_selector={"kubeshift.io/pool": pool.name})
    )
    pods = _ready_pods(primary_client, namespace, "db", 2)
    PolicyV1Api(primary_client).create_namespaced_pod_disruption_budget(
        namespace, pdb("db", "db", min_available=2)
    )
    budget = eventually(
        "PDB db observed with 2 healthy pods",
        lambda: PolicyV1Api(primary_client).read_namespaced_pod_disruption_budget("db", namespace),
        until=lambda b: (
            b.status is not None
            and b.status.observed_generation == b.metadata.generation
            and b.status.current_healthy == 2
        ),
    )
    assert budget.status.disruptions_allowed == 0

    with pytest.raises(ApiException) as excinfo:
        _evict(primary_client, pods[0])

    assert excinfo.value.status == 429
    assert "disruption budget" in str(excinfo.value.body)
    still = CoreV1Api(primary_client).read_namespaced_pod(pods[0].metadata.name, namespace)
    assert still.metadata.deletion_timestamp is None


def test_evicted_pod_is_recreated_on_another_node(
    primary_client: ApiClient, namespace: str, node_pools: NodePools
) -> None:
    pool = node_pools.create(NodePoolSpec("evict", count=2))
    AppsV1Api(primary_client).create_namespaced_deployment(
        namespace, deployment("worker", 1, node_selector={"kubeshift.io/pool": pool.name})
    )
    (old,) = _ready_pods(primary_client, namespace, "worker", 1)
    CoreV1Api(primary_client).patch_node(
        old.spec.node_name, {"spec": {"unschedulable": True}}, _content_type=STRATEGIC_MERGE
    )

    _evict(primary_client, old)

    (new,) = eventually(
        "a replacement pod, ready",
        lambda: [
            p
            for p in _pods(primary_client, namespace, "worker")
            if p.metadata.uid != old.metadata.uid and _is_ready(p)
        ],
        until=lambda pods: len(pods) == 1,
    )
    (other,) = set(pool.node_names) - {old.spec.node_name}
    assert new.spec.node_name == other
    eventually(
        "the evicted pod gone",
        lambda: [
            p.metadata.uid for p in CoreV1Api(primary_client).list_namespaced_pod(namespace).items
        ],
        until=lambda uids: old.metadata.uid not in uids,
    )


def test_endpointslice_lists_exactly_the_ready_pods(
    primary_client: ApiClient, namespace: str, node_pools: NodePools
) -> None:
    pool = node_pools.create(NodePoolSpec("eps", count=2))
    core = CoreV1Api(primary_client)
    AppsV1Api(primary_client).create_namespaced_deployment(
        namespace, deployment("shop", 3, node_selector={"kubeshift.io/pool": pool.name})
    )
    core.create_namespaced_service(namespace, service("shop", "shop"))
    pods = _ready_pods(primary_client, namespace, "shop", 3)
    # A failing readiness probe, as the kubelet would report it.
    failing = pods[0]
    core.patch_namespaced_pod_status(
        failing.metadata.name,
        namespace,
        {"status": {"conditions": [{"type": "Ready", "status": "False", "reason": "ProbeFailed"}]}},
        _content_type=STRATEGIC_MERGE,
    )

    def ready_endpoint_ips() -> tuple[set[str], set[str]]:
        slices = DiscoveryV1Api(primary_client).list_namespaced_endpoint_slice(
            namespace, label_selector="kubernetes.io/service-name=shop"
        )
        ready, all_ips = set(), set()
        for s in slices.items:
            for ep in s.endpoints or []:
                all_ips.update(ep.addresses)
                if ep.conditions and ep.conditions.ready:
                    ready.update(ep.addresses)
        return ready, all_ips

    expected_ready = {p.status.pod_ip for p in pods[1:]}
    ready, all_ips = eventually(
        "EndpointSlice ready set == the two ready pods",
        ready_endpoint_ips,
        until=lambda r: r[0] == expected_ready,
    )
    assert ready == expected_ready
    assert all_ips == {p.status.pod_ip for p in pods}  # the unready one is listed, not ready
    actual_ready = {
        p.status.pod_ip for p in _pods(primary_client, namespace, "shop") if _is_ready(p)
    }
    assert ready == actual_ready
