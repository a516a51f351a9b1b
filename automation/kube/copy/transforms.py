"""Pure transforms from a primary object to the manifest its mirror copy gets.

:func:`skip_reason` says which objects are not copied (made by a copied owner or a
controller, the cluster's own, finished Jobs); :func:`prepare` strips what the server
populates and rewrites image registries (and the hosts of image pull Secrets);
:func:`digest` and :func:`stamped` mark each copy with its ``kubeshift.io/source-*``
annotations, by which a re-run and the drift check tell what changed. Nothing here
talks to an API, and the object given is never modified.
"""

from __future__ import annotations

import base64
import copy as copylib
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from automation.kube.copy.kinds import KindSpec, Obj
from automation.kube.copy.options import RegistryRewrite, rewrite_image
from automation.kube.cronjobs import COPY_SUSPENDED, SUSPENDED_BY
from automation.kube.stateful import dig

SOURCE_DIGEST = "kubeshift.io/source-digest"
SOURCE_RESOURCE_VERSION = "kubeshift.io/source-resource-version"
SOURCE_GENERATION = "kubeshift.io/source-generation"
SOURCE_UID = "kubeshift.io/source-uid"
_OWN_ANNOTATIONS = (SOURCE_DIGEST, SOURCE_RESOURCE_VERSION, SOURCE_GENERATION, SOURCE_UID)

_KEEP_METADATA = ("name", "namespace", "labels", "annotations")
_DROP_ANNOTATIONS = ("deployment.kubernetes.io/revision", *_OWN_ANNOTATIONS)
_JOB_GENERATED_LABELS = ("controller-uid", "batch.kubernetes.io/controller-uid")


def skip_reason(spec: KindSpec, obj: Mapping[str, Any], copied_uids: Mapping[str, str]) -> str:
    """Why ``obj`` is not copied ("" = copy it).

    ``copied_uids`` maps the uid of every listed source object to ``Kind/name``: an
    object owned by one of them is recreated by its owner on the mirror.
    """
    meta = obj.get("metadata") or {}
    name = meta.get("name", "")
    if meta.get("deletionTimestamp"):
        return "being deleted on the primary"
    for ref in meta.get("ownerReferences") or []:
        owner = copied_uids.get(ref.get("uid", ""))
        if owner:
            return f"made by {owner}"
        if spec.kind == "Pod" and ref.get("controller"):
            return f"made by {ref.get('kind')}/{ref.get('name')}"
    if spec.kind == "Secret" and obj.get("type") == "kubernetes.io/service-account-token":
        return "service-account token (the mirror issues its own)"
    if spec.kind == "ConfigMap" and name == "kube-root-ca.crt":
        return "cluster CA bundle (the mirror publishes its own)"
    if spec.kind == "ServiceAccount" and name == "default":
        return "default service account (the mirror creates its own)"
    if spec.kind == "Service" and name == "kubernetes" and meta.get("namespace") == "default":
        return "the API server's own Service"
    if spec.kind == "Job" and _job_finished(obj):
        return "finished job"
    return ""


def _job_finished(job: Mapping[str, Any]) -> bool:
    status = job.get("status") or {}
    if status.get("completionTime"):
        return True
    return any(
        c.get("type") in {"Complete", "Failed"} and c.get("status") == "True"
        for c in status.get("conditions") or []
    )


def _rewrite_pod_spec(pod_spec: Obj, rewrites: Sequence[RegistryRewrite]) -> list[str]:
    changes = []
    for group in ("initContainers", "containers", "ephemeralContainers"):
        for container in pod_spec.get(group) or []:
            image = container.get("image")
            if not image:
                continue
            new = rewrite_image(image, rewrites)
            if new != image:
                container["image"] = new
                changes.append(f"{image} -> {new}")
    return changes


_PULL_SECRET_KEYS = {
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson", True),
    "kubernetes.io/dockercfg": (".dockercfg", False),
}


def rewrite_registry_host(host: str, rewrites: Sequence[RegistryRewrite]) -> str:
    """A pull secret's registry key (``registry.example.com``, ``https://index.docker.io/v1/``)
    through the same anchored rules as images; only rules on a whole host can match."""
    bare = host.split("://", 1)[-1].split("/", 1)[0]
    for rule in rewrites:
        new = rule.apply(f"{bare}/")
        if new is not None:
            return new.split("/", 1)[0]
    return host


