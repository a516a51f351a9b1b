"""The world a migration runs in, read from outside: moto's whole inventory (as the
fault benchmark compares two worlds, :func:`benchmarks.faults.aws_world`), the nodes
with their taints and schedulability, and whether each workload is Available.

``kubeshift back`` is judged by it: taking phases back must leave the world as it was
read before they ran (:func:`benchmarks.faults.world_differences` names what is not).
Where the workloads' pods run is read apart (:func:`workload_nodes`): they may land on
other old nodes than before, as long as they run on the old ones.
"""

from __future__ import annotations

from typing import Any

from benchmarks.faults import Client, aws_world


def read_world(client: Client, kube: Any) -> dict[str, Any]:
    """The world as moto and the primary cluster's API serve it now."""
    import kubernetes

    core, apps = kubernetes.client.CoreV1Api(kube), kubernetes.client.AppsV1Api(kube)
    nodes = sorted(
        (
            n.metadata.name,
            bool(n.spec.unschedulable),
            tuple(sorted(f"{t.key}:{t.effect}" for t in n.spec.taints or [])),
        )
        for n in core.list_node().items
    )
    deployments = apps.list_deployment_for_all_namespaces().items
    available = sorted(
        (
            d.metadata.namespace,
            d.metadata.name,
            (d.status.available_replicas or 0) >= d.spec.replicas,
        )
        for d in deployments
    )
    return {**aws_world(client), "nodes and taints": nodes, "deployments available": available}


def workload_nodes(kube: Any) -> frozenset[str]:
    """The nodes the Deployments' running pods are on."""
    import kubernetes

    pods = kubernetes.client.CoreV1Api(kube).list_pod_for_all_namespaces().items
    return frozenset(
        p.spec.node_name
        for p in pods
        if p.spec.node_name
        and p.status.phase == "Running"
        and any(o.kind == "ReplicaSet" for o in p.metadata.owner_references or [])
    )
