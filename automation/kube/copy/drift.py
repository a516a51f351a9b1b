"""Drift: what changed on the primary since the mirror got its copy (the freeze gate).

The copies' ``kubeshift.io/source-*`` stamps say what was copied; the primary's objects
are planned again and their digests compared with the stamps, so a new image, a changed
ConfigMap or a scaled Deployment on the primary while the mirror serves is caught, and
status churn is not.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubernetes import client

from automation.core.waiting import Pending
from automation.kube.copy.api import Apis, list_objects
from automation.kube.copy.namespaces import read_namespace
from automation.kube.copy.options import CopyOptions
from automation.kube.copy.plan import plan_namespace
from automation.kube.copy.transforms import (
    SOURCE_DIGEST,
    SOURCE_GENERATION,
    SOURCE_RESOURCE_VERSION,
)


@dataclass(frozen=True)
class SourceStamp:
    """What the mirror copy says about its source at copy time."""

    digest: str
    resource_version: str
    generation: str = ""


def snapshot_from_mirror(
    mirror: Any, options: CopyOptions
) -> dict[tuple[str, str, str], SourceStamp]:
    """``{(kind, namespace, name): stamp}`` of every copy kubeshift made on the mirror."""
    apis = Apis(mirror)
    found: dict[tuple[str, str, str], SourceStamp] = {}
    for namespace in options.namespaces:
        if read_namespace(client.CoreV1Api(mirror.api_client), namespace, "mirror") is None:
            continue
        for spec in options.specs:
            for obj in list_objects(apis, spec, namespace, None):
                ann = obj["metadata"].get("annotations") or {}
                # Copies never have owners; a ReplicaSet inherits its Deployment's stamps.
                if SOURCE_DIGEST in ann and not obj["metadata"].get("ownerReferences"):
                    found[(spec.kind, namespace, obj["metadata"]["name"])] = SourceStamp(
                        ann[SOURCE_DIGEST],
                        ann.get(SOURCE_RESOURCE_VERSION, ""),
                        ann.get(SOURCE_GENERATION, ""),
                    )
    return found


def find_drift(
    primary: Any,
    options: CopyOptions,
    snapshot: Mapping[tuple[str, str, str], SourceStamp],
) -> Pending:
    """Objects on the primary that differ from what was copied (changed, new, deleted).

    Compares digests of what *would be copied* now with the copies' stamps, so status
    churn on the primary (a load balancer's address, pod restarts) is not drift, while
    a new image, a changed ConfigMap or a scaled Deployment is.
    """
    apis = Apis(primary)
    items: list[str] = []
    seen: set[tuple[str, str, str]] = set()
    gone: set[str] = set()
    for namespace in options.namespaces:
        if read_namespace(client.CoreV1Api(primary.api_client), namespace, "primary") is None:
            items.append(f"namespace {namespace}: deleted on the primary")
            gone.add(namespace)
            continue
        for p in plan_namespace(apis, options, namespace):
            if p.skip:
                continue
            key = (p.spec.kind, namespace, p.name)
            seen.add(key)
            stamp = snapshot.get(key)
            meta = p.source["metadata"]
            what = f"{p.spec.kind} {namespace}/{p.name}"
            if stamp is None:
                items.append(f"{what}: new on the primary")
            elif stamp.digest != p.digest:
                if stamp.generation and meta.get("generation") is not None:
                    change = f"generation {stamp.generation} -> {meta['generation']}"
                else:
                    version = meta.get("resourceVersion")
                    change = f"resourceVersion {stamp.resource_version} -> {version}"
                items.append(f"{what}: changed on the primary ({change})")
    for kind, namespace, name in sorted(set(snapshot) - seen):
        if namespace in options.namespaces and namespace not in gone:
            items.append(f"{kind} {namespace}/{name}: deleted on the primary")
    detail = (
        f"{len(snapshot)} object(s) copied; the primary changed since the copy — run the "
        "copy again (deploys must stay frozen while the mirror serves)"
        if items
        else f"{len(snapshot)} object(s) match the primary"
    )
    return Pending.of(items, detail)


def drift_since_copy(primary: Any, mirror: Any, options: CopyOptions) -> Pending:
    """The freeze gate: nothing changed on the primary since the mirror got its copy."""
    snapshot = snapshot_from_mirror(mirror, options)
    if not snapshot:
        return Pending.of(
            [f"namespace {ns}: no kubeshift copy on the mirror yet" for ns in options.namespaces],
            "run the copy first",
        )
    return find_drift(primary, options, snapshot)
