"""Drain summary messages, errors and the dry-run plan text."""

from __future__ import annotations

import pytest

from automation.core.errors import GateTimeoutError, StepFailedError
from automation.kube.drain.filters import PodVerdict, Verdict
from automation.kube.drain.run import DrainPlan, DrainSummary, NodePlan


def test_complete_summary_message() -> None:
    s = DrainSummary(
        evicted=["a/p1", "a/p2"], skipped={"kube-system/ds": "DaemonSet"}, drained_nodes=["n1"]
    )
    s.seconds = 12.3
    assert s.complete
    assert s.message() == "Drained 1/1 node(s) in 12s: evicted 2 pod(s), skipped 1."
    s.raise_for_incomplete()


def test_message_counts_the_api_requests_the_run_sent() -> None:
    s = DrainSummary(evicted=["a/p1", "a/p2"], drained_nodes=["n1"], requests=7)
    assert "evicted 2 pod(s), skipped 0; 7 API request(s)." in s.message()


def test_blocked_message_names_budget_sorted_and_truncated() -> None:
    budget = "ns/web (minAvailable 3; currentHealthy 3, desiredHealthy 3, disruptionsAllowed 0)"
    blocked = {f"ns/web-{i}": budget for i in range(9, 0, -1)}
    s = DrainSummary(blocked=blocked, incomplete_nodes=["n2", "n1"])
    text = s.message(limit=3)
    assert "9 blocked by " + budget in text
    assert "ns/web-1, ns/web-2, ns/web-3 … and 6 more" in text
    assert "nodes not drained: n1, n2" in text
    with pytest.raises(GateTimeoutError, match="disruptionsAllowed 0"):
        s.raise_for_incomplete()


def test_failures_raise_step_failed() -> None:
    s = DrainSummary(failed={"ns/bare": "not managed by a controller (set force)"})
    with pytest.raises(StepFailedError, match=r"ns/bare \(not managed"):
        s.raise_for_incomplete()


def test_as_dict_is_json_shaped() -> None:
    s = DrainSummary(evicted=["b", "a"], pending={"x": "evicted from n1, not yet deleted"})
    d = s.as_dict()
    assert d["evicted"] == ["a", "b"]
    assert d["complete"] is False


def verdict(name: str, v: Verdict, reason: str = "") -> PodVerdict:
    return PodVerdict("ns", name, f"u-{name}", "n1", v, reason)


def test_plan_describe_says_what_would_happen() -> None:
    plan = DrainPlan(
        nodes=(
            NodePlan(
                "n1",
                (
                    verdict("a", Verdict.EVICT),
                    verdict("ds", Verdict.SKIP, "DaemonSet-managed (x)"),
                    verdict("t", Verdict.WAIT, "already terminating"),
                ),
            ),
            NodePlan("n2", (verdict("bare", Verdict.REFUSE, "not managed"),), cordoned=True),
            NodePlan("n3", (), cordoned=True),
        ),
        missing=("n4",),
    )
    lines = plan.describe().splitlines()
    assert lines[0] == (
        "cordon and drain node n1 — evict 1: ns/a; wait for 1 terminating: ns/t; "
        "skip 1: ns/ds (DaemonSet-managed (x))"
    )
    assert lines[1] == "refuse to drain node n2 — blocking 1: ns/bare (not managed)"
    assert lines[2] == "drain node n3 — nothing to evict"
    assert lines[3] == "not found (already gone): n4"
