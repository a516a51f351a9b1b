"""Fixtures for the kube tests that run against the real control plane.

``kube`` builds kubeshift's own ``KubeClients`` from the session cluster's kubeconfig
and context (the same path production takes). ``fleet`` makes an "old" and a "new"
node pool sharing a group label, plus helpers to run Deployments with PDBs and
Services on them, so each test reads as the migration step it checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from kubernetes.client import (
    AppsV1Api,
    CoreV1Api,
    PolicyV1Api,
    V1LabelSelector,
    V1ObjectMeta,
    V1PodDisruptionBudget,
    V1PodDisruptionBudgetSpec,
    V1Toleration,
)

from automation.kube.clients import KubeClients
from automation.kube.nodes import NodeSelection, Taint, taint_nodes
from automation.sandbox.kwok import POD_READY_DELAY_ANNOTATION
from tests.support.nodes import POOL_LABEL, NodePool, NodePools, NodePoolSpec, unique_name
from tests.support.waiting import eventually
from tests.support.workloads import deployment, service

GROUP_LABEL = "kubeshift.io/test-group"
RETIRING = Taint(key="kubeshift.io/retiring", value="true", effect="NoSchedule")


def is_ready(pod: Any) -> bool:
    return pod.metadata.deletion_timestamp is None and any(
        c.type == "Ready" and c.status == "True" for c in pod.status.conditions or []
    )


@dataclass
class Fleet:
    """Pools and workloads of one test, all inside one namespace and one node group."""

    kube: KubeClients
    pools: NodePools
    namespace: str
    group: str

    def pool(self, name: str, count: int, **kw: Any) -> NodePool:
        labels = {GROUP_LABEL: self.group, **kw.pop("labels", {})}
        return self.pools.create(NodePoolSpec(name, count=count, labels=labels, **kw))

    def deploy(
        self,
        name: str,
        replicas: int,
        *,
        ready_delay: str | None = None,
        min_available: int | str | None = None,
        max_unavailable: int | str | None = None,
        with_service: bool = False,
        tolerations: list[V1Toleration] | None = None,
    ) -> None:
        dep = deployment(
            name,
            replicas,
            node_selector={GROUP_LABEL: self.group},
            annotations={POD_READY_DELAY_ANNOTATION: ready_delay} if ready_delay else None,
            tolerations=tolerations,
        )
        AppsV1Api(self.kube.api_client).create_namespaced_deployment(self.namespace, dep)
        if min_available is not None or max_unavailable is not None:
            PolicyV1Api(self.kube.api_client).create_namespaced_pod_disruption_budget(
                self.namespace,
                V1PodDisruptionBudget(
                    metadata=V1ObjectMeta(name=name),
                    spec=V1PodDisruptionBudgetSpec(
                        min_available=min_available,
                        max_unavailable=max_unavailable,
                        selector=V1LabelSelector(match_labels={"app": name}),
                    ),
                ),
            )
        if with_service:
            CoreV1Api(self.kube.api_client).create_namespaced_service(
                self.namespace, service(name, name)
            )

    def pods(self, app: str | None = None) -> list[Any]:
        selector = f"app={app}" if app else None
        items = (
            CoreV1Api(self.kube.api_client)
            .list_namespaced_pod(self.namespace, label_selector=selector)
            .items
        )
        return [p for p in items if p.metadata.deletion_timestamp is None]

    def wait_ready(self, app: str, count: int, timeout: float = 90) -> list[Any]:
        return eventually(
            f"{count} Ready pods of {self.namespace}/{app}",
            lambda: [p for p in self.pods(app) if is_ready(p)],
            until=lambda pods: len(pods) == count,
            timeout=timeout,
        )

    def wait_budget(self, name: str, timeout: float = 60) -> Any:
        """Wait until the disruption controller has observed the PDB with all pods healthy."""
        policy = PolicyV1Api(self.kube.api_client)
        return eventually(
            f"PDB {self.namespace}/{name} observed",
            lambda: policy.read_namespaced_pod_disruption_budget(name, self.namespace),
            until=lambda b: (
                b.status is not None
                and b.status.observed_generation == b.metadata.generation
                and b.status.current_healthy == b.status.expected_pods
                and (b.status.expected_pods or 0) > 0
            ),
            timeout=timeout,
        )

    def retire(self, pool: NodePool) -> None:
        """Taint a pool NoSchedule, as the migration does before draining it, so evicted
        pods' replacements cannot land on a node that has not been drained yet."""
        taint_nodes(self.kube.core, NodeSelection(names=list(pool.node_names)), RETIRING)

    def nodes_of(self, pods: list[Any]) -> set[str]:
        return {p.spec.node_name for p in pods}


@pytest.fixture
def fleet(kube: KubeClients, node_pools: NodePools, namespace: str) -> Fleet:
    return Fleet(kube, node_pools, namespace, unique_name("g"))


__all__ = ["GROUP_LABEL", "POOL_LABEL", "Fleet", "is_ready"]
