"""The sandbox's world: a live cluster built by another tool, for ``kubeshift adopt``."""

from typing import Literal

BuiltBy = Literal["kops", "kubeshift"]
"""Who built the sandbox's live cluster: kops (boto3 calls, kops's names, no Pulumi
state) or kubeshift (baseline through the engine, the stack's state kept)."""
