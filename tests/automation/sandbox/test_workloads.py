"""Seeded workloads: what a rehearsal drains and moves, on a real control plane.

Each test seeds under its own namespace prefix and free node ports (the primary
cluster is shared by the session) onto its own kwok node pools, and deletes the
namespaces afterwards.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from kubernetes.client import (
    ApiClient,
    AppsV1Api,
    CoreV1Api,
    DiscoveryV1Api,
    PolicyV1Api,
    V1Taint,
)
from kubernetes.client.exceptions import ApiException

from automation.config.mirror_settings import DaemonSetRef
from automation.config.settings import IngressSettings
from automation.core.errors import GateTimeoutError
from automation.sandbox.controlplane import Cluster
from automation.sandbox.workloads import (
    DEFAULT_APPS,
    App,
    IngressWorkload,
    WorkloadSpec,
    manifests,
    seed,
    spec_for,
    wait_available,
)
from automation.steps.service_dns import KUBESHIFT_DNS_NAMES
from components.contract.loading import load_config, load_stack_file
from tests.support.nodes import NodePools, NodePoolSpec, unique_name
from tests.support.waiting import eventually

REPO = Path(__file__).resolve().parents[3]
CONTROL_PLANE = "node-role.kubernetes.io/control-plane"


def test_spec_for_takes_the_ingress_node_ports_from_the_stack() -> None:
    config = load_config(load_stack_file(REPO / "stacks" / "Pulumi.local.yaml"))

    spec = spec_for(config)
    custom = spec_for(config, IngressSettings(namespace="edge", service="nginx"))

    assert spec.ingress is not None and custom.ingress is not None
    assert spec.ingress.ports == tuple(
        (lis.port, lis.node_port) for lis in config.cluster.ingress.listeners
    )
    assert (spec.ingress.namespace, spec.ingress.service) == ("ingress", "ingress-controller")
    assert dict(spec.ingress.pod_labels) == {"app": "ingress-controller"}
    assert (custom.ingress.namespace, custom.ingress.service) == ("edge", "nginx")
    [service] = [
        m
        for m in manifests(spec)
        if m["kind"] == "Service" and m["metadata"]["name"] == "ingress-controller"
    ]
    assert service["spec"]["type"] == "LoadBalancer"
    assert {(p["port"], p["nodePort"]) for p in service["spec"]["ports"]} == set(spec.ingress.ports)


def test_a_cni_swap_cluster_runs_its_old_cni_and_serves_each_app_under_a_dns_name() -> None:
    config = load_config(load_stack_file(REPO / "stacks" / "Pulumi.cni-swap-example.yaml"))
    weave = DaemonSetRef(name="weave-net", pod_selector="name=weave-net")

    objects = manifests(spec_for(config, cni=weave, dns_zone="shop.example.com"))

    [daemonset] = [m for m in objects if m["kind"] == "DaemonSet"]
    assert (daemonset["metadata"]["namespace"], daemonset["metadata"]["name"]) == (
        "kube-system",
        "weave-net",
    )
    template = daemonset["spec"]["template"]
    assert template["metadata"]["labels"]["name"] == "weave-net"
    assert template["spec"]["tolerations"] == [{"operator": "Exists"}]  # every node
    assert "kube-system" not in {m["metadata"]["name"] for m in objects if m["kind"] == "Namespace"}
    apps = {
        m["metadata"]["name"]: m
        for m in objects
        if m["kind"] == "Service" and m["metadata"]["name"] != "ingress-controller"
    }
    assert sorted(apps) == sorted(a.name for a in DEFAULT_APPS)
    for name, service in apps.items():
        assert service["spec"]["type"] == "LoadBalancer"
        assert service["metadata"]["annotations"] == {
            KUBESHIFT_DNS_NAMES: f"{name}.shop.example.com"
        }
    plain = manifests(spec_for(config))
    assert not [m for m in plain if m["kind"] == "DaemonSet"]
    assert {m["spec"]["type"] for m in plain if m["kind"] == "Service"} == {
        "ClusterIP",
        "LoadBalancer",
    }


# --- against a real cluster ---------------------------------------------------------------


def _free_node_ports(core: CoreV1Api, count: int) -> list[int]:
    used = {
        p.node_port
        for s in core.list_service_for_all_namespaces().items
        for p in s.spec.ports or []
        if p.node_port
    }
    return random.sample(sorted(set(range(30000, 32768)) - used), count)


@pytest.fixture
def api(primary_cluster: Cluster) -> Iterator[ApiClient]:
    with primary_cluster.api_client() as client:
        yield client


@pytest.fixture
def make_spec(api: ApiClient) -> Iterator[Callable[..., WorkloadSpec]]:
    """``make(**overrides)``: the default workloads under a unique namespace prefix."""
    core = CoreV1Api(api)
    made: list[WorkloadSpec] = []

    def make(**overrides: Any) -> WorkloadSpec:
        prefix = unique_name("wl")
        ports = _free_node_ports(core, 2)
        spec = WorkloadSpec(
            apps=tuple(replace(a, namespace=f"{prefix}-{a.namespace}") for a in DEFAULT_APPS),
            ingress=IngressWorkload(
                namespace=f"{prefix}-ingress", ports=((80, ports[0]), (443, ports[1]))
            ),
        )
        spec = replace(spec, **overrides)
        made.append(spec)
        return spec

    yield make
    for spec in made:
        namespaces = {a.namespace for a in spec.apps}
        if spec.ingress:
            namespaces.add(spec.ingress.namespace)
        for namespace in namespaces:
            with contextlib.suppress(ApiException):
                core.delete_namespace(namespace, propagation_policy="Background")


@pytest.fixture
def workers(api: ApiClient, node_pools: NodePools) -> list[str]:
    """Two zones of Ready kwok workers, plus a tainted control-plane node nothing may use.

    Ready before seeding: pods scheduled while only some workers are Ready crowd onto those.
    """
    names: list[str] = []
    for zone in ("eu-west-1a", "eu-west-1b"):
        names += node_pools.create(NodePoolSpec("worker", count=2, zone=zone)).node_names
    node_pools.create(
        NodePoolSpec(
            "control-plane",
            count=1,
            labels={CONTROL_PLANE: ""},
            taints=(V1Taint(key=CONTROL_PLANE, effect="NoSchedule"),),
        )
    )
    core = CoreV1Api(api)
    for name in names:
        eventually(f"worker {name} Ready", lambda n=name: _node_ready(core, n))
    return names


def _node_ready(core: CoreV1Api, name: str) -> bool:
    node = core.read_node(name)
    ready = any(c.type == "Ready" and c.status == "True" for c in node.status.conditions or [])
    return ready and not any(
        t.key.startswith("node.kubernetes.io/") for t in node.spec.taints or []
    )


def _pods(core: CoreV1Api, namespace: str, app: str) -> list[Any]:
    items = core.list_namespaced_pod(namespace, label_selector=f"app={app}").items
    return [p for p in items if p.metadata.deletion_timestamp is None]


def _ready_endpoints(api: ApiClient, key: str) -> int:
    namespace, name = key.split("/")
    slices = DiscoveryV1Api(api).list_namespaced_endpoint_slice(
        namespace, label_selector=f"kubernetes.io/service-name={name}"
    )
    return sum(
        1
        for s in slices.items
        for e in s.endpoints or []
        if e.conditions is not None and e.conditions.ready
    )


@pytest.mark.controlplane
def test_seeded_workloads_become_available_spread_and_budgeted(
    api: ApiClient, make_spec: Callable[..., WorkloadSpec], workers: list[str]
) -> None:
    spec = make_spec()
    assert spec.ingress is not None
    core, apps, policy = CoreV1Api(api), AppsV1Api(api), PolicyV1Api(api)

    seeded = seed(api, spec)
    wait_available(api, seeded, timeout=120)

    expected = [f"{a.namespace}/{a.name}" for a in spec.apps]
    ingress_key = f"{spec.ingress.namespace}/{spec.ingress.service}"
    assert sorted(seeded.deployments) == sorted([*expected, ingress_key])
    assert sorted(seeded.probe_services) == sorted(seeded.deployments)
    assert len(seeded.created) == len(seeded.namespaces) + 3 * len(seeded.deployments)
    control_plane = {n.metadata.name for n in core.list_node(label_selector=CONTROL_PLANE).items}
    replicas = {f"{a.namespace}/{a.name}": a.replicas for a in spec.apps}
    replicas[ingress_key] = spec.ingress.replicas
    for key, count in replicas.items():
        namespace, name = key.split("/")
        app = "ingress-controller" if key == ingress_key else name
        nodes = [p.spec.node_name for p in _pods(core, namespace, app)]
        assert len(nodes) == count and len(set(nodes)) == count, f"{key} not spread: {nodes}"
        assert not set(nodes) & control_plane, f"{key} landed on a control-plane node"
        budget = policy.read_namespaced_pod_disruption_budget(name, namespace).spec
        assert (budget.min_available is None) != (budget.max_unavailable is None)
        eventually(
            f"{count} ready endpoints of {key}",
            lambda k=key: _ready_endpoints(api, k),
            until=lambda n, c=count: n == c,
        )
    ingress = core.read_namespaced_service(spec.ingress.service, spec.ingress.namespace).spec
    assert ingress.type == "LoadBalancer" and ingress.external_traffic_policy == "Local"
    assert ingress.health_check_node_port  # where a load balancer checks a Local Service
    assert {(p.port, p.node_port) for p in ingress.ports} == set(spec.ingress.ports)
    web = core.read_namespaced_service(spec.apps[0].name, spec.apps[0].namespace).spec
    assert web.type == "ClusterIP"

    generations = {
        key: apps.read_namespaced_deployment(*reversed(key.split("/"))).metadata.generation
        for key in seeded.deployments
    }
    again = seed(api, spec)
    assert again.created == ()
    assert again.probe_services == seeded.probe_services
    for key, generation in generations.items():
        deployment = apps.read_namespaced_deployment(*reversed(key.split("/")))
        assert deployment.metadata.generation == generation
    wait_available(api, again, timeout=30)


@pytest.mark.controlplane
def test_wait_available_names_what_is_not_available(
    api: ApiClient, make_spec: Callable[..., WorkloadSpec], workers: list[str]
) -> None:
    base = make_spec()
    slow = App(base.apps[0].namespace, "slow", replicas=2)
    spec = replace(base, apps=(slow,), ingress=None, pod_ready_delay="1h")
    seeded = seed(api, spec)
    missing = replace(seeded, deployments=(*seeded.deployments, f"{slow.namespace}/gone"))

    with pytest.raises(GateTimeoutError) as failure:
        wait_available(api, missing, timeout=2, interval=0.5)

    message = str(failure.value)
    assert f"{slow.namespace}/slow (0/2 available" in message
    assert f"{slow.namespace}/gone" in message
