"""Moving the ingress controller: evict its pods onto new nodes; switch its Service type.

Seed 001: before new workers exist the ingress Service goes to ``NodePort`` (old target
groups reach it through any node); after the old nodes are tainted its pods are evicted
so they reschedule onto the new nodes; then the Service goes back to
``LoadBalancer``. Node ports must stay the same throughout, or the load balancers'
targets point at nothing. The move goes a batch at a time and waits for replacements to
be Ready on the target nodes before the next batch, so the Service never runs dry.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from kubernetes import client
from pydantic import BaseModel, Field

from automation.errors import GateTimeoutError, StepFailedError
from automation.kube.clients import MERGE_PATCH, KubeClients, list_all, patch_on_conflict, raw
from automation.kube.drain.evict import EvictStatus, evict_pod
from automation.kube.nodes import NodeSelection, select_nodes
from automation.progress import NullReporter, Reporter
from automation.waiting import Deadline, Pending, summarize, wait_until

log = logging.getLogger("kubeshift.ingress")


class PodMove(BaseModel):
    """Which pods to move and where they must land."""

    namespace: str
    pod_selector: str = Field(description="Label selector of the pods, e.g. 'app=ingress'.")
    target: NodeSelection = Field(description="Nodes the pods must end up on.")
    batch_size: int = Field(default=1, ge=1, description="Pods evicted before waiting.")
    timeout: float = Field(default=600.0, gt=0, description="Deadline of the whole move (s).")
    interval: float = Field(default=1.0, gt=0, description="Poll interval while waiting (s).")
    retry_max: float = Field(default=5.0, gt=0, description="Longest wait between 429 retries.")


@dataclass
class MoveResult:
    moved: list[str] = field(default_factory=list)  # evicted pods (namespace/name)
    already_in_place: list[str] = field(default_factory=list)
    ready_on_target: int = 0
    dry_run: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.moved) and not self.dry_run

    @property
    def message(self) -> str:
        if self.dry_run:
            if not self.moved:
                return "dry-run: nothing to move; every pod is on the target nodes."
            return f"dry-run: would evict {len(self.moved)} pod(s): {summarize(self.moved)}."
        if not self.moved:
            return f"All {len(self.already_in_place)} pod(s) already on the target nodes."
        return (
            f"Moved {len(self.moved)} pod(s) ({summarize(self.moved)}); "
            f"{self.ready_on_target} Ready on the target nodes."
        )


def _ready(pod: Mapping[str, Any]) -> bool:
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


def _key(pod: Mapping[str, Any]) -> str:
    return f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"


def move_pods(
    clients: KubeClients,
    move: PodMove,
    *,
    reporter: Reporter | None = None,
    dry_run: bool = False,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> MoveResult:
    """Evict the selected pods that are off ``move.target`` and wait for Ready replacements there.

    Idempotent: pods already on target nodes are left alone; a re-run after a crash only
    evicts what is still elsewhere. Every wait is bounded by ``move.timeout``.
    """
    reporter = reporter or NullReporter()
    deadline = Deadline(move.timeout, clock)
    targets = {n["metadata"]["name"] for n in select_nodes(clients.core, move.target)[0]}
    if not targets:
        raise StepFailedError(
            f"No target node matches {move.target.describe()}; cannot move "
            f"{move.namespace} pods '{move.pod_selector}'."
        )

    def pods() -> list[dict[str, Any]]:
        return list_all(
            clients.core.list_namespaced_pod,
            move.namespace,
            action=f"list pods '{move.pod_selector}' in {move.namespace}",
            label_selector=move.pod_selector,
        )["items"]

    current = [p for p in pods() if not (p["metadata"].get("deletionTimestamp"))]
    wanted = len(current)
    off = sorted(
        (p for p in current if (p.get("spec") or {}).get("nodeName") not in targets), key=_key
    )
    result = MoveResult(
        already_in_place=sorted(_key(p) for p in current if p not in off), dry_run=dry_run
    )
    if dry_run:
        result.moved = [_key(p) for p in off]
        log.info("%s", result.message)
        return result

    def placed() -> Pending:
        now = pods()
        ready_on = [p for p in now if _ready(p) and p["spec"].get("nodeName") in targets]
        elsewhere = [
            f"{_key(p)} on {p['spec'].get('nodeName') or 'no node'}"
            for p in now
            if p["spec"].get("nodeName") not in targets
        ]
        result.ready_on_target = len(ready_on)
        missing = [f"{wanted - len(ready_on)} Ready replica(s)"] if len(ready_on) < wanted else []
        return Pending.of([*elsewhere, *missing], f"{len(ready_on)}/{wanted} Ready on targets")

    with reporter.task(f"moving {move.namespace} '{move.pod_selector}' pods", len(off)) as task:
        for start in range(0, len(off), move.batch_size):
            batch = off[start : start + move.batch_size]
            for pod in batch:
                _evict_with_retry(clients.core, pod, deadline, move.retry_max, sleep)
                result.moved.append(_key(pod))
                task.advance()
            _wait_ready_count(clients, move, targets, wanted, deadline, pods, reporter, sleep)
        wait_until(
            f"{move.namespace} pods '{move.pod_selector}' Ready on the target nodes",
            placed,
            timeout=max(deadline.remaining, 0.01),
            interval=move.interval,
            on_progress=reporter.on_wait,
            clock=clock,
            sleep=sleep,
        )
    log.info("%s", result.message)
    return result


def _wait_ready_count(
    clients: KubeClients,
    move: PodMove,
    targets: set[str],
    wanted: int,
    deadline: Deadline,
    pods: Callable[[], list[dict[str, Any]]],
    reporter: Reporter,
    sleep: Callable[[float], None],
) -> None:
    """Wait until ``wanted`` pods are Ready again (the batch's replacements have started)."""

    def poll() -> Pending:
        ready = [p for p in pods() if _ready(p)]
        gap = wanted - len(ready)
        return Pending.of([f"{gap} replacement(s) not Ready"] if gap > 0 else [])

    wait_until(
        f"replacements of {move.namespace} '{move.pod_selector}' Ready",
        poll,
        timeout=max(deadline.remaining, 0.01),
        interval=move.interval,
        on_progress=reporter.on_wait,
        clock=deadline.clock,
        sleep=sleep,
    )


def _evict_with_retry(
    core: client.CoreV1Api,
    pod: Mapping[str, Any],
    deadline: Deadline,
    retry_max: float,
    sleep: Callable[[float], None],
) -> None:
    meta = pod["metadata"]
    delay = 0.5
    while True:
        outcome = evict_pod(core, meta["namespace"], meta["name"], uid=meta.get("uid"))
        if outcome.status in (EvictStatus.EVICTED, EvictStatus.GONE):
            return
        if outcome.status is EvictStatus.FAILED:
            raise StepFailedError(outcome.message)
        if deadline.expired:
            raise GateTimeoutError(
                f"Pod {_key(pod)} could not be evicted before the deadline: {outcome.message}."
            )
        log.info("eviction of %s blocked: %s; will retry in %.1fs", _key(pod), outcome, delay)
        sleep(min(delay, max(deadline.remaining, 0.01)))
        delay = min(delay * 2, retry_max)


# --- Service type switch -----------------------------------------------------------------

ServiceType = Literal["LoadBalancer", "NodePort"]


@dataclass(frozen=True)
class ServiceSwitch:
    service: str
    before: str
    after: str
    node_ports: dict[str, int]  # "port/protocol" -> nodePort, identical before and after
    changed: bool
    dry_run: bool = False

    @property
    def message(self) -> str:
        ports = ", ".join(f"{k}→{v}" for k, v in sorted(self.node_ports.items()))
        if not self.changed:
            return f"Service {self.service} is already {self.after} (node ports {ports})."
        verb = "would switch" if self.dry_run else "switched"
        return (
            f"{verb} Service {self.service} from {self.before} to {self.after}, "
            f"node ports {ports} kept."
        )


def _node_ports(svc: Mapping[str, Any]) -> dict[str, int]:
    return {
        f"{p.get('port')}/{p.get('protocol', 'TCP')}": int(p["nodePort"])
        for p in (svc.get("spec") or {}).get("ports") or []
        if p.get("nodePort")
    }


def set_service_type(
    core: client.CoreV1Api,
    namespace: str,
    name: str,
    service_type: ServiceType,
    *,
    dry_run: bool = False,
) -> ServiceSwitch:
    """Switch a Service between LoadBalancer and NodePort, keeping every node port.

    Fields that only make sense for load balancers are cleared when leaving
    ``LoadBalancer`` (the API server rejects them on a NodePort Service). Fails if the
    API server changed a node port anyway.
    """
    key = f"{namespace}/{name}"

    def build(svc: dict[str, Any]) -> dict[str, Any] | None:
        before = (svc.get("spec") or {}).get("type", "ClusterIP")
        if before not in ("LoadBalancer", "NodePort"):
            raise StepFailedError(
                f"Service {key} is {before}; only LoadBalancer and NodePort can be switched."
            )
        if before == service_type or dry_run:
            return None
        patch_spec: dict[str, Any] = {"type": service_type, "ports": svc["spec"].get("ports")}
        if service_type == "NodePort":
            patch_spec.update(
                loadBalancerClass=None,
                loadBalancerSourceRanges=None,
                allocateLoadBalancerNodePorts=None,
                healthCheckNodePort=None,
            )
        return {"spec": patch_spec}

    patched = patch_on_conflict(
        lambda: raw(core.read_namespaced_service, name, namespace, action=f"read Service {key}"),
        lambda patch: core.patch_namespaced_service(
            name, namespace, patch, _content_type=MERGE_PATCH, _preload_content=False
        ),
        build,
        f"switch Service {key} to {service_type}",
    )
    before = patched.before["spec"].get("type", "ClusterIP")
    ports = _node_ports(patched.before)
    if patched.after is None:
        return ServiceSwitch(key, before, service_type, ports, before != service_type, dry_run)
    if _node_ports(patched.after) != ports:
        raise StepFailedError(
            f"Service {key} changed node ports from {ports} to {_node_ports(patched.after)} "
            f"when switched to {service_type}; update the load balancer targets."
        )
    log.info("switched Service %s from %s to %s", key, before, service_type)
    return ServiceSwitch(key, before, service_type, ports, True)
