"""The one place Kubernetes API clients are built.

Hooks and gates receive a ``KubeClients``; they never read kubeconfigs themselves. The
clients carry a default request timeout (the generated client has none, so a dead
apiserver would hang a hook forever), a connection pool large enough for concurrent
drains, and a request counter the benchmark reads (API requests per evicted pod).
"""

from __future__ import annotations

import json
import os
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml
from kubernetes import client, config
from kubernetes.config.config_exception import ConfigException
from pydantic import BaseModel, ConfigDict, Field

from automation.core.errors import RetryableError, UserError, from_api_exception, translate
from components.contract.user_files import (
    AliasBomb,
    BoundedLoader,
    UnreadableFile,
    alias_bomb_sentence,
    read_bounded,
)

MERGE_PATCH = "application/merge-patch+json"
CONFLICT_ATTEMPTS = 5


class ClusterAccess(BaseModel):
    """How to reach one cluster: a kubeconfig file and context, or in-cluster credentials."""

    model_config = ConfigDict(extra="forbid")

    kubeconfig: Path | None = Field(
        default=None, description="Kubeconfig file; default $KUBECONFIG or ~/.kube/config."
    )
    context: str | None = Field(default=None, description="Context name; default current.")
    in_cluster: bool = Field(default=False, description="Use the pod's service account.")
    request_timeout: float = Field(default=30.0, gt=0, description="Seconds per API request.")
    pool_size: int = Field(default=64, ge=1, description="HTTP connections kept open.")

    def kubeconfig_path(self) -> Path:
        if self.kubeconfig is not None:
            return self.kubeconfig.expanduser()
        env = os.environ.get("KUBECONFIG", "")
        first = env.split(os.pathsep)[0] if env else ""
        return Path(first or "~/.kube/config").expanduser()


class _CountingApiClient(client.ApiClient):
    """An ``ApiClient`` that applies a default timeout and counts requests."""

    def __init__(self, configuration: client.Configuration, timeout: float) -> None:
        super().__init__(configuration)
        self.default_timeout = timeout
        self._lock = threading.Lock()
        self.requests = 0
        self.requests_by: Counter[str] = Counter()

    def call_api(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        if kwargs.get("_request_timeout") is None:
            kwargs["_request_timeout"] = self.default_timeout
        kind = request_kind(str(args[0]), str(args[1])) if len(args) >= 2 else "?"
        with self._lock:
            self.requests += 1
            self.requests_by[kind] += 1
        return super().call_api(*args, **kwargs)


def request_kind(method: str, url: str) -> str:
    """``POST pods/eviction``, ``WATCH pods``, ``LIST poddisruptionbudgets``: for counting."""
    split = urlsplit(url)
    path, query = split.path, split.query
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"]:
        parts = parts[2:]
    elif parts[:1] == ["apis"]:
        parts = parts[3:]
    if parts[:1] == ["namespaces"] and len(parts) > 2:
        parts = parts[2:]
    resource = parts[0] if parts else "/"
    if len(parts) > 2:
        resource += "/" + parts[2]
    if method == "GET" and "watch=true" in query.lower():
        return f"WATCH {resource}"
    if method == "GET" and len(parts) == 1:
        return f"LIST {resource}"
    return f"{method} {resource}"


@dataclass
class KubeClients:
    """Typed accessors over one authenticated ``ApiClient``."""

    api_client: client.ApiClient
    name: str = "cluster"
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    def _api(self, cls: type) -> Any:
        key = cls.__name__
        if key not in self._cache:
            self._cache[key] = cls(self.api_client)
        return self._cache[key]

    @property
    def core(self) -> client.CoreV1Api:
        return self._api(client.CoreV1Api)

    @property
    def apps(self) -> client.AppsV1Api:
        return self._api(client.AppsV1Api)

    @property
    def policy(self) -> client.PolicyV1Api:
        return self._api(client.PolicyV1Api)

    @property
    def discovery(self) -> client.DiscoveryV1Api:
        return self._api(client.DiscoveryV1Api)

    @property
    def batch(self) -> client.BatchV1Api:
        return self._api(client.BatchV1Api)

    @property
    def custom(self) -> client.CustomObjectsApi:
        return self._api(client.CustomObjectsApi)

    @property
    def request_count(self) -> int:
        """API requests sent so far (0 when the client does not count)."""
        return int(getattr(self.api_client, "requests", 0))

    def request_counts(self) -> dict[str, int]:
        """API requests sent so far by kind (``POST pods/eviction``, ``WATCH pods`` …)."""
        return dict(getattr(self.api_client, "requests_by", {}))

    def close(self) -> None:
        self.api_client.close()


def build_clients(access: ClusterAccess) -> KubeClients:
    """Build clients for ``access``; a missing kubeconfig or context is a ``UserError``."""
    configuration = client.Configuration()
    if access.in_cluster:
        try:
            config.load_incluster_config(client_configuration=configuration)
        except ConfigException as exc:
            raise UserError(f"In-cluster Kubernetes credentials are unavailable: {exc}.") from exc
        name = "in-cluster"
    else:
        path = access.kubeconfig_path()
        missing = (
            f"Kubeconfig {path} does not exist; set KUBECONFIG or "
            "kubeshift:runtime.clusters.<role>.kubeconfig in the stack file."
        )
        try:
            text = read_bounded(path, "Kubeconfig").decode("utf-8")
            doc = yaml.load(text, Loader=BoundedLoader) or {}
        except FileNotFoundError:
            raise UserError(missing) from None
        except UnreadableFile as exc:
            raise UserError(str(exc)) from None
        except UnicodeDecodeError:
            raise UserError(f"Kubeconfig {path} is not UTF-8 text; save it as UTF-8.") from None
        except AliasBomb as bomb:
            raise UserError(alias_bomb_sentence("Kubeconfig", path, bomb)) from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}" if mark else ""
            raise UserError(f"Kubeconfig {path} is not valid YAML{where}.") from None
        if not isinstance(doc, dict):
            raise UserError(f"Kubeconfig {path} is not a kubeconfig (no top-level mapping).")
        listed = doc.get("contexts")
        contexts: list[Any] = listed if isinstance(listed, list) else []
        known = sorted(str(c.get("name", "")) for c in contexts if isinstance(c, dict))
        active = doc.get("current-context") or ""
        if access.context is not None and access.context not in known:
            names = ", ".join(known) or "none"
            raise UserError(
                f"Context '{access.context}' is not in kubeconfig {path}; known: {names}."
            )
        if access.context is None and active not in known:
            raise UserError(
                f"Kubeconfig {path} has no current context; set "
                "kubeshift:runtime.clusters.<role>.context in the stack file."
            )
        try:
            config.load_kube_config(
                config_file=str(path),
                context=access.context,
                client_configuration=configuration,
                persist_config=False,
            )
        except ConfigException as exc:
            raise UserError(f"Kubeconfig {path} is not usable: {exc}.") from exc
        name = access.context or active
    configuration.connection_pool_maxsize = access.pool_size
    return KubeClients(_CountingApiClient(configuration, access.request_timeout), name=name)


