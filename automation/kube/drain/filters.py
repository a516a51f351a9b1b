"""Pure per-pod drain verdicts with kubectl's options and order of filters.

kubectl's ``pkg/drain`` runs, in order: already-deleted, DaemonSet, mirror pod, local
storage (emptyDir), unreplicated. A filter either lets the pod through, skips it with a
reason, or refuses the drain of its node (kubectl's "cannot delete … use --force").
Here the same decisions are data: ``Verdict`` + reason, computed on the pod's JSON.
"""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


class DrainOptions(BaseModel):
    """kubectl-equivalent drain options (same names, same defaults where safe).

    kubectl's own spellings (``delete-emptydir-data``, ``ignore-daemonsets``…) are
    accepted too; any other key is refused.
    """

    model_config = ConfigDict(
        extra="forbid",
        alias_generator=lambda name: name.replace("_", "-"),
        populate_by_name=True,
    )

    force: bool = Field(
        default=False, description="Evict pods without a controller (kubectl --force)."
    )
    ignore_daemonsets: bool = Field(
        default=True,
        description="Skip DaemonSet pods; when False they refuse the drain "
        "(kubectl --ignore-daemonsets).",
    )
    delete_emptydir_data: bool = Field(
        default=False,
        description="Evict pods with emptyDir volumes, losing their data "
        "(kubectl --delete-emptydir-data).",
    )
    pod_selector: dict[str, str] = Field(
        default_factory=dict, description="Only consider pods with these labels."
    )
    skip_wait_for_delete_timeout: int = Field(
        default=0,
        ge=0,
        description="Skip pods terminating for longer than this many seconds "
        "(kubectl --skip-wait-for-delete-timeout); 0 waits for them.",
    )
    grace_period_seconds: int | None = Field(
        default=None, description="Grace period given to evicted pods; None = pod's own."
    )


class Verdict(enum.Enum):
    EVICT = "evict"  # send an eviction and wait for the pod to go
    WAIT = "wait"  # already terminating: no eviction, just wait for it to go
    SKIP = "skip"  # leave it on the node
    REFUSE = "refuse"  # the node cannot be drained with these options


@dataclass(frozen=True)
class PodVerdict:
    namespace: str
    name: str
    uid: str
    node: str
    verdict: Verdict
    reason: str = ""
    labels: Mapping[str, str] | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def _controller(pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for ref in pod.get("metadata", {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def _finished(pod: Mapping[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") in {"Succeeded", "Failed"}


def _parse_time(value: str) -> dt.datetime:
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))


def verdict_for(
    pod: Mapping[str, Any], options: DrainOptions, now: dt.datetime | None = None
) -> tuple[Verdict, str]:
    """Decide what a drain does with ``pod``; returns the verdict and a short reason."""
    meta = pod.get("metadata") or {}
    deleted_at = meta.get("deletionTimestamp")
    if deleted_at:
        if options.skip_wait_for_delete_timeout > 0:
            now = now or dt.datetime.now(dt.UTC)
            age = (now - _parse_time(deleted_at)).total_seconds()
            if age > options.skip_wait_for_delete_timeout:
                return Verdict.SKIP, f"terminating for {age:.0f}s"
        return Verdict.WAIT, "already terminating"
    owner = _controller(pod)
    if owner is not None and owner.get("kind") == "DaemonSet":
        if options.ignore_daemonsets:
            return Verdict.SKIP, f"DaemonSet-managed ({owner.get('name')})"
        return Verdict.REFUSE, "DaemonSet-managed (set ignore_daemonsets)"
    if MIRROR_ANNOTATION in (meta.get("annotations") or {}):
        return Verdict.SKIP, "mirror (static) pod"
    volumes = (pod.get("spec") or {}).get("volumes") or []
    if (
        any("emptyDir" in v for v in volumes)
        and not _finished(pod)
        and not options.delete_emptydir_data
    ):
        return Verdict.REFUSE, "has emptyDir data (set delete_emptydir_data)"
    if owner is None and not _finished(pod):
        if options.force:
            return Verdict.EVICT, "unmanaged (forced)"
        return Verdict.REFUSE, "not managed by a controller (set force)"
    return Verdict.EVICT, ""


def plan_pods(
    pods: Iterable[Mapping[str, Any]], options: DrainOptions, now: dt.datetime | None = None
) -> list[PodVerdict]:
    """Verdicts for ``pods`` that match ``options.pod_selector``, sorted by namespace/name."""
    out: list[PodVerdict] = []
    for pod in pods:
        meta = pod.get("metadata") or {}
        labels = meta.get("labels") or {}
        if any(labels.get(k) != v for k, v in options.pod_selector.items()):
            continue
        verdict, reason = verdict_for(pod, options, now)
        out.append(
            PodVerdict(
                namespace=meta.get("namespace", ""),
                name=meta.get("name", ""),
                uid=meta.get("uid", ""),
                node=(pod.get("spec") or {}).get("nodeName", ""),
                verdict=verdict,
                reason=reason,
                labels=labels,
            )
        )
    return sorted(out, key=lambda v: (v.namespace, v.name))
