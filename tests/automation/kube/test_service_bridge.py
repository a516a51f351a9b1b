"""The ingress Service's bridge against a real API server: what it had, it gets back."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes.client import CoreV1Api, V1ObjectMeta, V1Service, V1ServicePort, V1ServiceSpec

from automation.core.errors import StepFailedError
from automation.kube.service_bridge import SAVED, close_bridge, open_bridge
from tests.automation.kube.conftest import Fleet

pytestmark = pytest.mark.controlplane


def _service(fleet: Fleet, name: str, kind: str = "LoadBalancer", **spec: Any) -> Any:
    core = CoreV1Api(fleet.kube.api_client)
    body = V1Service(
        metadata=V1ObjectMeta(name=name),
        spec=V1ServiceSpec(
            type=kind,
            selector={"app": name},
            ports=[
                V1ServicePort(name="http", port=80, target_port=8080),
                V1ServicePort(name="https", port=443, target_port=8443),
            ],
            **spec,
        ),
    )
    return core.create_namespaced_service(fleet.namespace, body)


def _live(fleet: Fleet, name: str) -> Any:
    return CoreV1Api(fleet.kube.api_client).read_namespaced_service(name, fleet.namespace)


def _ports(svc: Any) -> dict[str, int]:
    return {f"{p.port}/TCP": p.node_port for p in svc.spec.ports}


def test_a_local_load_balancer_service_bridges_on_cluster_policy_and_gets_everything_back(
    fleet: Fleet,
) -> None:
    created = _service(
        fleet,
        "edge",
        external_traffic_policy="Local",
        load_balancer_source_ranges=["10.0.0.0/8"],
    )
    health_port = created.spec.health_check_node_port
    assert health_port  # the API server gave the Local LoadBalancer Service one
    core, ns = fleet.kube.core, fleet.namespace

    dry = open_bridge(core, ns, "edge", dry_run=True)
    assert dry.changed and dry.message.startswith("would change Service")
    assert "externalTrafficPolicy Local → Cluster" in dry.message
    assert _live(fleet, "edge").spec.type == "LoadBalancer"

    opened = open_bridge(core, ns, "edge")
    live = _live(fleet, "edge")
    assert opened.changed and live.spec.type == "NodePort"
    assert live.spec.external_traffic_policy == "Cluster"
    assert live.spec.health_check_node_port is None
    assert live.spec.load_balancer_source_ranges is None
    assert SAVED in live.metadata.annotations
    assert _ports(live) == _ports(created) == opened.node_ports
    assert not open_bridge(core, ns, "edge").changed  # twice: what was saved stays

    closed = close_bridge(core, ns, "edge")
    live = _live(fleet, "edge")
    assert closed.changed and live.spec.type == "LoadBalancer"
    assert live.spec.external_traffic_policy == "Local"
    assert live.spec.health_check_node_port == health_port
    assert live.spec.load_balancer_source_ranges == ["10.0.0.0/8"]
    assert SAVED not in (live.metadata.annotations or {})
    assert _ports(live) == _ports(created)
    assert not close_bridge(core, ns, "edge").changed


def test_a_controller_owned_load_balancer_keeps_its_type_and_class(fleet: Fleet) -> None:
    """A type change would make its controller delete the load balancer: only the
    traffic policy moves, and comes back with the same health-check node port."""
    created = _service(
        fleet, "owned", external_traffic_policy="Local", load_balancer_class="example.com/nlb"
    )
    core, ns = fleet.kube.core, fleet.namespace
    open_bridge(core, ns, "owned")
    live = _live(fleet, "owned")
    assert live.spec.type == "LoadBalancer" and live.spec.load_balancer_class == "example.com/nlb"
    assert live.spec.external_traffic_policy == "Cluster"
    close_bridge(core, ns, "owned")
    live = _live(fleet, "owned")
    assert live.spec.external_traffic_policy == "Local"
    assert live.spec.health_check_node_port == created.spec.health_check_node_port
    assert _ports(live) == _ports(created)


def test_a_load_balancer_with_an_address_in_its_status_is_owned_too(fleet: Fleet) -> None:
    _service(fleet, "provisioned")
    status = {"status": {"loadBalancer": {"ingress": [{"hostname": "a1.elb.amazonaws.com"}]}}}
    CoreV1Api(fleet.kube.api_client).patch_namespaced_service_status(
        "provisioned", fleet.namespace, status
    )
    opened = open_bridge(fleet.kube.core, fleet.namespace, "provisioned")
    live = _live(fleet, "provisioned")
    assert live.spec.type == "LoadBalancer" and SAVED in live.metadata.annotations
    assert not opened.changed  # its policy was Cluster already: only what it had is saved


def test_a_node_port_service_bridged_without_saved_fields_goes_back_to_load_balancer(
    fleet: Fleet,
) -> None:
    """A bridge an earlier kubeshift opened saved nothing: back to LoadBalancer, as then."""
    created = _service(fleet, "legacy", kind="NodePort")
    closed = close_bridge(fleet.kube.core, fleet.namespace, "legacy")
    live = _live(fleet, "legacy")
    assert closed.changed and live.spec.type == "LoadBalancer"
    assert _ports(live) == _ports(created)


def test_a_damaged_saved_annotation_is_one_sentence_and_changes_nothing(fleet: Fleet) -> None:
    _service(fleet, "damaged", kind="NodePort")
    CoreV1Api(fleet.kube.api_client).patch_namespaced_service(
        "damaged", fleet.namespace, {"metadata": {"annotations": {SAVED: "{not json"}}}
    )
    with pytest.raises(StepFailedError, match=f"annotation {SAVED} is not what kubeshift saved"):
        close_bridge(fleet.kube.core, fleet.namespace, "damaged")
    assert _live(fleet, "damaged").spec.type == "NodePort"


def test_a_cluster_ip_service_cannot_bridge(fleet: Fleet) -> None:
    core = CoreV1Api(fleet.kube.api_client)
    core.create_namespaced_service(
        fleet.namespace,
        V1Service(
            metadata=V1ObjectMeta(name="internal"),
            spec=V1ServiceSpec(ports=[V1ServicePort(port=80)]),
        ),
    )
    with pytest.raises(StepFailedError, match="is ClusterIP; only LoadBalancer and NodePort"):
        open_bridge(fleet.kube.core, fleet.namespace, "internal")
