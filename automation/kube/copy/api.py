"""Talking to the Kubernetes API for the copy: raw JSON in and out, errors mapped.

Every kind is reached through the generated client's ``*_namespaced_<kind>`` methods
(:class:`Apis`), read as raw JSON (no model round trip to drop fields), listed page by
page and applied server-side. An API error becomes a ``KubeshiftError`` carrying the
API's message, except about Secrets, whose error bodies may quote their values.
"""

from __future__ import annotations

import json
from typing import Any

from kubernetes import client

from automation.core.errors import KubeshiftError, from_api_exception
from automation.kube.copy.kinds import KindSpec, Obj

APPLY_PATCH = "application/apply-patch+yaml"


class Apis:
    """Generated API objects over one ``ApiClient``, built once per class."""

    def __init__(self, clients: Any) -> None:
        self.clients = clients
        self._cache: dict[str, Any] = {}

    def method(self, spec: KindSpec, verb: str) -> Any:
        if spec.api_class not in self._cache:
            self._cache[spec.api_class] = getattr(client, spec.api_class)(self.clients.api_client)
        return getattr(self._cache[spec.api_class], f"{verb}_namespaced_{spec.snake}")


def call_api(fn: Any, *args: Any, action: str, quiet: bool = False, **kwargs: Any) -> Obj:
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


def not_found(exc: KubeshiftError) -> bool:
    """The API answered 404: what was asked for is not (or no longer) there."""
    cause = exc.__cause__
    return isinstance(cause, client.ApiException) and cause.status == 404


def _api_message(exc: Any) -> str:
    try:
        body = json.loads(exc.body or "{}")
    except (TypeError, ValueError):
        return ""
    message = str(body.get("message", "")).strip() if isinstance(body, dict) else ""
    return message[:300] + ("" if message.endswith(".") or not message else ".")


def list_objects(apis: Apis, spec: KindSpec, namespace: str, selector: str | None) -> list[Obj]:
    items: list[Obj] = []
    token: str | None = None
    kwargs: dict[str, Any] = {"label_selector": selector} if selector else {}
    while True:
        extra: dict[str, Any] = {"_continue": token} if token else {}
        body = call_api(
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


def apply_object(apis: Apis, spec: KindSpec, manifest: Obj, *, manager: str, dry_run: bool) -> Obj:
    meta = manifest["metadata"]
    extra = {"dry_run": "All"} if dry_run else {}
    return call_api(
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
