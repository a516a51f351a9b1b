"""One eviction through the Eviction API, with its answer turned into an outcome.

The Eviction API is the only way to remove a pod that honours PodDisruptionBudgets.
Its answers: 201 evicted; 404 already gone (done); 409 with our UID precondition: the
name now belongs to a replacement, so ours is gone too; 429 blocked by a budget (the
body names the PDB: "The disruption budget X needs N healthy pods and has M
currently"); 403 with cause ``NamespaceTerminating``: the namespace is being deleted
(its own case: the pod will go with it). Connection errors are transient. Anything else is mapped by
``automation.core.errors`` and reported as a failure of that pod.
"""

from __future__ import annotations

import enum
import json
import re
from dataclasses import dataclass
from typing import Any

import urllib3
from kubernetes import client

from automation.core.errors import from_api_exception

_BUDGET_RE = re.compile(
    r"disruption budget (?P<name>\S+) needs (?P<need>\d+) healthy pods? and has (?P<has>\d+)"
)
_PROCESSING_RE = re.compile(r"disruption budget (?P<name>\S+) is still being processed")


class EvictStatus(enum.Enum):
    EVICTED = "evicted"
    GONE = "gone"
    BLOCKED = "blocked"
    NAMESPACE_TERMINATING = "namespace-terminating"
    TRANSIENT = "transient"  # connection trouble: retry later
    FAILED = "failed"


@dataclass(frozen=True)
class EvictOutcome:
    status: EvictStatus
    message: str = ""
    pdb: str | None = None  # namespace/name of the blocking budget, when known
    retry_after: float | None = None  # server's hint, seconds


def _status_body(exc: client.ApiException) -> dict[str, Any]:
    try:
        body = json.loads(exc.body or "{}")
    except (TypeError, ValueError):
        return {}
    return body if isinstance(body, dict) else {}


def _causes(body: dict[str, Any]) -> list[dict[str, Any]]:
    return list((body.get("details") or {}).get("causes") or [])


def blocked_outcome(namespace: str, body: dict[str, Any]) -> EvictOutcome:
    """Turn a 429 Status body into a BLOCKED outcome naming the budget when it can."""
    texts = [c.get("message", "") for c in _causes(body)] + [body.get("message", "")]
    pdb = None
    message = body.get("message", "") or "blocked by a disruption budget"
    for text in texts:
        match = _BUDGET_RE.search(text) or _PROCESSING_RE.search(text)
        if match:
            pdb = f"{namespace}/{match.group('name')}"
            message = text
            break
    retry = (body.get("details") or {}).get("retryAfterSeconds")
    return EvictOutcome(
        EvictStatus.BLOCKED, message, pdb=pdb, retry_after=float(retry) if retry else None
    )


def evict_pod(
    core: client.CoreV1Api,
    namespace: str,
    name: str,
    *,
    uid: str | None = None,
    grace_period_seconds: int | None = None,
) -> EvictOutcome:
    """Ask the API server to evict one pod; never raises for the expected answers."""
    body = client.V1Eviction(
        metadata=client.V1ObjectMeta(name=name, namespace=namespace),
        delete_options=client.V1DeleteOptions(
            grace_period_seconds=grace_period_seconds,
            preconditions=client.V1Preconditions(uid=uid) if uid else None,
        ),
    )
    try:
        core.create_namespaced_pod_eviction(name, namespace, body, _preload_content=False)
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        return EvictOutcome(EvictStatus.TRANSIENT, f"connection error: {exc}")
    except client.ApiException as exc:
        status = int(exc.status or 0)
        payload = _status_body(exc)
        if status == 404:
            return EvictOutcome(EvictStatus.GONE, "already gone")
        if status == 409 and uid:
            return EvictOutcome(EvictStatus.GONE, "replaced by a pod with another UID")
        if status == 429:
            return blocked_outcome(namespace, payload)
        if status == 403 and any(
            c.get("reason") == "NamespaceTerminating" for c in _causes(payload)
        ):
            return EvictOutcome(
                EvictStatus.NAMESPACE_TERMINATING, f"namespace {namespace} is terminating"
            )
        mapped = from_api_exception(exc, f"evict pod {namespace}/{name}")
        detail = payload.get("message", "")
        return EvictOutcome(EvictStatus.FAILED, f"{mapped} {detail}".strip())
    return EvictOutcome(EvictStatus.EVICTED)
