"""A pod counts as a Ready replica only while Ready and not being deleted."""

from typing import Any

import pytest

from automation.kube.pods import pod_ready


def _pod(*conditions: tuple[str, str], deleting: bool = False) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "web-1"}
    if deleting:
        metadata["deletionTimestamp"] = "2026-11-26T12:00:00Z"
    return {
        "metadata": metadata,
        "status": {"conditions": [{"type": t, "status": s} for t, s in conditions]},
    }


def test_a_pod_whose_ready_condition_is_true_is_ready() -> None:
    assert pod_ready(_pod(("PodScheduled", "True"), ("Ready", "True")))


def test_a_ready_pod_being_deleted_no_longer_counts() -> None:
    assert not pod_ready(_pod(("Ready", "True"), deleting=True))


@pytest.mark.parametrize(
    "conditions",
    [(("Ready", "False"),), (("ContainersReady", "True"),), ()],
    ids=["not-ready", "containers-ready-only", "no-conditions"],
)
def test_a_pod_without_a_true_ready_condition_is_not_ready(
    conditions: tuple[tuple[str, str], ...],
) -> None:
    assert not pod_ready(_pod(*conditions))


def test_a_pod_the_api_has_not_given_a_status_is_not_ready() -> None:
    assert not pod_ready({"metadata": {"name": "web-1"}})
