"""Drain filters: kubectl's verdicts, table-driven on pod JSON."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from automation.kube.drain.filters import DrainOptions, Verdict, plan_pods, verdict_for

NOW = dt.datetime(2026, 1, 1, 12, 0, 0, tzinfo=dt.UTC)


def pod(
    name: str = "p",
    *,
    owner: str | None = "ReplicaSet",
    annotations: dict[str, str] | None = None,
    volumes: list[dict[str, Any]] | None = None,
    phase: str = "Running",
    deleted: str | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": "ns",
        "uid": f"uid-{name}",
        "labels": labels or {},
        "annotations": annotations or {},
    }
    if owner:
        meta["ownerReferences"] = [{"kind": owner, "name": "o", "controller": True}]
    if deleted:
        meta["deletionTimestamp"] = deleted
    return {
        "metadata": meta,
        "spec": {"nodeName": "n1", "volumes": volumes or []},
        "status": {"phase": phase},
    }


CASES = [
    ("replicaset", pod(), DrainOptions(), Verdict.EVICT, ""),
    ("daemonset skipped", pod(owner="DaemonSet"), DrainOptions(), Verdict.SKIP, "DaemonSet"),
    (
        "daemonset refused",
        pod(owner="DaemonSet"),
        DrainOptions(ignore_daemonsets=False),
        Verdict.REFUSE,
        "ignore_daemonsets",
    ),
    (
        "mirror pod",
        pod(owner="Node", annotations={"kubernetes.io/config.mirror": "abc"}),
        DrainOptions(force=True),
        Verdict.SKIP,
        "mirror",
    ),
    ("unmanaged refused", pod(owner=None), DrainOptions(), Verdict.REFUSE, "force"),
    ("unmanaged forced", pod(owner=None), DrainOptions(force=True), Verdict.EVICT, "forced"),
    ("unmanaged finished", pod(owner=None, phase="Succeeded"), DrainOptions(), Verdict.EVICT, ""),
    (
        "emptydir refused",
        pod(volumes=[{"name": "v", "emptyDir": {}}]),
        DrainOptions(force=True),
        Verdict.REFUSE,
        "delete_emptydir_data",
    ),
    (
        "emptydir allowed",
        pod(volumes=[{"name": "v", "emptyDir": {}}]),
        DrainOptions(delete_emptydir_data=True),
        Verdict.EVICT,
        "",
    ),
    (
        "emptydir finished",
        pod(volumes=[{"name": "v", "emptyDir": {}}], phase="Failed"),
        DrainOptions(),
        Verdict.EVICT,
        "",
    ),
    (
        "terminating waited for",
        pod(deleted="2026-01-01T11:59:50Z"),
        DrainOptions(),
        Verdict.WAIT,
        "terminating",
    ),
    (
        "terminating too long skipped",
        pod(deleted="2026-01-01T11:50:00Z"),
        DrainOptions(skip_wait_for_delete_timeout=60),
        Verdict.SKIP,
        "terminating for 600s",
    ),
    (
        "terminating recently still waited",
        pod(deleted="2026-01-01T11:59:30Z"),
        DrainOptions(skip_wait_for_delete_timeout=60),
        Verdict.WAIT,
        "",
    ),
    (
        "terminating daemonset pod is waited for, like kubectl",
        pod(owner="DaemonSet", deleted="2026-01-01T11:59:50Z"),
        DrainOptions(),
        Verdict.WAIT,
        "",
    ),
]


@pytest.mark.parametrize(
    ("pod_json", "options", "verdict", "reason"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_verdict(pod_json: dict, options: DrainOptions, verdict: Verdict, reason: str) -> None:
    got, why = verdict_for(pod_json, options, now=NOW)
    assert got is verdict
    assert reason in why


def test_plan_pods_sorts_and_applies_pod_selector() -> None:
    pods = [
        pod("b", labels={"app": "web"}),
        pod("a", labels={"app": "web"}),
        pod("c", labels={"app": "db"}),
    ]
    plan = plan_pods(pods, DrainOptions(pod_selector={"app": "web"}), now=NOW)
    assert [p.key for p in plan] == ["ns/a", "ns/b"]
    assert all(p.node == "n1" and p.uid.startswith("uid-") for p in plan)
