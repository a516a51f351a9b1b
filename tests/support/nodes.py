"""Node pools shaped like an AWS cluster's, for tests that move workloads between them.

Each node carries what kubeshift reads from real EKS/kops nodes: zone, VPC id, ASG name
and instance type labels, an ``aws:///<az>/i-…`` providerID and an ``ip-…`` name.

Two kinds of node:

* **managed** - labelled ``kwok.x-k8s.io/managed=true``; kwok plays their kubelet:
  marks them Ready, renews their leases and runs their pods. kwok also writes
  ``NetworkUnavailable=False/RouteCreated`` on every node it manages.
* **unmanaged** - no kubelet at all; this module posts their conditions through the
  status subresource (so route-readiness tests control ``NetworkUnavailable``) and
  renews their node leases from a background thread so the node-lifecycle controller
  keeps them Ready, like a kubelet would. Their pods are scheduled but never run.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import itertools
import random
import secrets
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kubernetes.client import (
    ApiClient,
    CoordinationV1Api,
    CoreV1Api,
    V1Lease,
    V1LeaseSpec,
    V1Node,
    V1NodeSpec,
    V1ObjectMeta,
    V1OwnerReference,
    V1Taint,
)
from kubernetes.client.exceptions import ApiException

from automation.sandbox.kwok import MANAGED_LABEL
from tests.support.kubeapi import STRATEGIC_MERGE

ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
VPC_LABEL = "kubeshift.io/vpc-id"
ASG_LABEL = "kubeshift.io/asg"
POOL_LABEL = "kubeshift.io/pool"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
LEASE_NAMESPACE = "kube-node-lease"

_serial = itertools.count(1)
_octets = random.Random(secrets.randbits(32))


def unique_name(prefix: str) -> str:
    """``<prefix>-<6 hex>``: distinct across the tests sharing a session cluster."""
    return f"{prefix}-{secrets.token_hex(3)}"


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass(frozen=True)
class Condition:
    """A node condition as the kubelet (or a network plugin) posts it."""

    type: str
    status: str
    reason: str
    message: str = ""

    def to_dict(self, now: dt.datetime) -> dict[str, str]:
        stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
        return {
            "type": self.type, "status": self.status, "reason": self.reason,
            "message": self.message, "lastHeartbeatTime": stamp, "lastTransitionTime": stamp,
        }  # fmt: skip


READY = Condition("Ready", "True", "KubeletReady", "kubelet is posting ready status")
NOT_READY = Condition("Ready", "False", "KubeletNotReady", "container runtime is down")
ROUTE_CREATED = Condition("NetworkUnavailable", "False", "RouteCreated", "route created")
NO_ROUTE = Condition("NetworkUnavailable", "True", "NoRouteCreated", "route not yet created")
_PRESSURE_FREE = (
    Condition("MemoryPressure", "False", "KubeletHasSufficientMemory"),
    Condition("DiskPressure", "False", "KubeletHasNoDiskPressure"),
    Condition("PIDPressure", "False", "KubeletHasSufficientPID"),
)


@dataclass(frozen=True)
class NodePoolSpec:
    """What a pool looks like; ``name`` gets a unique suffix when the pool is created."""

    name: str
    count: int = 3
    zone: str = "us-east-1a"
    vpc_id: str = "vpc-0a1b2c3d4e5f60718"
    asg: str | None = None  # default: the pool's unique name
    instance_type: str = "m5.large"
    managed: bool = True  # kwok plays kubelet; False => conditions posted by this module
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[V1Taint, ...] = ()
    capacity: Mapping[str, str] = field(
        default_factory=lambda: {"cpu": "4", "memory": "16Gi", "pods": "110"}
    )
    # unmanaged nodes only: conditions posted after creation
    ready: bool = True
    network: Condition | None = ROUTE_CREATED


@dataclass(frozen=True)
class NodePool:
    """A created pool: its unique name, ASG and node names."""

    name: str
    asg: str
    zone: str
    vpc_id: str
    managed: bool
    node_names: tuple[str, ...]

    @property
    def selector(self) -> str:
        """Label selector matching exactly this pool's nodes."""
        return f"{POOL_LABEL}={self.name}"


def _region(zone: str) -> str:
    return zone[:-1] if zone[-1].isalpha() else zone


def _private_ip() -> str:
    serial = next(_serial)
    return f"10.{_octets.randrange(0, 256)}.{(serial // 250) % 256}.{serial % 250 + 4}"