def _rewrite_pull_secret(secret: Obj, rewrites: Sequence[RegistryRewrite]) -> list[str]:
    """Rewrite the registry hosts a ``dockerconfigjson``/``dockercfg`` Secret holds."""
    key, nested = _PULL_SECRET_KEYS.get(str(secret.get("type") or ""), ("", False))
    data = secret.get("data") or {}
    if not key or not rewrites or key not in data:
        return []
    try:
        document = json.loads(base64.b64decode(data[key]))
    except (ValueError, TypeError):
        return []  # not a config kubeshift can read: copied as it is
    auths = document.get("auths") if nested else document
    if not isinstance(auths, dict):
        return []
    changes, rewritten = [], {}
    for host, entry in auths.items():
        new = rewrite_registry_host(host, rewrites)
        if new != host:
            changes.append(f"pull secret {host} -> {new}")
        rewritten[new] = entry
    if changes:
        if nested:
            document["auths"] = rewritten
        else:
            document = rewritten
        data[key] = base64.b64encode(json.dumps(document).encode()).decode()
    return changes


def prepare(
    spec: KindSpec, obj: Mapping[str, Any], rewrites: Sequence[RegistryRewrite] = ()
) -> tuple[Obj, list[str]]:
    """The manifest to apply on the mirror, and the registry rewrites made (images, and
    the registry hosts of image pull Secrets).

    Keeps only name, namespace, labels and annotations of the metadata (drops uid,
    resourceVersion, generation, creationTimestamp, managedFields, ownerReferences,
    finalizers...), drops ``status``, and per kind: Service cluster IPs (unless headless)
    and node ports, Pod ``nodeName``, a Job's generated selector and labels, a
    ServiceAccount's token secret list. Pure: ``obj`` is not modified.
    """
    src = copylib.deepcopy(dict(obj))
    meta = src.get("metadata") or {}
    out: Obj = {
        "apiVersion": spec.api_version,
        "kind": spec.kind,
        "metadata": {k: meta[k] for k in _KEEP_METADATA if meta.get(k)},
    }
    annotations = out["metadata"].get("annotations")
    if annotations:
        kept = {k: v for k, v in annotations.items() if k not in _DROP_ANNOTATIONS}
        out["metadata"]["annotations"] = kept
        if not kept:
            del out["metadata"]["annotations"]
    out.update({k: v for k, v in src.items() if k not in {"apiVersion", "kind", "metadata"}})
    out.pop("status", None)
    images: list[str] = []  # what the registry rewrites changed, for the report
    body = out.get("spec")
    if spec.kind == "Service" and isinstance(body, dict):
        headless = body.get("clusterIP") == "None"  # a choice, not an allocation: keep it
        for key in ("healthCheckNodePort", *(() if headless else ("clusterIP", "clusterIPs"))):
            body.pop(key, None)
        for port in body.get("ports") or []:
            port.pop("nodePort", None)
    elif spec.kind == "Pod" and isinstance(body, dict):
        body.pop("nodeName", None)
    elif spec.kind == "Job" and isinstance(body, dict) and not body.get("manualSelector"):
        body.pop("selector", None)
        labels = dig(body, ("template", "metadata", "labels")) or {}
        for key in _JOB_GENERATED_LABELS:
            labels.pop(key, None)
    elif spec.kind == "ServiceAccount":
        out.pop("secrets", None)
    elif spec.kind == "Secret":
        images = _rewrite_pull_secret(out, rewrites)
    elif spec.kind == "CronJob" and isinstance(body, dict):
        # One runner per CronJob: the copy waits suspended until the hand-over
        # (automation.kube.cronjobs); the primary's own choice is read there.
        body["suspend"] = True
        out["metadata"].setdefault("annotations", {})[SUSPENDED_BY] = COPY_SUSPENDED
    elif spec.kind == "StatefulSet" and isinstance(body, dict):
        for claim in body.get("volumeClaimTemplates") or []:
            claim.pop("status", None)
    if spec.pod_spec is not None:
        pod_spec = dig(out, spec.pod_spec)
        if isinstance(pod_spec, dict):
            images = _rewrite_pod_spec(pod_spec, rewrites)
    return out, images


def digest(manifest: Mapping[str, Any]) -> str:
    """A short, stable digest of a manifest (canonical JSON, sha256)."""
    text = json.dumps(manifest, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def stamped(manifest: Obj, source: Mapping[str, Any], manifest_digest: str) -> Obj:
    """``manifest`` with the ``kubeshift.io/source-*`` annotations of its source."""
    meta = source.get("metadata") or {}
    out = copylib.deepcopy(manifest)
    annotations = out["metadata"].setdefault("annotations", {})
    annotations[SOURCE_DIGEST] = manifest_digest
    annotations[SOURCE_RESOURCE_VERSION] = str(meta.get("resourceVersion", ""))
    annotations[SOURCE_UID] = str(meta.get("uid", ""))
    if meta.get("generation") is not None:
        annotations[SOURCE_GENERATION] = str(meta["generation"])
    return out
