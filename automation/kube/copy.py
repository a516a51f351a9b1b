"""Copy namespaced resources from the primary cluster to its mirror (seed 000, step 2).

The cni-swap moves traffic to a mirror cluster while the primary loses its network, so
the mirror must run the same workloads. This module copies the chosen namespaces'
objects the way Velero restores them — server-populated fields stripped, objects made
by a controller left to that controller — with two differences that matter here:

* the image registry is rewritten by an **anchored** prefix (``registry.example.com``
  becomes ``registry-mirror.example.com`` only at the start of an image reference and
  on a path boundary; ``myregistry.example.com/...`` is never touched, unlike Velero's
  substring replace);
* each copy carries, in ``kubeshift.io/source-*`` annotations, a digest of what was
  copied and the source's ``resourceVersion``/``generation``. A re-run compares
  digests and writes only what changed (server-side apply, field manager
  ``kubeshift``), and :func:`find_drift` compares the primary against those
  annotations so a deploy to the primary during the mirror window is caught.

Secret values are never logged or reported: items carry kind, namespace and name only,
and API error bodies about Secrets are dropped.
"""

from __future__ import annotations

import base64
import copy as copylib
import hashlib
import json
import logging
import re
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Annotated, Any, Literal

from kubernetes import client
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from automation.core.errors import (
    KubeshiftError,
    PreconditionFailed,
    StepFailedError,
    UserError,
    from_api_exception,
)
from automation.core.progress import NullReporter, Reporter
from automation.core.results import HookResult
from automation.core.waiting import Pending, summarize
from automation.kube.cronjobs import COPY_SUSPENDED, SUSPENDED_BY
from automation.kube.selector_text import check as check_selector
from automation.kube.stateful import StatefulChoice, StatefulWorkload, claims, dig
from automation.kube.stateful import refusal as stateful_refusal

log = logging.getLogger("kubeshift.copy")

APPLY_PATCH = "application/apply-patch+yaml"
FIELD_MANAGER = "kubeshift"
SOURCE_DIGEST = "kubeshift.io/source-digest"
SOURCE_RESOURCE_VERSION = "kubeshift.io/source-resource-version"
SOURCE_GENERATION = "kubeshift.io/source-generation"
SOURCE_UID = "kubeshift.io/source-uid"
_OWN_ANNOTATIONS = (SOURCE_DIGEST, SOURCE_RESOURCE_VERSION, SOURCE_GENERATION, SOURCE_UID)
SYSTEM_NAMESPACES = frozenset({"kube-system", "kube-public", "kube-node-lease"})

Obj = dict[str, Any]

# --- kinds ---------------------------------------------------------------------------


@dataclass(frozen=True)
class KindSpec:
    """How to reach one namespaced kind through the generated client, and its pod spec."""

    kind: str
    api_version: str
    api_class: str  # kubernetes.client class name, e.g. "AppsV1Api"
    snake: str  # method stem: list_namespaced_<snake>, patch_namespaced_<snake>
    pod_spec: tuple[str, ...] | None = None  # path to the pod spec, for image rewrites


_TEMPLATE = ("spec", "template", "spec")

KINDS: tuple[KindSpec, ...] = (
    # Order matters: what others reference first (Velero's restore priorities).
    KindSpec("ServiceAccount", "v1", "CoreV1Api", "service_account"),
    KindSpec("Secret", "v1", "CoreV1Api", "secret"),
    KindSpec("ConfigMap", "v1", "CoreV1Api", "config_map"),
    KindSpec("Role", "rbac.authorization.k8s.io/v1", "RbacAuthorizationV1Api", "role"),
    KindSpec(
        "RoleBinding", "rbac.authorization.k8s.io/v1", "RbacAuthorizationV1Api", "role_binding"
    ),
    KindSpec("Service", "v1", "CoreV1Api", "service"),
    KindSpec("PodDisruptionBudget", "policy/v1", "PolicyV1Api", "pod_disruption_budget"),
    KindSpec("Deployment", "apps/v1", "AppsV1Api", "deployment", _TEMPLATE),
    KindSpec("StatefulSet", "apps/v1", "AppsV1Api", "stateful_set", _TEMPLATE),
    KindSpec("DaemonSet", "apps/v1", "AppsV1Api", "daemon_set", _TEMPLATE),
    KindSpec("ReplicaSet", "apps/v1", "AppsV1Api", "replica_set", _TEMPLATE),
    KindSpec("CronJob", "batch/v1", "BatchV1Api", "cron_job", ("spec", "jobTemplate", *_TEMPLATE)),
    KindSpec("Job", "batch/v1", "BatchV1Api", "job", _TEMPLATE),
    KindSpec("Pod", "v1", "CoreV1Api", "pod", ("spec",)),
    KindSpec("Ingress", "networking.k8s.io/v1", "NetworkingV1Api", "ingress"),
)
KIND_BY_NAME: dict[str, KindSpec] = {k.kind: k for k in KINDS}
DEFAULT_KINDS: tuple[str, ...] = tuple(k.kind for k in KINDS)

