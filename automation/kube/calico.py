"""Calico's encapsulation switch (seed 002): IPIP off, then roll calico-node.

Native routing needs a cloud route per node; the runner only calls these after every
node reports ``NetworkUnavailable=False``/``RouteCreated`` and the route tables were
verified. Both actions are idempotent: the pool is patched only when its mode
differs, and the DaemonSet restart is keyed by a token so a resumed run does not
roll calico-node a second time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from kubernetes import client

from automation.core.errors import from_api_exception
from automation.core.waiting import Pending

GROUP, VERSION, PLURAL = "crd.projectcalico.org", "v1", "ippools"
RESTART_ANNOTATION = "kubeshift.io/restarted-for"

IpipMode = Literal["Always", "CrossSubnet", "Never"]


@dataclass(frozen=True)
class CalicoChange:
    changed: bool
    message: str


def set_ipip_mode(
    custom: client.CustomObjectsApi, pool: str, mode: IpipMode, *, dry_run: bool = False
) -> CalicoChange:
    """Set ``spec.ipipMode`` of IPPool ``pool`` (no-op when it already has ``mode``)."""
    try:
        current: dict[str, Any] = custom.get_cluster_custom_object(  # type: ignore[assignment]
            GROUP, VERSION, PLURAL, pool
        )
    except client.ApiException as exc:
        raise from_api_exception(exc, f"read Calico IPPool {pool}") from exc
    before = (current.get("spec") or {}).get("ipipMode", "Never")
    if before == mode:
        return CalicoChange(False, f"IPPool {pool} already has ipipMode={mode}.")
    if dry_run:
        return CalicoChange(False, f"dry-run: would set IPPool {pool} ipipMode {before} → {mode}.")
    try:
        custom.patch_cluster_custom_object(
            GROUP, VERSION, PLURAL, pool, {"spec": {"ipipMode": mode}}
        )
    except client.ApiException as exc:
        raise from_api_exception(exc, f"patch Calico IPPool {pool}") from exc
    return CalicoChange(True, f"IPPool {pool} ipipMode {before} → {mode}.")


def restart_daemonset(
    apps: client.AppsV1Api, namespace: str, name: str, token: str, *, dry_run: bool = False
) -> CalicoChange:
    """Roll DaemonSet ``namespace/name`` once per ``token`` (a pod-template annotation)."""
    what = f"DaemonSet {namespace}/{name}"
    try:
        ds: Any = apps.read_namespaced_daemon_set(name, namespace)
    except client.ApiException as exc:
        raise from_api_exception(exc, f"read {what}") from exc
    annotations = ds.spec.template.metadata.annotations or {}
    if annotations.get(RESTART_ANNOTATION) == token:
        return CalicoChange(False, f"{what} was already rolled for {token}.")
    if dry_run:
        return CalicoChange(False, f"dry-run: would roll {what} for {token}.")
    patch = {"spec": {"template": {"metadata": {"annotations": {RESTART_ANNOTATION: token}}}}}
    try:
        apps.patch_namespaced_daemon_set(name, namespace, patch)
    except client.ApiException as exc:
        raise from_api_exception(exc, f"roll {what}") from exc
    return CalicoChange(True, f"{what} rolling for {token}.")


def daemonset_rolled(apps: client.AppsV1Api, namespace: str, name: str) -> Pending:
    """Gate: the DaemonSet's latest template is scheduled and available on every node."""
    try:
        ds: Any = apps.read_namespaced_daemon_set(name, namespace)
    except client.ApiException as exc:
        raise from_api_exception(exc, f"read DaemonSet {namespace}/{name}") from exc
    status = ds.status
    desired = status.desired_number_scheduled or 0
    updated = status.updated_number_scheduled or 0
    available = status.number_available or 0
    items = []
    if desired == 0:
        items.append(f"{namespace}/{name}: scheduled on no node yet")
    if (status.observed_generation or 0) < (ds.metadata.generation or 0):
        items.append(f"{namespace}/{name}: controller has not seen the new template")
    if updated < desired:
        items.append(f"{namespace}/{name}: {desired - updated} pod(s) on the old template")
    if available < desired:
        items.append(f"{namespace}/{name}: {desired - available} pod(s) not available")
    return Pending.of(items, f"{updated}/{desired} updated, {available}/{desired} available")
