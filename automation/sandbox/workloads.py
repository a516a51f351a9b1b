"""Workloads seeded into the sandbox's primary cluster: what a rehearsal drains and moves.

A few namespaces of Deployments, each with several replicas spread one per node where
possible (so draining a node really evicts something), a PodDisruptionBudget (so the
drain has to wait for replacements) and a ClusterIP Service (which the availability
probe watches); plus the ingress controller exactly where vpc-move looks for it
(:class:`automation.config.settings.IngressSettings`): a ``LoadBalancer`` Service whose node
ports are the ingress target groups' ports, so ``ingress-nodeport`` and
``ingress-move`` find what they expect.

For a cni-swap stack the primary also runs its old CNI (a DaemonSet on every node, as
Weave ran in seed 000), and each app's Service is a ``LoadBalancer`` declaring its DNS
name (``kubeshift.io/dns-names``): the cloud controller gives it a load balancer, and
the records cni-swap moves point at it.

Nothing here needs more than kwok fakes: images are never pulled, pods turn Ready
without running, and no pod tolerates a taint, so none lands on a control-plane node.
Seeding is create-or-leave, so it is safe to repeat on a cluster mid-migration.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubernetes import client

from automation.config.mirror_settings import DaemonSetRef
from automation.config.settings import IngressSettings
from automation.core.errors import KubeshiftError, StepFailedError, from_api_exception
from automation.core.waiting import Pending, wait_until
from automation.kube.clients import raw
from automation.steps.service_dns import KUBESHIFT_DNS_NAMES
from components.contract.models import StackConfig

PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
PART_OF = {"app.kubernetes.io/part-of": "kubeshift-sandbox"}
READY_DELAY_ANNOTATION = "kubeshift.io/pod-ready-delay"
"""Read by the sandbox's kwok: how long a pod takes to turn Ready (a Go duration)."""


@dataclass(frozen=True)
class App:
    """One Deployment with its budget and ClusterIP Service (``app=<name>``)."""

    namespace: str
    name: str
    replicas: int = 3
    min_available: int | None = None
    max_unavailable: int | None = 1
    port: int = 80


@dataclass(frozen=True)
class IngressWorkload:
    """The ingress controller as vpc-move finds it (names from ``IngressSettings``)."""

    namespace: str = "ingress"
    service: str = "ingress-controller"
    pod_labels: Mapping[str, str] = field(default_factory=lambda: {"app": "ingress-controller"})
    replicas: int = 2
    ports: tuple[tuple[int, int], ...] = ((80, 30080), (443, 30443))
    """(Service port, node port) pairs: the node ports are the target groups' ports."""
    service_type: str = "LoadBalancer"
    traffic_policy: str = "Local"
    """As behind a network load balancer that keeps client addresses: a node forwards
    only to its own pods, and the load balancer's check fails on the others
    (``automation.sandbox.local_traffic``)."""


DEFAULT_APPS = (
    App("shop", "web", replicas=4, max_unavailable=1),
    App("shop", "cart", replicas=3, min_available=2, max_unavailable=None),
    App("payments", "ledger", replicas=3, min_available=2, max_unavailable=None),
    App("catalog", "search", replicas=2, max_unavailable=1),
)


@dataclass(frozen=True)
class WorkloadSpec:
    """What to seed."""

    apps: tuple[App, ...] = DEFAULT_APPS
    ingress: IngressWorkload | None = field(default_factory=IngressWorkload)
    pod_ready_delay: str | None = None
    """e.g. ``"1s"``: replacements take that long to turn Ready (realistic drains)."""
    cni: DaemonSetRef | None = None
    """The CNI DaemonSet the cluster runs (cni-swap's old CNI), on every node."""
    dns_zone: str | None = None
    """Set: each app's Service is a ``LoadBalancer`` named ``<app>.<dns_zone>``."""

    def dns_name(self, app: App) -> str:
        return f"{app.name}.{self.dns_zone}"


@dataclass(frozen=True)
class SeededWorkloads:
    """What the cluster holds after :func:`seed` (``namespace/name`` keys)."""

    namespaces: tuple[str, ...]
    deployments: tuple[str, ...]
    probe_services: tuple[str, ...]
    created: tuple[str, ...]
    """``Kind namespace/name`` of the objects this call created (empty on a re-seed)."""

    def wait_available(self, api_client: client.ApiClient, timeout: float = 300.0) -> None:
        wait_available(api_client, self, timeout=timeout)


def spec_for(
    config: StackConfig,
    ingress: IngressSettings | None = None,
    *,
    cni: DaemonSetRef | None = None,
    dns_zone: str | None = None,
) -> WorkloadSpec:
    """The workloads for a stack: ingress node ports from its ingress listeners."""
    settings = ingress or IngressSettings()
    listeners = config.cluster.ingress.listeners
    return WorkloadSpec(
        ingress=IngressWorkload(
            namespace=settings.namespace,
            service=settings.service,
            pod_labels=dict(settings.pod_selector),
            ports=tuple((lis.port, lis.node_port) for lis in listeners),
        ),
        cni=cni,
        dns_zone=dns_zone,
    )