# --- options ---------------------------------------------------------------------------


class RegistryRewrite(BaseModel):
    """Replace the registry (or registry/path) prefix of image references, anchored.

    ``source`` matches an image only at its start and on a boundary: after a bare
    host (``registry.example.com``) the next character must be ``/``; after a
    host/path (``registry.example.com/team/app``) it may also be ``:`` or ``@`` (tag or
    digest). ``docker.io`` also matches short Docker Hub names (``nginx:1.27``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str = Field(
        description="The registry (or registry/path) prefix an image reference must start "
        "with to be rewritten, e.g. registry.example.com."
    )
    target: str = Field(description="What replaces that prefix, e.g. registry-mirror.example.com.")

    @field_validator("source", "target")
    @classmethod
    def _reference_prefix(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if not value or "://" in value or any(c.isspace() for c in value):
            raise ValueError(f"{value!r} is not a registry prefix like 'registry.example.com'")
        return value

    def apply(self, image: str) -> str | None:
        """The rewritten image, or None when ``image`` is not under ``source``."""
        candidate = _docker_hub_long_form(image) if self.source in _DOCKER_HUB else image
        if not candidate.startswith(self.source):
            return None
        rest = candidate[len(self.source) :]
        boundaries = ("/", ":", "@") if "/" in self.source else ("/",)
        if rest and not rest.startswith(boundaries):
            return None
        return self.target + rest


_DOCKER_HUB = frozenset({"docker.io", "index.docker.io"})


def _docker_hub_long_form(image: str) -> str:
    """``nginx`` → ``docker.io/library/nginx``; ``me/app`` → ``docker.io/me/app``."""
    first, sep, _ = image.partition("/")
    has_registry = sep and ("." in first or ":" in first or first == "localhost")
    if has_registry:
        return "docker.io" + image[len(first) :] if first == "index.docker.io" else image
    return f"docker.io/{image}" if sep else f"docker.io/library/{image}"


def rewrite_image(image: str, rewrites: Sequence[RegistryRewrite]) -> str:
    """``image`` with the first matching rewrite applied (unchanged when none matches)."""
    for rule in rewrites:
        new = rule.apply(image)
        if new is not None:
            return new
    return image


_NAMESPACE = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


def _copied_namespaces(value: tuple[str, ...]) -> tuple[str, ...]:
    if bad := [n for n in value if not _NAMESPACE.fullmatch(n)]:
        raise ValueError(f"{bad[0]!r} is not a namespace name (a DNS label)")
    system = sorted(set(value) & SYSTEM_NAMESPACES)
    if system:
        raise ValueError(
            f"namespace(s) {', '.join(system)} belong to the cluster itself and are "
            "never copied (the mirror runs its own CNI and add-ons)"
        )
    return tuple(dict.fromkeys(value))


def _known_kinds(value: tuple[str, ...]) -> tuple[str, ...]:
    lower = {k.lower(): k for k in KIND_BY_NAME}
    unknown = sorted(k for k in value if k.lower() not in lower)
    if unknown:
        raise ValueError(f"unknown kind(s) {', '.join(unknown)}; known: {', '.join(DEFAULT_KINDS)}")
    wanted = {lower[k.lower()] for k in value}
    return tuple(k for k in DEFAULT_KINDS if k in wanted)  # canonical order


def _rewrites_that_all_apply(value: tuple[RegistryRewrite, ...]) -> tuple[RegistryRewrite, ...]:
    """The first matching rewrite wins, so one under an earlier one's source never would."""
    for later_index, later in enumerate(value):
        for earlier in value[:later_index]:
            if _hub_named(later.source) == _hub_named(earlier.source):
                raise ValueError(f"{later.source!r} is rewritten twice; keep one rewrite")
            if _under(later.source, earlier.source):
                raise ValueError(
                    f"the rewrite of {later.source!r} never applies: the earlier rewrite of "
                    f"{earlier.source!r} takes every image under it; put the narrower first"
                )
        if later.target == later.source:
            raise ValueError(f"the rewrite of {later.source!r} names it as its own target")
    return value


