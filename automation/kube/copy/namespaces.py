"""The namespaces a copy writes into, created on the mirror with the primary's labels.

A namespace missing on the primary is the caller's mistake, and one terminating on the
mirror is refused until it is gone; kubectl's and kubeshift's annotations and the
``kubernetes.io/metadata.name`` label are not carried over. A namespace the copy creates
says so (:data:`CREATED_BY_COPY`), so taking the copy back deletes it whole and leaves
the mirror's own namespaces standing.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kubernetes import client

from automation.core.errors import KubeshiftError, StepFailedError, UserError
from automation.kube.copy.api import APPLY_PATCH, call_api, not_found
from automation.kube.copy.kinds import Obj
from automation.kube.copy.options import FIELD_MANAGER

log = logging.getLogger("kubeshift.copy")

CREATED_BY_COPY = "kubeshift.io/created-by-copy"
"""The annotation on a namespace the copy created on the mirror."""


def _namespace_manifest(source: Mapping[str, Any]) -> Obj:
    meta = source.get("metadata") or {}
    labels = {
        k: v for k, v in (meta.get("labels") or {}).items() if k != "kubernetes.io/metadata.name"
    }
    annotations = {
        k: v
        for k, v in (meta.get("annotations") or {}).items()
        if not k.startswith(("kubectl.kubernetes.io/", "kubeshift.io/"))
    }
    annotations[CREATED_BY_COPY] = "true"
    out: Obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": meta["name"]}}
    if labels:
        out["metadata"]["labels"] = labels
    out["metadata"]["annotations"] = annotations
    return out


def created_by_copy(namespace: Obj) -> bool:
    """The copy created this namespace on the mirror (it carries :data:`CREATED_BY_COPY`)."""
    annotations = (namespace.get("metadata") or {}).get("annotations") or {}
    return annotations.get(CREATED_BY_COPY) == "true"


def read_namespace(core: Any, name: str, where: str) -> Obj | None:
    try:
        return call_api(core.read_namespace, name, action=f"read namespace {name} on the {where}")
    except KubeshiftError as exc:
        if not_found(exc):
            return None
        raise


def ensure_namespace(
    primary: Any, mirror: Any, name: str, *, manager: str = FIELD_MANAGER, dry_run: bool = False
) -> bool:
    """Create namespace ``name`` on the mirror (with the primary's labels) if missing.

    Returns True when it was (or, in a dry run, would be) created. A namespace missing
    on the primary, or terminating on the mirror, is a ``UserError``/``StepFailedError``.
    """
    source = read_namespace(client.CoreV1Api(primary.api_client), name, "primary")
    if source is None:
        raise UserError(f"Namespace {name} does not exist on the primary cluster; check the list.")
    mirror_core = client.CoreV1Api(mirror.api_client)
    existing = read_namespace(mirror_core, name, "mirror")
    if existing is not None:
        if (existing.get("status") or {}).get("phase") == "Terminating":
            raise StepFailedError(
                f"Namespace {name} is terminating on the mirror; wait until it is gone and "
                "run the copy again."
            )
        return False
    if not dry_run:
        call_api(
            mirror_core.patch_namespace,
            name,
            _namespace_manifest(source),
            action=f"create namespace {name} on the mirror",
            field_manager=manager,
            force=True,
            _content_type=APPLY_PATCH,
        )
        log.info("created namespace %s on the mirror", name)
    return True
