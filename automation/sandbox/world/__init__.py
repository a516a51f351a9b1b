"""The sandbox's world: a live cluster built by another tool, for ``kubeshift adopt``."""

from typing import Literal

from components.contract.cluster_models import ClusterConfig

BuiltBy = Literal["kops", "kubeshift", "terraform-modules"]
"""Who built the sandbox's live cluster: kops (boto3 calls, kops's names, no Pulumi
state), kubeshift (baseline through the engine, the stack's state kept) or seed 001's
Terraform modules (boto3 calls, the modules' names, Terraform's state written)."""


def cluster_tag_id(cluster: ClusterConfig, built_by: BuiltBy) -> str:
    """The ID the world's cluster tag carries (``kubernetes.io/cluster/<ID>``): the stack's
    (``cluster_id``, kops's name for it), but the modules tag theirs with its name."""
    return cluster.name if built_by == "terraform-modules" else cluster.tag_id