def _under(source: str, prefix: str) -> bool:
    """``source`` is ``prefix`` or a path below it (Docker Hub by either name)."""
    source, prefix = (_hub_named(x) for x in (source, prefix))
    return source == prefix or source.startswith(prefix + "/")


def _hub_named(source: str) -> str:
    host, sep, rest = source.partition("/")
    return f"docker.io{sep}{rest}" if host in _DOCKER_HUB else source


CopiedNamespaces = Annotated[tuple[str, ...], AfterValidator(_copied_namespaces)]
CopiedKinds = Annotated[tuple[str, ...], AfterValidator(_known_kinds)]
RegistryRewrites = Annotated[tuple[RegistryRewrite, ...], AfterValidator(_rewrites_that_all_apply)]


class CopyOptions(BaseModel):
    """What to copy from the primary to the mirror."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    namespaces: CopiedNamespaces = Field(min_length=1, description="Namespaces to copy.")
    kinds: CopiedKinds = Field(default=DEFAULT_KINDS, min_length=1)
    registry_rewrites: RegistryRewrites = ()
    label_selector: Annotated[str, AfterValidator(check_selector)] | None = Field(
        default=None, description="Copy only matching objects."
    )
    skip_finished_jobs: bool = Field(
        default=True, description="Do not copy Jobs that already completed or failed."
    )
    field_manager: str = FIELD_MANAGER
    concurrency: int = Field(
        default=8, ge=1, le=64, description="Objects of one kind applied at once."
    )
    stateful: StatefulChoice = Field(
        default="refuse",
        description="Workloads with PersistentVolumeClaims: refuse, leave-on-primary or "
        "copy-without-data (automation.kube.stateful).",
    )

    @property
    def specs(self) -> tuple[KindSpec, ...]:
        return tuple(KIND_BY_NAME[k] for k in self.kinds)


# --- pure transforms -------------------------------------------------------------------

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


# --- the report ------------------------------------------------------------------------

Action = Literal[
    "created", "updated", "unchanged", "skipped", "failed", "would-create", "would-update"
]
_COPIED: frozenset[str] = frozenset({"created", "updated", "would-create", "would-update"})
_COLUMNS: tuple[Action, ...] = (
    "created",
    "updated",
    "would-create",
    "would-update",
    "unchanged",
    "skipped",
    "failed",
)


@dataclass(frozen=True)
class CopyItem:
    """What happened to one object. Never carries an object's content."""

    kind: str
    namespace: str
    name: str
    action: Action
    reason: str = ""
    images: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"


@dataclass(frozen=True)
class CopyReport:
    """Per-object outcomes of a copy, in copy order, and the namespaces it created."""

    items: tuple[CopyItem, ...]
    namespaces: tuple[str, ...] = ()
    namespaces_created: tuple[str, ...] = ()
    dry_run: bool = False

    def by_action(self, *actions: str) -> list[CopyItem]:
        return [i for i in self.items if i.action in actions]

    @property
    def copied(self) -> list[CopyItem]:
        return [i for i in self.items if i.action in _COPIED]

    @property
    def failed(self) -> list[CopyItem]:
        return self.by_action("failed")

    @property
    def changed(self) -> bool:
        if self.dry_run:
            return False
        return bool(self.namespaces_created or self.by_action("created", "updated"))

    def counts(self) -> dict[str, dict[str, int]]:
        """``{kind: {action: n}}`` for every kind with at least one object."""
        out: dict[str, dict[str, int]] = {}
        for item in self.items:
            per_kind = out.setdefault(item.kind, {})
            per_kind[item.action] = per_kind.get(item.action, 0) + 1
        return out

    def table(self) -> str:
        """A fixed-width table: one row per kind, one column per action that occurred."""
        counts = self.counts()
        columns = [a for a in _COLUMNS if any(a in c for c in counts.values())]
        if not counts:
            return "nothing to copy"
        width = max(len("kind"), *(len(k) for k in counts))
        head = "kind".ljust(width) + "".join(f"  {c:>12}" for c in columns)
        rows = [
            kind.ljust(width) + "".join(f"  {counts[kind].get(c, 0):>12}" for c in columns)
            for kind in (k for k in DEFAULT_KINDS if k in counts)
        ]
        return "\n".join([head, *rows])

    def summary(self) -> str:
        prefix = "dry-run: " if self.dry_run else ""
        verbs = ("would-create", "would-update") if self.dry_run else ("created", "updated")
        parts = [f"{len(self.by_action(v))} {v}" for v in verbs]
        parts += [f"{len(self.by_action(v))} {v}" for v in ("unchanged", "skipped", "failed")]
        images = sum(len(i.images) for i in self.copied)
        ns = f"{len(self.namespaces)} namespace(s)"
        if self.namespaces_created:
            made = "would create" if self.dry_run else "created"
            ns += f", {made} {summarize(self.namespaces_created)}"
        text = f"{prefix}copy to mirror: {', '.join(parts)} across {ns}"
        if images:
            text += f"; {images} image reference(s) rewritten"
        if self.failed:
            text += f"; failed: {summarize([f'{i.key} ({i.reason})' for i in self.failed], 3)}"
        return text + "."

    def raise_for_failure(self) -> None:
        if self.failed:
            raise StepFailedError(
                f"Copy to the mirror failed for {len(self.failed)} object(s): "
                f"{summarize([f'{i.key}: {i.reason}' for i in self.failed], 3)}. "
                "Fix them and run the copy again; objects already copied stay unchanged."
            )

    def as_hook_result(self) -> HookResult:
        """The hook's result; raises when any object failed."""
        self.raise_for_failure()
        details = {
            "counts": self.counts(),
            "namespaces_created": list(self.namespaces_created),
            "copied": [i.key for i in self.copied],
        }
        return HookResult(self.changed, self.summary(), details)


