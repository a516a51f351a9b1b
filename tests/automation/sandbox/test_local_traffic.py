"""A Local Service's node targets fail their load balancer's health check where it has
no Ready pod: read from a real API server, answered by the sandbox's moto."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes.client import CoreV1Api

from automation.sandbox.local_traffic import UNSERVED, unserved_targets
from automation.sandbox.moto_gaps.elb import local_traffic_health_checks
from tests.automation.kube.conftest import Fleet, fleet  # noqa: F401 (the fixture)
from tests.support.moto_fixtures import MotoServer
from tests.support.moto_world import make_network, run_instances
from tests.support.waiting import eventually


@pytest.fixture
def unserved() -> Iterator[None]:
    UNSERVED.clear()
    yield
    UNSERVED.clear()


def _health(elbv2: Any, arn: str) -> dict[str, tuple[str, str]]:
    found = elbv2.describe_target_health(TargetGroupArn=arn)["TargetHealthDescriptions"]
    return {
        d["Target"]["Id"]: (d["TargetHealth"]["State"], d["TargetHealth"].get("Description", ""))
        for d in found
    }


def _group(moto: MotoServer, name: str, **health: Any) -> tuple[Any, str, list[str]]:
    ec2, elbv2 = moto.client("ec2"), moto.client("elbv2")
    net = make_network(ec2)
    ids = [i["InstanceId"] for i in run_instances(ec2, net, 2)]
    arn = elbv2.create_target_group(
        Name=name, Protocol="TCP", Port=30080, VpcId=net.vpc_id, **health
    )["TargetGroups"][0]["TargetGroupArn"]
    elbv2.register_targets(TargetGroupArn=arn, Targets=[{"Id": i} for i in ids])
    return elbv2, arn, ids


@pytest.mark.moto
def test_a_target_without_a_local_pod_is_unhealthy_on_its_port_or_health_check_port(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch, unserved: None
) -> None:
    from moto.elbv2.models import FakeTargetGroup

    monkeypatch.setattr(FakeTargetGroup, "health_for", FakeTargetGroup.health_for)
    local_traffic_health_checks()
    local_traffic_health_checks()  # idempotent: one wrapper
    elbv2, arn, (served, empty) = _group(moto, "ingress-30080")
    UNSERVED.set("primary", {(empty, 30080): "no Ready pod of ingress/edge on n2 (Local)"})
    health = _health(elbv2, arn)
    assert health[served] == ("healthy", "")
    assert health[empty] == (
        "unhealthy", "Health checks failed: no Ready pod of ingress/edge on n2 (Local)"
    )  # fmt: skip

    elbv2, arn, (_, second) = _group(moto, "ingress-checked", HealthCheckPort="31999")
    UNSERVED.set("primary", {(second, 31999): "no Ready pod (Local)"})
    assert [s for s, _ in _health(elbv2, arn).values()] == ["healthy", "unhealthy"]


@pytest.mark.moto
def test_unpatched_moto_marks_a_target_healthy_whatever_its_node_serves(
    moto: MotoServer, unserved: None
) -> None:
    elbv2, arn, (_, empty) = _group(moto, "ingress-30080")
    UNSERVED.set("primary", {(empty, 30080): "no Ready pod (Local)"})
    assert _health(elbv2, arn)[empty][0] == "healthy"


@pytest.mark.controlplane
def test_a_local_services_ports_are_unserved_on_nodes_without_its_ready_pods(
    fleet: Fleet,  # noqa: F811
) -> None:
    pool = fleet.pool("local", 3)
    fleet.deploy("edge", 1, with_service=True)
    [pod] = fleet.wait_ready("edge", 1)
    core = CoreV1Api(fleet.kube.api_client)
    core.patch_namespaced_service(
        "edge", fleet.namespace, {"spec": {"type": "NodePort", "externalTrafficPolicy": "Local"}}
    )
    svc = core.read_namespaced_service("edge", fleet.namespace)
    [node_port] = [p.node_port for p in svc.spec.ports]
    instance = {
        name: core.read_node(name).spec.provider_id.rsplit("/", 1)[-1] for name in pool.node_names
    }
    others = sorted(i for n, i in instance.items() if n != pod.spec.node_name)

    def ours() -> dict[tuple[str, int], str]:
        found = unserved_targets(core, fleet.kube.discovery)
        return {target: why for target, why in found.items() if target[0] in instance.values()}

    # the EndpointSlice controller marks the pod's endpoint ready a moment after the pod
    unserved = eventually(
        "the pod's node served", ours, until=lambda u: sorted(u) == [(i, node_port) for i in others]
    )
    assert all(f"{fleet.namespace}/edge" in why for why in unserved.values())

    core.patch_namespaced_service(
        "edge", fleet.namespace, {"spec": {"externalTrafficPolicy": "Cluster"}}
    )
    cluster = unserved_targets(core, fleet.kube.discovery)
    assert not [t for t in cluster if t[0] in instance.values()]


@pytest.mark.controlplane
def test_the_open_bridge_leaves_no_node_unserved_where_a_plain_type_switch_would(
    fleet: Fleet,  # noqa: F811
) -> None:
    """The rehearsal's strictness, in small: the ingress pods still on one old node, the
    new nodes' targets fail a Local Service's check after the old plain switch to
    NodePort (which kept Local), and pass once the bridge is open (Cluster)."""
    from automation.kube.service_bridge import open_bridge

    pool = fleet.pool("bridge", 3)
    fleet.deploy("ingress", 1, with_service=True)
    fleet.wait_ready("ingress", 1)
    core = CoreV1Api(fleet.kube.api_client)
    local = {"spec": {"type": "LoadBalancer", "externalTrafficPolicy": "Local"}}
    core.patch_namespaced_service("ingress", fleet.namespace, local)
    ours = {core.read_node(n).spec.provider_id.rsplit("/", 1)[-1] for n in pool.node_names}

    def unserved_nodes() -> set[str]:
        found = unserved_targets(core, fleet.kube.discovery)
        return {instance for instance, _ in found if instance in ours}

    core.patch_namespaced_service("ingress", fleet.namespace, {"spec": {"type": "NodePort"}})
    # the old switch: Local kept, the two nodes without the pod unserved (once the
    # EndpointSlice shows the pod ready)
    eventually("two nodes unserved", unserved_nodes, until=lambda nodes: len(nodes) == 2)
    open_bridge(fleet.kube.core, fleet.namespace, "ingress")
    assert unserved_nodes() == set()
