"""The live cluster's Calico for an overlay-switch stack: the IPPool on IPIP.

Seed 002's cluster ran Calico with IPIP encapsulation over its pod CIDR. The sandbox
gives its cluster the same objects the overlay-switch steps read and change: Calico's
``IPPool`` CustomResourceDefinition (served by the real apiserver) and the pool itself,
``ipipMode: Always`` over ``kubeshift:migration.overlay.pod_cidr``. The calico-node
DaemonSet is seeded with the workloads (:mod:`automation.sandbox.workloads`).
"""

from __future__ import annotations

from typing import Any

from kubernetes import client

from automation.core.waiting import DONE, Pending, wait_until
from automation.kube.calico import GROUP, PLURAL, VERSION
from automation.kube.clients import KubeClients
from automation.kube.manifests import ApplyReport, apply_manifest

IPPOOL_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"{PLURAL}.{GROUP}"},
    "spec": {
        "group": GROUP,
        "scope": "Cluster",
        "names": {"plural": PLURAL, "singular": "ippool", "kind": "IPPool"},
        "versions": [
            {
                "name": VERSION,
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                    }
                },
            }
        ],
    },
}


def ip_pool(name: str, cidr: str, ipip_mode: str = "Always") -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "IPPool",
        "metadata": {"name": name},
        "spec": {"cidr": cidr, "ipipMode": ipip_mode, "natOutgoing": True},
    }


def wait_served(custom: client.CustomObjectsApi, *, timeout: float = 30.0) -> None:
    """Until the apiserver serves IPPools (a new CRD takes a moment)."""

    def served() -> Pending:
        try:
            custom.list_cluster_custom_object(GROUP, VERSION, PLURAL)
        except client.ApiException:
            return Pending.of([f"{PLURAL}.{GROUP} not served yet"])
        return DONE

    wait_until(f"the {PLURAL}.{GROUP} CRD to be served", served, timeout=timeout, interval=0.2)


def seed_ip_pool(kube: KubeClients, name: str, cidr: str) -> ApplyReport:
    """The CRD, then the pool on IPIP, leaving a pool that exists as it is (idempotent:
    a repeated ``sandbox up`` must not switch IPIP back on mid-migration)."""
    crd = apply_manifest(kube, [IPPOOL_CRD])
    custom = client.CustomObjectsApi(kube.api_client)
    wait_served(custom)
    try:
        custom.get_cluster_custom_object(GROUP, VERSION, PLURAL, name)
        return crd
    except client.ApiException as exc:
        if exc.status != 404:
            raise
    return apply_manifest(kube, [ip_pool(name, cidr)])