# --- talking to the API -------------------------------------------------------------------


class _Apis:
    """Generated API objects over one ``ApiClient``, built once per class."""

    def __init__(self, clients: Any) -> None:
        self.clients = clients
        self._cache: dict[str, Any] = {}

    def method(self, spec: KindSpec, verb: str) -> Any:
        if spec.api_class not in self._cache:
            self._cache[spec.api_class] = getattr(client, spec.api_class)(self.clients.api_client)
        return getattr(self._cache[spec.api_class], f"{verb}_namespaced_{spec.snake}")


def _call(fn: Any, *args: Any, action: str, quiet: bool = False, **kwargs: Any) -> Obj:
    """Call ``fn`` for raw JSON; map errors, adding the API's message unless ``quiet``."""
    try:
        response = fn(*args, _preload_content=False, **kwargs)
    except client.ApiException as exc:
        mapped = from_api_exception(exc, action)
        detail = "" if quiet else _api_message(exc)
        if detail:
            raise type(mapped)(f"{mapped} {detail}", kind=mapped.kind) from exc
        raise mapped from exc
    return json.loads(response.data or b"{}")  # type: ignore[no-any-return]


def _api_message(exc: Any) -> str:
    try:
        body = json.loads(exc.body or "{}")
    except (TypeError, ValueError):
        return ""
    message = str(body.get("message", "")).strip() if isinstance(body, dict) else ""
    return message[:300] + ("" if message.endswith(".") or not message else ".")


def _list(apis: _Apis, spec: KindSpec, namespace: str, selector: str | None) -> list[Obj]:
    items: list[Obj] = []
    token: str | None = None
    kwargs: dict[str, Any] = {"label_selector": selector} if selector else {}
    while True:
        extra: dict[str, Any] = {"_continue": token} if token else {}
        body = _call(
            apis.method(spec, "list"),
            namespace,
            action=f"list {spec.kind}s in {namespace}",
            limit=500,
            **extra,
            **kwargs,
        )
        items.extend(body.get("items") or [])
        token = (body.get("metadata") or {}).get("continue") or None
        if not token:
            return items


def _apply(apis: _Apis, spec: KindSpec, manifest: Obj, *, manager: str, dry_run: bool) -> Obj:
    meta = manifest["metadata"]
    extra = {"dry_run": "All"} if dry_run else {}
    return _call(
        apis.method(spec, "patch"),
        meta["name"],
        meta["namespace"],
        manifest,
        action=f"apply {spec.kind} {meta['namespace']}/{meta['name']} on the mirror",
        quiet=spec.kind == "Secret",
        field_manager=manager,
        force=True,
        _content_type=APPLY_PATCH,
        **extra,
    )


# --- namespaces --------------------------------------------------------------------------


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
    out: Obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": meta["name"]}}
    if labels:
        out["metadata"]["labels"] = labels
    if annotations:
        out["metadata"]["annotations"] = annotations
    return out


