"""Tags every kubeshift resource carries, merged in one fixed order.

Order: user tags from config, then cluster tags, then the resource's own tags; later
wins. The cluster tags are what the runner (and the seed's shell loop) use to find
instances: ``KubernetesCluster=<name>`` and ``kubernetes.io/cluster/<name>=owned``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MANAGED_BY = "kubeshift"
MANAGED_BY_TAG = "managed-by"
"""The tag whose value ``MANAGED_BY`` marks what kubeshift manages."""
AUTOSCALER_TAG_PREFIX = "k8s.io/cluster-autoscaler/"
"""cluster-autoscaler's tags on a group: ``enabled`` and ``<id>`` by which its
auto-discovery takes the group, and the node-template labels and taints below."""
NODE_TEMPLATE_LABEL = f"{AUTOSCALER_TAG_PREFIX}node-template/label/"
NODE_TEMPLATE_TAINT = f"{AUTOSCALER_TAG_PREFIX}node-template/taint/"
"""Prefixes of the Auto Scaling group tags that say which labels and taints its nodes
carry (cluster-autoscaler reads them; kops writes them from an instance group's spec)."""


OWN_TAG_PREFIX = "kubeshift.io/"
LEGACY_CLUSTER_TAG = "KubernetesCluster"
"""The cluster tag's legacy form, which kops and kubeshift still write beside
``kubernetes.io/cluster/<id>`` (a Terraform module may not)."""
MASTER_ROLE_TAG = "k8s.io/role/master"
"""kops's role tag on a member's groups, instances, volumes and interfaces."""
LEGACY_TAGS = (LEGACY_CLUSTER_TAG, MASTER_ROLE_TAG)


def is_own_tag(key: str) -> bool:
    """A tag only kubeshift gives (its marker, its ``kubeshift.io/`` tags and the
    ``node-template`` labels and taints of its own labels): another tool's cluster lacks
    them, and adding them changes nothing that runs."""
    for prefix in (NODE_TEMPLATE_LABEL, NODE_TEMPLATE_TAINT):
        key = key.removeprefix(prefix)
    return key == MANAGED_BY_TAG or key.startswith(OWN_TAG_PREFIX)


def is_autoscaler_tag(key: str) -> bool:
    """One of cluster-autoscaler's tags (:data:`AUTOSCALER_TAG_PREFIX`)."""
    return key.startswith(AUTOSCALER_TAG_PREFIX)


def cluster_tags(cluster: str) -> dict[str, str]:
    """Tags that mark a resource as part of ``cluster``."""
    return {
        LEGACY_CLUSTER_TAG: cluster,
        f"kubernetes.io/cluster/{cluster}": "owned",
        MANAGED_BY_TAG: MANAGED_BY,
    }


def without_cluster_tags(tags: Mapping[str, str], cluster: str) -> dict[str, str]:
    """``tags`` less the keys that mark a resource as ``cluster``'s (``managed-by`` stays)."""
    marks = set(cluster_tags(cluster)) - {MANAGED_BY_TAG}
    return {k: v for k, v in tags.items() if k not in marks}


def merge_tags(*layers: Mapping[str, str] | None) -> dict[str, str]:
    """Merge tag layers left to right (later layers win)."""
    merged: dict[str, str] = {}
    for layer in layers:
        merged.update(layer or {})
    return merged


def node_template(tags: Mapping[str, str]) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    """The labels and (key, value, effect) taints a group's ``node-template`` tags say
    its nodes carry, taints in key order."""
    labels = {
        k.removeprefix(NODE_TEMPLATE_LABEL): v
        for k, v in tags.items()
        if k.startswith(NODE_TEMPLATE_LABEL)
    }
    taints = []
    for key, raw in sorted(tags.items()):
        if key.startswith(NODE_TEMPLATE_TAINT):
            value, _, effect = raw.rpartition(":")
            taints.append((key.removeprefix(NODE_TEMPLATE_TAINT), value, effect))
    return labels, taints


def block_key(block: Any) -> Any:
    """The key of one of an Auto Scaling group's tag blocks (a dict or the SDK's args)."""
    return block.get("key") if isinstance(block, Mapping) else getattr(block, "key", None)