# --- manifests ----------------------------------------------------------------------------


def _pod_template(
    labels: Mapping[str, str], ports: list[int], ready_delay: str | None
) -> dict[str, Any]:
    """Pause pods spread one per node (tainted and cordoned nodes do not count)."""
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": key,
            "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": dict(labels)},
            "nodeTaintsPolicy": "Honor",
        }
        for key, when in (
            ("kubernetes.io/hostname", "DoNotSchedule"),
            ("topology.kubernetes.io/zone", "ScheduleAnyway"),
        )
    ]
    container = {
        "name": "app",
        "image": PAUSE_IMAGE,
        "ports": [{"containerPort": p, "protocol": "TCP"} for p in ports],
        "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
    }
    return {
        "metadata": {
            "labels": {**labels, **PART_OF},
            "annotations": {READY_DELAY_ANNOTATION: ready_delay} if ready_delay else {},
        },
        "spec": {
            "containers": [container],
            "topologySpreadConstraints": spread,
            "terminationGracePeriodSeconds": 5,
        },
    }


def _deployment(name: str, labels: Mapping[str, str], replicas: int, template: dict) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": {**labels, **PART_OF}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": dict(labels)},
            "strategy": {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": template,
        },
    }


def _budget(name: str, labels: Mapping[str, str], rule: Mapping[str, int]) -> dict:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "labels": dict(PART_OF)},
        "spec": {**rule, "selector": {"matchLabels": dict(labels)}},
    }


def _service(
    name: str,
    labels: Mapping[str, str],
    ports: list[dict],
    annotations: Mapping[str, str] | None = None,
    **spec: Any,
) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": name,
            "labels": dict(PART_OF),
            "annotations": dict(annotations or {}),
        },
        "spec": {"selector": dict(labels), "ports": ports, **spec},
    }


def _daemonset(cni: DaemonSetRef) -> dict:
    """A CNI's DaemonSet: one pod on every node, control plane included."""
    selector = cni.pod_selector or f"name={cni.name}"
    labels = dict(item.split("=", 1) for item in selector.split(","))
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": cni.name, "labels": {**labels, **PART_OF}},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": {**labels, **PART_OF}},
                "spec": {
                    "hostNetwork": True,
                    "tolerations": [{"operator": "Exists"}],
                    "containers": [
                        {
                            "name": cni.name,
                            "image": PAUSE_IMAGE,
                            "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
                        }
                    ],
                },
            },
        },
    }


def manifests(spec: WorkloadSpec) -> list[dict[str, Any]]:
    """Every object to seed, namespaces first, each with ``metadata.namespace`` set."""
    objects: list[tuple[str, dict[str, Any]]] = []
    for app in spec.apps:
        labels = {"app": app.name}
        rule = (
            {"minAvailable": app.min_available}
            if app.min_available is not None
            else {"maxUnavailable": app.max_unavailable or 1}
        )
        template = _pod_template(labels, [8080], spec.pod_ready_delay)
        port = {"name": "http", "port": app.port, "targetPort": 8080, "protocol": "TCP"}
        if spec.dns_zone:
            service = _service(
                app.name, labels, [port], {KUBESHIFT_DNS_NAMES: spec.dns_name(app)},
                type="LoadBalancer",
            )  # fmt: skip
        else:
            service = _service(app.name, labels, [port], type="ClusterIP")
        objects += [
            (app.namespace, _deployment(app.name, labels, app.replicas, template)),
            (app.namespace, _budget(app.name, labels, rule)),
            (app.namespace, service),
        ]
    if spec.cni is not None:
        objects.append((spec.cni.namespace, _daemonset(spec.cni)))
    if spec.ingress is not None:
        ing = spec.ingress
        template = _pod_template(ing.pod_labels, [p for p, _ in ing.ports], spec.pod_ready_delay)
        ports = [
            {"name": f"tcp-{p}", "port": p, "targetPort": p, "nodePort": n, "protocol": "TCP"}
            for p, n in ing.ports
        ]
        objects += [
            (ing.namespace, _deployment(ing.service, ing.pod_labels, ing.replicas, template)),
            (ing.namespace, _budget(ing.service, ing.pod_labels, {"maxUnavailable": 1})),
            (
                ing.namespace,
                _service(
                    ing.service,
                    ing.pod_labels,
                    ports,
                    type=ing.service_type,
                    externalTrafficPolicy=ing.traffic_policy,
                ),
            ),
        ]
    namespaces = sorted({ns for ns, _ in objects} - {"kube-system"})
    out: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": dict(PART_OF)}}
        for ns in namespaces
    ]
    for ns, obj in objects:
        obj["metadata"]["namespace"] = ns
        out.append(obj)
    return out


