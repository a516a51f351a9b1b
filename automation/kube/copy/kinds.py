"""The namespaced kinds a copy knows, in the order it copies them.

Each kind names its API version, the generated client's class and method stem that
reach it, and where its pod spec sits (for image rewrites); the order is Velero's
restore priority, so what others reference is copied first. ``Obj`` is one object as
the API's raw JSON, the shape every module of the copy works on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]


@dataclass(frozen=True)
class KindSpec:
    """How to reach one namespaced kind through the generated client, and its pod spec."""

    kind: str
    api_version: str
    api_class: str  # kubernetes.client class name, e.g. "AppsV1Api"
    snake: str  # method stem: list_namespaced_<snake>, patch_namespaced_<snake>
    pod_spec: tuple[str, ...] | None = None  # path to the pod spec, for image rewrites


_TEMPLATE = ("spec", "template", "spec")

KINDS: tuple[KindSpec, ...] = (
    # Order matters: what others reference first (Velero's restore priorities).
    KindSpec("ServiceAccount", "v1", "CoreV1Api", "service_account"),
    KindSpec("Secret", "v1", "CoreV1Api", "secret"),
    KindSpec("ConfigMap", "v1", "CoreV1Api", "config_map"),
    KindSpec("Role", "rbac.authorization.k8s.io/v1", "RbacAuthorizationV1Api", "role"),
    KindSpec(
        "RoleBinding", "rbac.authorization.k8s.io/v1", "RbacAuthorizationV1Api", "role_binding"
    ),
    KindSpec("Service", "v1", "CoreV1Api", "service"),
    KindSpec("PodDisruptionBudget", "policy/v1", "PolicyV1Api", "pod_disruption_budget"),
    KindSpec("Deployment", "apps/v1", "AppsV1Api", "deployment", _TEMPLATE),
    KindSpec("StatefulSet", "apps/v1", "AppsV1Api", "stateful_set", _TEMPLATE),
    KindSpec("DaemonSet", "apps/v1", "AppsV1Api", "daemon_set", _TEMPLATE),
    KindSpec("ReplicaSet", "apps/v1", "AppsV1Api", "replica_set", _TEMPLATE),
    KindSpec("CronJob", "batch/v1", "BatchV1Api", "cron_job", ("spec", "jobTemplate", *_TEMPLATE)),
    KindSpec("Job", "batch/v1", "BatchV1Api", "job", _TEMPLATE),
    KindSpec("Pod", "v1", "CoreV1Api", "pod", ("spec",)),
    KindSpec("Ingress", "networking.k8s.io/v1", "NetworkingV1Api", "ingress"),
)
KIND_BY_NAME: dict[str, KindSpec] = {k.kind: k for k in KINDS}
DEFAULT_KINDS: tuple[str, ...] = tuple(k.kind for k in KINDS)
