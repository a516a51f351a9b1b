"""What a load balancer's health check sees of a ``Local`` Service, played for moto.

With ``externalTrafficPolicy: Local`` kube-proxy forwards a Service's node ports only to
Ready endpoints on the node itself, and answers its ``healthCheckNodePort`` with 503 on a
node that has none ("Preserving the client source IP", Kubernetes documentation; the
AWS cloud provider and the AWS Load Balancer Controller point the target group's health
check at that port). So a network load balancer marks unhealthy every node target of
such a Service whose node runs none of its Ready pods. moto marks every registered,
running instance healthy: a migration that left a ``Local`` Service's traffic on nodes
without its pods would pass there.

:class:`LocalTrafficWatcher`, one per cluster beside its node bridge, lists each
``Local`` NodePort or LoadBalancer Service's node ports and health-check port and the
nodes of its Ready endpoints, and keeps in :data:`UNSERVED` the (instance, port) pairs a
health check would fail on; ``moto_gaps.elb.local_traffic_health_checks`` answers those
targets ``unhealthy`` (``Target.FailedHealthChecks``). ``Cluster`` Services, and ports no
``Local`` Service holds, keep moto's answer.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from kubernetes import client

from automation.aws.nodes import instance_id_from_provider_id
from automation.kube.clients import list_all

log = logging.getLogger("kubeshift.sandbox.local_traffic")

Target = tuple[str, int]  # (instance id, port)
SERVICE_NAME_LABEL = "kubernetes.io/service-name"


class UnservedTargets:
    """(instance, port) -> why a health check fails there, per cluster; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_cluster: dict[str, dict[Target, str]] = {}

    def set(self, cluster: str, unserved: Mapping[Target, str]) -> None:
        with self._lock:
            self._by_cluster[cluster] = dict(unserved)

    def why(self, instance_id: str, port: int) -> str | None:
        with self._lock:
            for unserved in self._by_cluster.values():
                if (instance_id, port) in unserved:
                    return unserved[(instance_id, port)]
        return None

    def clear(self) -> None:
        with self._lock:
            self._by_cluster.clear()


UNSERVED = UnservedTargets()
"""Read by moto's patched target health in the supervisor's process."""


def _local(svc: Mapping[str, Any]) -> bool:
    spec = svc.get("spec") or {}
    return spec.get("externalTrafficPolicy") == "Local" and spec.get("type") in (
        "NodePort",
        "LoadBalancer",
    )


def unserved_targets(core: client.CoreV1Api, discovery: client.DiscoveryV1Api) -> dict[Target, str]:
    """Every (instance, port) where a ``Local`` Service's port finds no Ready pod."""
    services = [
        s
        for s in list_all(core.list_service_for_all_namespaces, action="list Services")["items"]
        if _local(s)
    ]
    if not services:
        return {}
    nodes = list_all(core.list_node, action="list nodes")["items"]
    instances = {
        n["metadata"]["name"]: instance_id_from_provider_id((n.get("spec") or {}).get("providerID"))
        for n in nodes
    }
    unserved: dict[Target, str] = {}
    for svc in services:
        meta, spec = svc["metadata"], svc["spec"]
        key = f"{meta['namespace']}/{meta['name']}"
        ports = [int(p["nodePort"]) for p in spec.get("ports") or [] if p.get("nodePort")]
        if spec.get("healthCheckNodePort"):
            ports.append(int(spec["healthCheckNodePort"]))
        serving = _nodes_with_ready_endpoints(discovery, meta["namespace"], meta["name"])
        for node, instance in instances.items():
            if instance is None or node in serving:
                continue
            for port in ports:
                unserved[(instance, port)] = f"no Ready pod of {key} on {node} (Local)"
    return unserved


def _nodes_with_ready_endpoints(
    discovery: client.DiscoveryV1Api, namespace: str, service: str
) -> set[str]:
    slices = list_all(
        discovery.list_namespaced_endpoint_slice,
        namespace,
        action=f"list EndpointSlices of {namespace}/{service}",
        label_selector=f"{SERVICE_NAME_LABEL}={service}",
    )["items"]
    return {
        endpoint["nodeName"]
        for endpoint_slice in slices
        for endpoint in endpoint_slice.get("endpoints") or []
        if endpoint.get("nodeName")
        and (endpoint.get("conditions") or {}).get("ready", True)
        and not (endpoint.get("conditions") or {}).get("terminating", False)
    }


class LocalTrafficWatcher:
    """Keeps :data:`UNSERVED` in step with one cluster's ``Local`` Services."""

    def __init__(self, cluster: str, api_client: client.ApiClient) -> None:
        self.cluster = cluster
        self._core = client.CoreV1Api(api_client)
        self._discovery = client.DiscoveryV1Api(api_client)

    def sync(self) -> int:
        unserved = unserved_targets(self._core, self._discovery)
        UNSERVED.set(self.cluster, unserved)
        return len(unserved)

    def run(self, stop: threading.Event, interval: float = 2.0) -> None:
        """``sync`` every ``interval`` seconds until ``stop``; errors are logged, never fatal."""
        failing = ""
        while not stop.is_set():
            try:
                self.sync()
                failing = ""
            except Exception as exc:
                message = f"{type(exc).__name__}: {exc}"
                if message != failing:
                    log.warning("local traffic %s: pass failed: %s", self.cluster, message)
                failing = message
            stop.wait(interval)
