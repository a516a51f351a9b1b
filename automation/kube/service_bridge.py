"""The ingress Service's bridge: any node forwards its node ports while the pods move.

Seed 001 put the ingress Service on ``NodePort`` while the old target groups (old nodes)
and the new ones (new nodes) both send it traffic, and back to ``LoadBalancer`` once its
pods run on the new nodes. Two things a plain type switch loses, and this module keeps:

- **The external traffic policy.** With ``Local`` (common behind a network load balancer:
  it keeps the client's address) a node forwards node-port traffic only to a ready pod
  of its own, and the load balancer's health check marks every other node unhealthy;
  as the pods move to new nodes, the old target groups would find no healthy target.
  For the bridge's duration the policy is ``Cluster`` (any node forwards to any pod);
  it is ``Local`` again when the bridge closes, with the same health-check node port.
- **What only a LoadBalancer Service carries** (``loadBalancerClass``,
  ``loadBalancerSourceRanges``, ``allocateLoadBalancerNodePorts``,
  ``healthCheckNodePort``): the API server refuses them on a NodePort Service, so they
  are cleared, and given back on the way back.

What the Service had is saved in its own annotation (:data:`SAVED`) when the bridge
opens, so closing it restores exactly that, from any process, once; both are idempotent.

A Service whose load balancer a controller owns (a ``loadBalancerClass``, or an address
in its status: the AWS cloud provider's, the AWS Load Balancer Controller's) keeps its
type: it already has node ports to bridge through, and the controller would delete its
load balancer on a type change and make a new one under a new name when switched back.
Only its traffic policy changes for the bridge.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kubernetes import client

from automation.core.errors import StepFailedError
from automation.kube.clients import MERGE_PATCH, patch_on_conflict, raw

log = logging.getLogger("kubeshift.ingress")

SAVED = "kubeshift.io/ingress-bridge"
"""The annotation holding the fields the bridge changed, as they were (JSON)."""
SWITCHABLE = ("LoadBalancer", "NodePort")
LOAD_BALANCER_ONLY = (
    "loadBalancerClass",
    "loadBalancerSourceRanges",
    "allocateLoadBalancerNodePorts",
    "healthCheckNodePort",
)
KEPT_FIELDS = ("type", "externalTrafficPolicy", *LOAD_BALANCER_ONLY)


@dataclass(frozen=True)
class BridgeChange:
    """What opening or closing the bridge did to one Service."""

    service: str
    before: dict[str, Any]
    after: dict[str, Any]
    node_ports: dict[str, int]  # "port/protocol" -> nodePort, identical before and after
    dry_run: bool = False

    @property
    def changed(self) -> bool:
        return self.before != self.after

    @property
    def message(self) -> str:
        ports = ", ".join(f"{k}→{v}" for k, v in sorted(self.node_ports.items()))
        if not self.changed:
            return f"Service {self.service} is already as wanted (node ports {ports})."
        verb = "would change" if self.dry_run else "changed"
        moved = [
            f"{name} {_shown(self.before.get(name))} → {_shown(self.after.get(name))}"
            for name in KEPT_FIELDS
            if self.before.get(name) != self.after.get(name)
        ]
        return f"{verb} Service {self.service}: {'; '.join(moved)}; node ports {ports} kept."


def _shown(value: Any) -> str:
    return "unset" if value is None else str(value)


def _fields(svc: Mapping[str, Any]) -> dict[str, Any]:
    spec = svc.get("spec") or {}
    fields = {name: spec.get(name) for name in KEPT_FIELDS}
    fields["type"] = fields["type"] or "ClusterIP"
    return fields


def _node_ports(svc: Mapping[str, Any]) -> dict[str, int]:
    return {
        f"{p.get('port')}/{p.get('protocol', 'TCP')}": int(p["nodePort"])
        for p in (svc.get("spec") or {}).get("ports") or []
        if p.get("nodePort")
    }


def controller_owned(svc: Mapping[str, Any]) -> bool:
    """A LoadBalancer Service whose load balancer a controller provisioned or claims."""
    spec, status = svc.get("spec") or {}, svc.get("status") or {}
    if spec.get("type") != "LoadBalancer":
        return False
    return bool(spec.get("loadBalancerClass") or (status.get("loadBalancer") or {}).get("ingress"))


def saved_fields(svc: Mapping[str, Any], key: str) -> dict[str, Any] | None:
    """The fields the open bridge saved on ``svc``; None when no bridge is open."""
    text = ((svc.get("metadata") or {}).get("annotations") or {}).get(SAVED)
    if text is None:
        return None
    try:
        saved = json.loads(text)
    except ValueError:
        saved = None
    if not isinstance(saved, dict) or saved.get("type") not in SWITCHABLE:
        raise StepFailedError(
            f"Service {key}'s annotation {SAVED} is not what kubeshift saved there; "
            "set the Service's fields by hand and remove the annotation."
        )
    return {name: saved.get(name) for name in KEPT_FIELDS}


def _opened(svc: Mapping[str, Any], key: str) -> dict[str, Any] | None:
    """The patch that opens the bridge on ``svc`` (None: already open)."""
    fields = _fields(svc)
    if fields["type"] not in SWITCHABLE:
        raise StepFailedError(
            f"Service {key} is {fields['type']}; only LoadBalancer and NodePort can bridge."
        )
    if saved_fields(svc, key) is not None:
        return None
    spec: dict[str, Any] = {"ports": svc["spec"].get("ports"), "externalTrafficPolicy": "Cluster"}
    if fields["type"] == "LoadBalancer" and not controller_owned(svc):
        spec.update(type="NodePort", **dict.fromkeys(LOAD_BALANCER_ONLY))
    elif fields["type"] == "LoadBalancer":
        spec["healthCheckNodePort"] = None  # only a Local Service has one
    annotations = {SAVED: json.dumps(fields, sort_keys=True)}
    return {"metadata": {"annotations": annotations}, "spec": spec}


def _closed(svc: Mapping[str, Any], key: str) -> dict[str, Any] | None:
    """The patch that gives ``svc`` back what the bridge saved (None: nothing to do).

    A Service with no saved fields (bridged by a kubeshift that kept none) goes back to
    LoadBalancer, as it went to NodePort from there."""
    saved = saved_fields(svc, key)
    if saved is None:
        if _fields(svc)["type"] == "LoadBalancer":
            return None
        return {"spec": {"type": "LoadBalancer", "ports": svc["spec"].get("ports")}}
    spec = {"ports": svc["spec"].get("ports"), **saved}
    if saved["type"] != "LoadBalancer":
        spec.update(dict.fromkeys(LOAD_BALANCER_ONLY))
    if controller_owned(svc):
        spec.pop("loadBalancerClass")  # immutable on a LoadBalancer Service, and unchanged
    return {"metadata": {"annotations": {SAVED: None}}, "spec": spec}


def _change(
    core: client.CoreV1Api,
    namespace: str,
    name: str,
    build: Callable[[Mapping[str, Any], str], dict[str, Any] | None],
    done: str,
    *,
    dry_run: bool,
) -> BridgeChange:
    key = f"{namespace}/{name}"
    patched = patch_on_conflict(
        lambda: raw(core.read_namespaced_service, name, namespace, action=f"read Service {key}"),
        lambda patch: core.patch_namespaced_service(
            name, namespace, patch, _content_type=MERGE_PATCH, _preload_content=False
        ),
        lambda svc: None if dry_run else build(svc, key),
        f"change Service {key} (bridge {done})",
    )
    before, ports = _fields(patched.before), _node_ports(patched.before)
    if dry_run:
        wanted = build(patched.before, key)
        after = {**before, **(wanted or {}).get("spec", {})}
        return BridgeChange(key, before, {n: after.get(n) for n in KEPT_FIELDS}, ports, True)
    if patched.after is None:
        return BridgeChange(key, before, before, ports)
    if _node_ports(patched.after) != ports:
        raise StepFailedError(
            f"Service {key} changed node ports from {ports} to {_node_ports(patched.after)} "
            f"when its bridge was {done}; update the load balancer targets."
        )
    change = BridgeChange(key, before, _fields(patched.after), ports)
    log.info("%s", change.message)
    return change


def open_bridge(
    core: client.CoreV1Api, namespace: str, name: str, *, dry_run: bool = False
) -> BridgeChange:
    """Let every node forward the Service's node ports (NodePort unless a controller owns
    its load balancer; ``Cluster`` traffic policy), saving what it had. Idempotent."""
    return _change(core, namespace, name, _opened, "opened", dry_run=dry_run)


def close_bridge(
    core: client.CoreV1Api, namespace: str, name: str, *, dry_run: bool = False
) -> BridgeChange:
    """Give the Service back every field the bridge changed (type, traffic policy, health
    check node port, load balancer fields), node ports unchanged. Idempotent."""
    return _change(core, namespace, name, _closed, "closed", dry_run=dry_run)
