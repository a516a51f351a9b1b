"""Tags every kubeshift resource carries, merged in one fixed order.

Order: user tags from config, then cluster tags, then the resource's own tags; later
wins. The cluster tags are what the runner (and the seed's shell loop) use to find
instances: ``KubernetesCluster=<name>`` and ``kubernetes.io/cluster/<name>=owned``.
"""

from __future__ import annotations

from collections.abc import Mapping

MANAGED_BY = "kubeshift"


def cluster_tags(cluster: str) -> dict[str, str]:
    """Tags that mark a resource as part of ``cluster``."""
    return {
        "KubernetesCluster": cluster,
        f"kubernetes.io/cluster/{cluster}": "owned",
        "managed-by": MANAGED_BY,
    }


def without_cluster_tags(tags: Mapping[str, str], cluster: str) -> dict[str, str]:
    """``tags`` less the keys that mark a resource as ``cluster``'s (``managed-by`` stays)."""
    marks = set(cluster_tags(cluster)) - {"managed-by"}
    return {k: v for k, v in tags.items() if k not in marks}


def merge_tags(*layers: Mapping[str, str] | None) -> dict[str, str]:
    """Merge tag layers left to right (later layers win)."""
    merged: dict[str, str] = {}
    for layer in layers:
        merged.update(layer or {})
    return merged
