"""Builders for the workloads the harness tests run on kwok nodes."""

from __future__ import annotations

from collections.abc import Mapping

from kubernetes.client import (
    V1Container,
    V1Deployment,
    V1DeploymentSpec,
    V1LabelSelector,
    V1ObjectMeta,
    V1PodDisruptionBudget,
    V1PodDisruptionBudgetSpec,
    V1PodSpec,
    V1PodTemplateSpec,
    V1Service,
    V1ServicePort,
    V1ServiceSpec,
    V1Toleration,
)

PAUSE_IMAGE = "registry.k8s.io/pause:3.10"


def deployment(
    name: str,
    replicas: int,
    *,
    node_selector: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    tolerations: list[V1Toleration] | None = None,
) -> V1Deployment:
    """A Deployment of pause pods labelled ``app=<name>``."""
    labels = {"app": name}
    return V1Deployment(
        metadata=V1ObjectMeta(name=name, labels=labels),
        spec=V1DeploymentSpec(
            replicas=replicas,
            selector=V1LabelSelector(match_labels=labels),
            template=V1PodTemplateSpec(
                metadata=V1ObjectMeta(labels=labels, annotations=dict(annotations or {})),
                spec=V1PodSpec(
                    containers=[V1Container(name="app", image=PAUSE_IMAGE)],
                    node_selector=dict(node_selector or {}),
                    tolerations=tolerations,
                    termination_grace_period_seconds=0,
                ),
            ),
        ),
    )


def pdb(name: str, app: str, *, min_available: int) -> V1PodDisruptionBudget:
    return V1PodDisruptionBudget(
        metadata=V1ObjectMeta(name=name),
        spec=V1PodDisruptionBudgetSpec(
            min_available=min_available, selector=V1LabelSelector(match_labels={"app": app})
        ),
    )


def service(name: str, app: str, port: int = 80) -> V1Service:
    return V1Service(
        metadata=V1ObjectMeta(name=name),
        spec=V1ServiceSpec(selector={"app": app}, ports=[V1ServicePort(port=port)]),
    )


def cni_daemonset(name: str, labels: Mapping[str, str], node_labels: Mapping[str, str]) -> dict:
    """A CNI's DaemonSet (pause pods, every taint tolerated) on the nodes ``node_labels``
    select, its pods labelled ``labels``."""
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "labels": dict(labels)},
        "spec": {
            "selector": {"matchLabels": dict(labels)},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "nodeSelector": dict(node_labels),
                    "tolerations": [{"operator": "Exists"}],
                    "terminationGracePeriodSeconds": 0,
                    "containers": [{"name": "cni", "image": "registry.k8s.io/pause:3.10"}],
                },
            },
        },
    }


def label_selector(labels: Mapping[str, str]) -> str:
    """``labels`` as an equality selector."""
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