class NodePools:
    """Creates node pools in one cluster and deletes everything it created on cleanup."""

    def __init__(self, client: ApiClient, *, heartbeat_interval: float = 10.0) -> None:
        self._core = CoreV1Api(client)
        self._leases = CoordinationV1Api(client)
        self._pools: list[NodePool] = []
        self._unmanaged: set[str] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._interval = heartbeat_interval
        self._thread: threading.Thread | None = None

    # -- pools ---------------------------------------------------------------------
    def create(self, spec: NodePoolSpec) -> NodePool:
        """Create ``spec.count`` nodes; unmanaged nodes get their conditions posted."""
        name = unique_name(spec.name)
        asg = spec.asg or name
        names: list[str] = []
        for _ in range(spec.count):
            node = self._node(spec, name, asg)
            self._core.create_node(node)
            names.append(node.metadata.name)
            if not spec.managed:
                self.post_conditions(
                    node.metadata.name,
                    [READY if spec.ready else NOT_READY, *_PRESSURE_FREE]
                    + ([spec.network] if spec.network else []),
                )
                with self._lock:
                    self._unmanaged.add(node.metadata.name)
                self._renew_lease(node.metadata.name)
        pool = NodePool(name, asg, spec.zone, spec.vpc_id, spec.managed, tuple(names))
        self._pools.append(pool)
        if not spec.managed:
            self._ensure_heartbeat()
        return pool

    def delete(self, pool: NodePool) -> None:
        """Delete a pool's nodes (their pods are garbage-collected by the cluster)."""
        for node in pool.node_names:
            with self._lock:
                self._unmanaged.discard(node)
            with contextlib.suppress(ApiException):
                self._core.delete_node(node)
        if pool in self._pools:
            self._pools.remove(pool)

    def cleanup(self) -> None:
        """Delete every pool this helper created and stop the heartbeat."""
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)
        for pool in list(self._pools):
            self.delete(pool)

    @property
    def pools(self) -> tuple[NodePool, ...]:
        return tuple(self._pools)

    def _node(self, spec: NodePoolSpec, pool: str, asg: str) -> V1Node:
        ip = _private_ip()
        node_name = f"ip-{ip.replace('.', '-')}.ec2.internal"
        labels = {
            "kubernetes.io/hostname": node_name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            ZONE_LABEL: spec.zone,
            REGION_LABEL: _region(spec.zone),
            VPC_LABEL: spec.vpc_id,
            ASG_LABEL: asg,
            POOL_LABEL: pool,
            INSTANCE_TYPE_LABEL: spec.instance_type,
            **({MANAGED_LABEL: "true"} if spec.managed else {}),
            **spec.labels,
        }
        instance = "i-" + secrets.token_hex(9)[:17]
        return V1Node(
            metadata=V1ObjectMeta(name=node_name, labels=labels),
            spec=V1NodeSpec(
                provider_id=f"aws:///{spec.zone}/{instance}", taints=list(spec.taints) or None
            ),
            status={
                "addresses": [
                    {"type": "InternalIP", "address": ip},
                    {"type": "Hostname", "address": node_name},
                ],
                "capacity": dict(spec.capacity),
                "allocatable": dict(spec.capacity),
            },
        )

    # -- conditions ----------------------------------------------------------------
    def post_conditions(self, node: str, conditions: Iterable[Condition]) -> None:
        """Merge conditions into a node's status via the ``status`` subresource."""
        now = _now()
        body = {"status": {"conditions": [c.to_dict(now) for c in conditions]}}
        self._core.patch_node_status(node, body, _content_type=STRATEGIC_MERGE)

    def set_condition(self, node: str, condition: Condition) -> None:
        """Post one condition (e.g. :data:`NO_ROUTE`) on a node."""
        self.post_conditions(node, [condition])

    def condition(self, node: str, type_: str) -> Condition | None:
        """Read one condition back from the API."""
        status = self._core.read_node_status(node).status
        for cond in status.conditions or []:
            if cond.type == type_:
                return Condition(cond.type, cond.status, cond.reason or "", cond.message or "")
        return None

    # -- heartbeats for unmanaged nodes --------------------------------------------
    def stop_heartbeat(self, node: str) -> None:
        """Stop renewing a node's lease: the node-lifecycle controller will see it die."""
        with self._lock:
            self._unmanaged.discard(node)

    def _ensure_heartbeat(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._heartbeat, name="unmanaged-node-heartbeat", daemon=True
            )
            self._thread.start()

    def _heartbeat(self) -> None:
        while not self._stop.wait(self._interval):
            with self._lock:
                nodes = sorted(self._unmanaged)
            for node in nodes:
                with contextlib.suppress(ApiException):
                    self._renew_lease(node)

    def _renew_lease(self, node: str) -> None:
        now = _now()
        try:
            lease = self._leases.read_namespaced_lease(node, LEASE_NAMESPACE)
        except ApiException as exc:
            if exc.status != 404:
                raise
            owner = self._core.read_node(node).metadata
            self._leases.create_namespaced_lease(
                LEASE_NAMESPACE,
                V1Lease(
                    metadata=V1ObjectMeta(
                        name=node,
                        owner_references=[
                            V1OwnerReference(
                                api_version="v1", kind="Node", name=node, uid=owner.uid
                            )
                        ],
                    ),
                    spec=V1LeaseSpec(
                        holder_identity=node, lease_duration_seconds=40, renew_time=now
                    ),
                ),
            )
            return
        lease.spec.renew_time = now
        self._leases.replace_namespaced_lease(node, LEASE_NAMESPACE, lease)