def raw(call: Any, *args: Any, action: str, **kwargs: Any) -> dict[str, Any]:
    """Call a generated API method and return the decoded JSON body as plain dicts.

    Drains and gates work on the API's JSON shape: it is faster than building pydantic
    models for thousands of pods, and pure filters can be tested on literal dicts.
    Errors are mapped through ``automation.core.errors`` with ``action`` naming the call.
    """
    try:
        response = call(*args, _preload_content=False, **kwargs)
    except client.ApiException as exc:
        raise from_api_exception(exc, action) from exc
    except Exception as exc:  # connection refused or reset: the API server is away
        mapped = translate(exc, action)
        if mapped is None:
            raise
        raise mapped from exc
    return json.loads(response.data or b"{}")


@dataclass(frozen=True)
class Patched:
    """What ``patch_on_conflict`` read last, and the object after the patch (None: no patch)."""

    before: dict[str, Any]
    after: dict[str, Any] | None


def patch_on_conflict(
    read: Callable[[], dict[str, Any]],
    write: Callable[[dict[str, Any]], Any],
    build: Callable[[dict[str, Any]], dict[str, Any] | None],
    what: str,
) -> Patched:
    """Read, build a merge patch guarded by the read's resourceVersion, write; on a 409
    conflict (someone changed the object in between) read again, a few times.

    ``build`` returns None when the object needs no change; ``write`` gets the patch
    and calls the API with ``_preload_content=False``. Other API errors are mapped.
    """
    for _ in range(CONFLICT_ATTEMPTS):
        current = read()
        patch = build(current)
        if patch is None:
            return Patched(current, None)
        version = current["metadata"]["resourceVersion"]
        patch.setdefault("metadata", {})["resourceVersion"] = version
        try:
            response = write(patch)
        except client.ApiException as exc:
            if exc.status == 409:
                continue
            raise from_api_exception(exc, what) from exc
        return Patched(current, json.loads(response.data or b"{}"))
    raise RetryableError(f"{what[0].upper()}{what[1:]}: the object kept changing; will retry.")


def list_all(call: Any, *args: Any, action: str, page: int = 500, **kwargs: Any) -> dict[str, Any]:
    """List every item of a collection, following ``continue`` tokens.

    Returns ``{"items": [...], "resourceVersion": rv}`` where ``rv`` is the list's
    resource version (a consistent point to start a watch from).
    """
    items: list[dict[str, Any]] = []
    token: str | None = None
    version = ""
    while True:
        extra = {"_continue": token} if token else {}
        body = raw(call, *args, action=action, limit=page, **extra, **kwargs)
        items.extend(body.get("items") or [])
        meta = body.get("metadata") or {}
        version = meta.get("resourceVersion", version)
        token = meta.get("continue") or None
        if not token:
            return {"items": items, "resourceVersion": version}