def _read_namespace(core: Any, name: str, where: str) -> Obj | None:
    try:
        return _call(core.read_namespace, name, action=f"read namespace {name} on the {where}")
    except KubeshiftError as exc:
        if isinstance(exc.__cause__, client.ApiException) and exc.__cause__.status == 404:
            return None
        raise


def ensure_namespace(
    primary: Any, mirror: Any, name: str, *, manager: str = FIELD_MANAGER, dry_run: bool = False
) -> bool:
    """Create namespace ``name`` on the mirror (with the primary's labels) if missing.

    Returns True when it was (or, in a dry run, would be) created. A namespace missing
    on the primary, or terminating on the mirror, is a ``UserError``/``StepFailedError``.
    """
    source = _read_namespace(client.CoreV1Api(primary.api_client), name, "primary")
    if source is None:
        raise UserError(f"Namespace {name} does not exist on the primary cluster; check the list.")
    mirror_core = client.CoreV1Api(mirror.api_client)
    existing = _read_namespace(mirror_core, name, "mirror")
    if existing is not None:
        if (existing.get("status") or {}).get("phase") == "Terminating":
            raise StepFailedError(
                f"Namespace {name} is terminating on the mirror; wait until it is gone and "
                "run the copy again."
            )
        return False
    if not dry_run:
        _call(
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


# --- the copy ------------------------------------------------------------------------------


@dataclass
class _Planned:
    spec: KindSpec
    source: Obj
    manifest: Obj = field(default_factory=dict)
    digest: str = ""
    images: tuple[str, ...] = ()
    skip: str = ""
    claims: tuple[str, ...] = ()
    """PersistentVolumeClaims the object keeps data in (its copy starts without them)."""

    @property
    def name(self) -> str:
        return str(self.source["metadata"]["name"])

    def stateful(self, namespace: str) -> StatefulWorkload:
        template = dig(self.source, (self.spec.pod_spec or ("spec",))[:-1]) or {}
        labels = (template.get("metadata") or {}).get("labels") or {}
        return StatefulWorkload(self.spec.kind, namespace, self.name, self.claims, labels)


def _plan_namespace(apis: _Apis, options: CopyOptions, namespace: str) -> list[_Planned]:
    """Every listed source object of ``namespace``, prepared or with its skip reason."""
    listed: list[tuple[KindSpec, Obj]] = []
    for spec in options.specs:
        listed.extend((spec, obj) for obj in _list(apis, spec, namespace, options.label_selector))
    uids = {o["metadata"].get("uid", ""): f"{s.kind}/{o['metadata']['name']}" for s, o in listed}
    uids.pop("", None)
    planned = []
    for spec, obj in listed:
        why = skip_reason(spec, obj, uids)
        if spec.kind == "Job" and not options.skip_finished_jobs and why == "finished job":
            why = ""
        item = _Planned(spec, obj, skip=why)
        if not why:
            item.claims = claims(spec.kind, obj, spec.pod_spec)
            if item.claims and options.stateful == "leave-on-primary":
                item.skip = (
                    f"keeps its data in PersistentVolumeClaims ({', '.join(item.claims)}); "
                    "left on the primary"
                )
        if not item.skip:
            item.manifest, images = prepare(spec, obj, options.registry_rewrites)
            item.images = tuple(images)
            item.digest = digest(item.manifest)
        planned.append(item)
    return planned


def stateful_workloads(primary: Any, options: CopyOptions) -> list[StatefulWorkload]:
    """The workloads of ``options.namespaces`` on the primary that keep data in claims
    (what the copy would otherwise take, whatever ``options.stateful`` says)."""
    apis = _Apis(primary)
    every = options.model_copy(update={"stateful": "copy-without-data"})
    return [
        item.stateful(namespace)
        for namespace in options.namespaces
        for item in _plan_namespace(apis, every, namespace)
        if item.claims and not item.skip
    ]


def _mirror_digests(apis: _Apis, spec: KindSpec, namespace: str) -> dict[str, str]:
    return {
        o["metadata"]["name"]: ((o["metadata"].get("annotations") or {}).get(SOURCE_DIGEST, ""))
        for o in _list(apis, spec, namespace, None)
    }


def copy_namespaces(
    primary: Any,
    mirror: Any,
    options: CopyOptions,
    *,
    dry_run: bool = False,
    reporter: Reporter | None = None,
) -> CopyReport:
    """Copy ``options.namespaces`` from ``primary`` to ``mirror`` (both ``KubeClients``).

    Idempotent: an object whose mirror copy carries the same source digest is left
    alone (``unchanged``), so a second run writes nothing. A dry run writes nothing
    either; it lists what it would create or update and validates each change with a
    server-side dry-run apply where the namespace already exists on the mirror.
    A failing object is reported ``failed`` and the rest still copy; call
    ``raise_for_failure()`` or ``as_hook_result()`` on the report.
    """
    source_apis, mirror_apis = _Apis(primary), _Apis(mirror)
    plans = {ns: _plan_namespace(source_apis, options, ns) for ns in options.namespaces}
    if options.stateful == "refuse":
        found = [p.stateful(ns) for ns, planned in plans.items() for p in planned if p.claims]
        if found:  # before anything is written on the mirror
            raise PreconditionFailed(stateful_refusal(found))
    items: list[CopyItem] = []
    created_ns: list[str] = []
    with (reporter or NullReporter()).task("copy to mirror", total=len(options.namespaces)) as task:
        for namespace in options.namespaces:
            new_ns = ensure_namespace(
                primary, mirror, namespace, manager=options.field_manager, dry_run=dry_run
            )
            if new_ns:
                created_ns.append(namespace)
            planned = plans[namespace]
            on_mirror: dict[str, dict[str, str]] = {}
            for spec in options.specs:
                if new_ns:
                    on_mirror[spec.kind] = {}
                else:
                    on_mirror[spec.kind] = _mirror_digests(mirror_apis, spec, namespace)
            with ThreadPoolExecutor(options.concurrency) as pool:
                for spec in options.specs:  # kind by kind: what others reference goes first
                    copy_one = partial(
                        _copy_one,
                        apis=mirror_apis,
                        mirror_digests=on_mirror[spec.kind],
                        namespace=namespace,
                        options=options,
                        dry_run=dry_run,
                        namespace_is_new=new_ns,
                    )
                    items.extend(pool.map(copy_one, [p for p in planned if p.spec is spec]))
            task.advance()
            task.update(detail=namespace)
    report = CopyReport(tuple(items), options.namespaces, tuple(created_ns), dry_run)
    log.info("%s", report.summary())
    return report


def _copy_one(
    p: _Planned,
    *,
    apis: _Apis,
    mirror_digests: Mapping[str, str],
    namespace: str,
    options: CopyOptions,
    dry_run: bool,
    namespace_is_new: bool,
) -> CopyItem:
    def item(action: Action, reason: str = "") -> CopyItem:
        if p.claims and not reason:
            reason = f"without its data ({', '.join(p.claims)} start empty)"
        return CopyItem(p.spec.kind, namespace, p.name, action, reason, p.images)

    if p.skip:
        return CopyItem(p.spec.kind, namespace, p.name, "skipped", p.skip)
    present = p.name in mirror_digests
    if present and mirror_digests[p.name] == p.digest:
        return item("unchanged")
    body = stamped(p.manifest, p.source, p.digest)
    try:
        if dry_run:
            if not namespace_is_new:  # the server validates the change without keeping it
                _apply(apis, p.spec, body, manager=options.field_manager, dry_run=True)
            return item("would-update" if present else "would-create")
        _apply(apis, p.spec, body, manager=options.field_manager, dry_run=False)
    except KubeshiftError as exc:
        log.warning("copy of %s %s/%s failed: %s", p.spec.kind, namespace, p.name, exc)
        return item("failed", str(exc))
    log.debug("applied %s %s/%s on the mirror", p.spec.kind, namespace, p.name)
    return item("updated" if present else "created")


# --- drift: changes on the primary since the copy --------------------------------------------


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
    apis = _Apis(mirror)
    found: dict[tuple[str, str, str], SourceStamp] = {}
    for namespace in options.namespaces:
        if _read_namespace(client.CoreV1Api(mirror.api_client), namespace, "mirror") is None:
            continue
        for spec in options.specs:
            for obj in _list(apis, spec, namespace, None):
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
    apis = _Apis(primary)
    items: list[str] = []
    seen: set[tuple[str, str, str]] = set()
    gone: set[str] = set()
    for namespace in options.namespaces:
        if _read_namespace(client.CoreV1Api(primary.api_client), namespace, "primary") is None:
            items.append(f"namespace {namespace}: deleted on the primary")
            gone.add(namespace)
            continue
        for p in _plan_namespace(apis, options, namespace):
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
