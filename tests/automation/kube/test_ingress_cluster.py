"""The ingress move against a real control plane: pods land on new nodes, ports stay put."""

from __future__ import annotations

import pytest
from kubernetes.client import CoreV1Api, V1ObjectMeta, V1Service, V1ServicePort, V1ServiceSpec

from automation.errors import StepFailedError
from automation.kube.ingress import PodMove, move_pods, set_service_type
from automation.kube.nodes import NodeSelection, Taint, taint_nodes
from automation.kube.probe import AvailabilityProbe
from tests.automation.kube.conftest import Fleet

pytestmark = pytest.mark.controlplane


def test_ingress_move_lands_pods_on_new_nodes(fleet: Fleet) -> None:
    old = fleet.pool("old", 2)
    fleet.deploy("ingress", 3, ready_delay="500ms", max_unavailable=1, with_service=True)
    fleet.wait_ready("ingress", 3)
    fleet.wait_budget("ingress")
    new = fleet.pool("new", 2)
    taint_nodes(fleet.kube.core, NodeSelection(names=list(old.node_names)), Taint(key="migration"))
    move = PodMove(
        namespace=fleet.namespace,
        pod_selector="app=ingress",
        target=NodeSelection(label_selector=new.selector),
        timeout=90,
    )

    dry = move_pods(fleet.kube, move, dry_run=True)
    assert len(dry.moved) == 3 and dry.message.startswith("dry-run: would evict 3 pod(s)")
    assert fleet.nodes_of(fleet.pods("ingress")) <= set(old.node_names)

    with AvailabilityProbe(fleet.kube.discovery, [f"{fleet.namespace}/ingress"]) as probe:
        result = move_pods(fleet.kube, move)
        report = probe.report()

    assert result.changed and len(result.moved) == 3
    assert result.ready_on_target == 3
    assert fleet.nodes_of(fleet.wait_ready("ingress", 3)) <= set(new.node_names)
    assert report.zero_downtime, report.as_dict()
    again = move_pods(fleet.kube, move)
    assert not again.changed and len(again.already_in_place) == 3


def test_service_type_switch_keeps_node_ports(fleet: Fleet) -> None:
    core = CoreV1Api(fleet.kube.api_client)
    svc = V1Service(
        metadata=V1ObjectMeta(name="edge"),
        spec=V1ServiceSpec(
            type="LoadBalancer",
            selector={"app": "edge"},
            ports=[
                V1ServicePort(name="http", port=80, target_port=8080),
                V1ServicePort(name="https", port=443, target_port=8443),
            ],
            external_traffic_policy="Local",
        ),
    )
    created = core.create_namespaced_service(fleet.namespace, svc)
    ports = {f"{p.port}/TCP": p.node_port for p in created.spec.ports}

    dry = set_service_type(fleet.kube.core, fleet.namespace, "edge", "NodePort", dry_run=True)
    assert dry.changed and dry.message.startswith("would switch Service")
    assert core.read_namespaced_service("edge", fleet.namespace).spec.type == "LoadBalancer"

    to_np = set_service_type(fleet.kube.core, fleet.namespace, "edge", "NodePort")
    live = core.read_namespaced_service("edge", fleet.namespace)
    assert to_np.changed and live.spec.type == "NodePort"
    assert {f"{p.port}/TCP": p.node_port for p in live.spec.ports} == ports == to_np.node_ports
    assert live.spec.health_check_node_port is None

    assert not set_service_type(fleet.kube.core, fleet.namespace, "edge", "NodePort").changed
    back = set_service_type(fleet.kube.core, fleet.namespace, "edge", "LoadBalancer")
    live = core.read_namespaced_service("edge", fleet.namespace)
    assert back.changed and live.spec.type == "LoadBalancer"
    assert {f"{p.port}/TCP": p.node_port for p in live.spec.ports} == ports


def test_cluster_ip_service_cannot_be_switched(fleet: Fleet) -> None:
    core = CoreV1Api(fleet.kube.api_client)
    core.create_namespaced_service(
        fleet.namespace,
        V1Service(
            metadata=V1ObjectMeta(name="internal"),
            spec=V1ServiceSpec(ports=[V1ServicePort(port=80)]),
        ),
    )
    with pytest.raises(StepFailedError, match="is ClusterIP; only LoadBalancer and NodePort"):
        set_service_type(fleet.kube.core, fleet.namespace, "internal", "NodePort")
