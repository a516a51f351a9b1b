"""Workloads that keep data in PersistentVolumeClaims, which the mirror copy cannot take.

The copy moves objects, not volumes (seed 000: volumes were out of scope, and services
that had them accepted downtime). A workload that mounts a claim, or a StatefulSet with
claim templates, would start on the mirror with empty volumes, so it is found before
any traffic moves and the stack says what to do (``runtime.mirror.stateful``):

- ``refuse`` (the default): the copy stops, naming every such workload;
- ``leave-on-primary``: they are not copied, their Services' records stay on the
  primary, and they accept their downtime during the CNI swap;
- ``copy-without-data``: they are copied and start empty on the mirror.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

StatefulChoice = Literal["refuse", "leave-on-primary", "copy-without-data"]
STATEFUL_KEY = "kubeshift:runtime.mirror.stateful"


def dig(obj: Mapping[str, Any], path: Sequence[str]) -> Any:
    """The value at ``path`` in nested mappings, or None where the path breaks off."""
    cur: Any = obj
    for key in path:
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(key)
    return cur


def claims(kind: str, obj: Mapping[str, Any], pod_spec: Sequence[str] | None) -> tuple[str, ...]:
    """Names of the claims ``obj`` keeps data in: mounted claims and claim templates."""
    found: list[str] = []
    spec = dig(obj, pod_spec) if pod_spec is not None else None
    for volume in (spec or {}).get("volumes") or []:
        claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
        if claim:
            found.append(str(claim))
    if kind == "StatefulSet":
        for template in dig(obj, ("spec", "volumeClaimTemplates")) or []:
            name = (template.get("metadata") or {}).get("name")
            if name:
                found.append(str(name))
    return tuple(dict.fromkeys(found))


@dataclass(frozen=True)
class StatefulWorkload:
    """One workload with claims, and the labels of the pods it makes."""

    kind: str
    namespace: str
    name: str
    claims: tuple[str, ...]
    pod_labels: Mapping[str, str]

    @property
    def label(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name} ({', '.join(self.claims)})"


def refusal(workloads: Sequence[StatefulWorkload]) -> str:
    """The one sentence the copy stops with."""
    listed = "; ".join(w.label for w in workloads)
    return (
        f"{len(workloads)} workload(s) keep data in PersistentVolumeClaims the copy cannot "
        f"take, so the mirror would start them empty: {listed}; say how to treat them in "
        f"{STATEFUL_KEY}: leave-on-primary (not copied, their records stay, downtime during "
        "the CNI swap) or copy-without-data."
    )


def served_by(
    workloads: Iterable[StatefulWorkload], services: Iterable[Mapping[str, Any]]
) -> set[str]:
    """``namespace/name`` of the Services that select pods of ``workloads``."""
    keys = set()
    pods = [(w.namespace, w.pod_labels) for w in workloads]
    for svc in services:
        meta = svc.get("metadata") or {}
        selector = (svc.get("spec") or {}).get("selector") or {}
        if not selector:
            continue
        for namespace, labels in pods:
            if meta.get("namespace") == namespace and all(
                labels.get(k) == v for k, v in selector.items()
            ):
                keys.add(f"{namespace}/{meta.get('name')}")
    return keys