# --- seeding ------------------------------------------------------------------------------


Calls = tuple[Callable[..., Any], Callable[..., Any]]


def _calls(api_client: client.ApiClient) -> dict[str, Calls]:
    """(read, create) per kind."""
    core = client.CoreV1Api(api_client)
    apps = client.AppsV1Api(api_client)
    policy = client.PolicyV1Api(api_client)
    return {
        "Namespace": (core.read_namespace, core.create_namespace),
        "Service": (core.read_namespaced_service, core.create_namespaced_service),
        "Deployment": (apps.read_namespaced_deployment, apps.create_namespaced_deployment),
        "DaemonSet": (apps.read_namespaced_daemon_set, apps.create_namespaced_daemon_set),
        "PodDisruptionBudget": (
            policy.read_namespaced_pod_disruption_budget,
            policy.create_namespaced_pod_disruption_budget,
        ),
    }


def _key(obj: Mapping[str, Any]) -> str:
    meta = obj["metadata"]
    return f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta["name"]


def _failure(exc: client.ApiException, action: str) -> KubeshiftError:
    """``from_api_exception`` plus the API server's own sentence (which field it rejected)."""
    error = from_api_exception(exc, action)
    try:
        detail = str(json.loads(exc.body or "{}").get("message", "")).rstrip(".")
    except (ValueError, AttributeError):
        detail = ""
    if "being terminated" in detail:
        return StepFailedError(f"Cannot {action}: {detail}; seed again once it is gone.")
    return type(error)(f"{error} {detail}." if detail else str(error))


def _ensure(calls: Calls, obj: dict[str, Any]) -> bool:
    """Create ``obj`` unless it exists. True if created.

    Read first: the API server checks a Service's node ports before its name, so
    re-creating an existing one fails with "port already allocated", not a conflict.
    """
    read, create = calls
    kind, meta = obj["kind"], obj["metadata"]
    where = (meta["namespace"],) if meta.get("namespace") else ()
    try:
        read(meta["name"], *where, _preload_content=False)
        return False
    except client.ApiException as exc:
        if exc.status != 404:
            raise _failure(exc, f"read {kind} {_key(obj)}") from exc
    try:
        create(*where, obj, _preload_content=False)
    except client.ApiException as exc:
        if exc.status == 409:  # created meanwhile
            return False
        raise _failure(exc, f"create {kind} {_key(obj)}") from exc
    return True


def seed(api_client: client.ApiClient, spec: WorkloadSpec) -> SeededWorkloads:
    """Create what is missing and leave what exists (whatever state it is in now)."""
    objects = manifests(spec)
    calls = _calls(api_client)
    created = [f"{o['kind']} {_key(o)}" for o in objects if _ensure(calls[o["kind"]], o)]
    by_kind = {
        kind: tuple(_key(o) for o in objects if o["kind"] == kind)
        for kind in ("Namespace", "Deployment", "Service")
    }
    return SeededWorkloads(
        namespaces=by_kind["Namespace"],
        deployments=by_kind["Deployment"],
        probe_services=by_kind["Service"],
        created=tuple(created),
    )


def _availability(deployment: Mapping[str, Any]) -> str:
    """Why a Deployment is not fully available yet, or ``""``."""
    spec, status = deployment.get("spec") or {}, deployment.get("status") or {}
    wanted = int(spec.get("replicas", 1))
    available = int(status.get("availableReplicas") or 0)
    updated = int(status.get("updatedReplicas") or 0)
    current = status.get("observedGeneration", 0) >= deployment["metadata"]["generation"]
    condition: Mapping[str, Any] = next(
        (c for c in status.get("conditions") or [] if c.get("type") == "Available"), {}
    )
    if current and condition.get("status") == "True" and min(available, updated) >= wanted:
        return ""
    return f"{available}/{wanted} available, {updated} updated"


def wait_available(
    api_client: client.ApiClient,
    seeded: SeededWorkloads,
    *,
    timeout: float = 300.0,
    interval: float = 1.0,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Wait until every seeded Deployment has all its replicas available.

    Raises ``GateTimeoutError`` naming each Deployment that is not, with its counts.
    """
    apps = client.AppsV1Api(api_client)

    def poll() -> Pending:
        pending = []
        for key in seeded.deployments:
            namespace, name = key.split("/", 1)
            try:
                body = raw(apps.read_namespaced_deployment, name, namespace, action=f"read {key}")
            except KubeshiftError as exc:  # e.g. deleted since seeding
                pending.append(f"{key} ({exc})")
                continue
            if problem := _availability(body):
                pending.append(f"{key} ({problem})")
        return Pending.of(pending)

    wait_until(
        "the seeded Deployments to be available", poll, timeout=timeout, interval=interval,
        sleep=sleep,
    )  # fmt: skip
