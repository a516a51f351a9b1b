"""Eviction answers mapped to outcomes, with recorded API Status bodies."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes.client import ApiException

from automation.kube.drain.evict import EvictStatus, blocked_outcome, evict_pod

PDB_429 = {
    "kind": "Status",
    "status": "Failure",
    "message": "Cannot evict pod as it would violate the pod's disruption budget.",
    "reason": "TooManyRequests",
    "details": {
        "causes": [
            {
                "reason": "DisruptionBudget",
                "message": "The disruption budget web-pdb needs 3 healthy pods and has 3 currently",
            }
        ]
    },
    "code": 429,
}
PROCESSING_429 = {
    "kind": "Status",
    "message": "the disruption budget web-pdb is still being processed by the server",
    "reason": "TooManyRequests",
    "details": {"retryAfterSeconds": 10},
    "code": 429,
}
NS_TERMINATING_403 = {
    "kind": "Status",
    "message": 'pods "p" is forbidden: unable to create new content in namespace ns because '
    "it is being terminated",
    "reason": "Forbidden",
    "details": {"causes": [{"reason": "NamespaceTerminating", "message": "namespace ns"}]},
    "code": 403,
}


class FakeCore:
    """Records eviction bodies and answers with a scripted ApiException (or success)."""

    def __init__(self, status: int | None, body: dict[str, Any] | None = None) -> None:
        self.status, self.body = status, body
        self.calls: list[Any] = []

    def create_namespaced_pod_eviction(self, name: str, namespace: str, body: Any, **kw: Any):
        self.calls.append((name, namespace, body, kw))
        if self.status is None:
            return object()
        exc = ApiException(status=self.status, reason="x")
        exc.body = json.dumps(self.body or {})
        raise exc


@pytest.mark.parametrize(
    ("status", "body", "expected", "pdb"),
    [
        (None, None, EvictStatus.EVICTED, None),
        (404, {"code": 404}, EvictStatus.GONE, None),
        (409, {"code": 409}, EvictStatus.GONE, None),
        (429, PDB_429, EvictStatus.BLOCKED, "ns/web-pdb"),
        (429, PROCESSING_429, EvictStatus.BLOCKED, "ns/web-pdb"),
        (403, NS_TERMINATING_403, EvictStatus.NAMESPACE_TERMINATING, None),
        (403, {"code": 403, "message": "rbac says no"}, EvictStatus.FAILED, None),
        (500, {"code": 500, "message": "This pod has more than one PodDisruptionBudget"},
         EvictStatus.FAILED, None),
    ],
    ids=["201", "404", "409-uid", "429-budget", "429-processing", "403-ns", "403", "500"],
)  # fmt: skip
def test_outcomes(status: int | None, body: dict | None, expected: EvictStatus, pdb: str) -> None:
    core = FakeCore(status, body)
    outcome = evict_pod(core, "ns", "p", uid="u1", grace_period_seconds=5)  # type: ignore[arg-type]
    assert outcome.status is expected
    assert outcome.pdb == pdb
    (_, _, sent, kw) = core.calls[0]
    assert sent.delete_options.preconditions.uid == "u1"
    assert sent.delete_options.grace_period_seconds == 5
    assert kw == {"_preload_content": False}


def test_failed_message_names_pod_and_server_message() -> None:
    core = FakeCore(500, {"message": "This pod has more than one PodDisruptionBudget"})
    outcome = evict_pod(core, "ns", "p")  # type: ignore[arg-type]
    assert "evict pod ns/p" in outcome.message
    assert "more than one PodDisruptionBudget" in outcome.message


def test_blocked_outcome_keeps_server_hint_and_message() -> None:
    outcome = blocked_outcome("ns", PROCESSING_429)
    assert outcome.retry_after == 10.0
    assert "still being processed" in outcome.message
    assert blocked_outcome("ns", {}).pdb is None


def test_connection_errors_are_transient() -> None:
    class Broken:
        def create_namespaced_pod_eviction(self, *a: Any, **kw: Any) -> None:
            raise ConnectionResetError("reset by peer")

    outcome = evict_pod(Broken(), "ns", "p")  # type: ignore[arg-type]
    assert outcome.status is EvictStatus.TRANSIENT
    assert "reset by peer" in outcome.message
