"""The availability probe's bookkeeping, fed EndpointSlice events with a fake clock."""

from __future__ import annotations

import json
from typing import Any

from automation.kube.probe import AvailabilityProbe, no_zero_endpoint_interval, ready_endpoints


def eps(service: str, slice_name: str, *ready: bool | None, ns: str = "ns") -> dict[str, Any]:
    return {
        "metadata": {
            "name": slice_name,
            "namespace": ns,
            "labels": {"kubernetes.io/service-name": service},
        },
        "endpoints": [
            {
                "addresses": [f"10.0.0.{i}"],
                "conditions": {} if r is None else {"ready": r},
                "targetRef": {"uid": f"{slice_name}-{i}"},
            }
            for i, r in enumerate(ready)
        ],
    }


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def probe(clock: Clock, *services: str) -> AvailabilityProbe:
    p = AvailabilityProbe(discovery=None, services=services, clock=clock)  # type: ignore[arg-type]
    p._t0 = clock()
    return p


def test_ready_endpoints_counts_distinct_ready() -> None:
    a = eps("web", "s1", True, False, None)
    b = eps("web", "s2", True)
    b["endpoints"][0]["targetRef"]["uid"] = "s1-0"  # same pod listed twice
    assert ready_endpoints([a, b]) == 2


def test_min_and_zero_intervals() -> None:
    clock = Clock()
    p = probe(clock, "ns/web", "ns/api")
    p._sync([eps("web", "w1", True, True), eps("api", "a1", True), eps("other", "o", True)])
    clock.now = 101.0
    p._event("MODIFIED", eps("web", "w1", True, False))
    clock.now = 102.0
    p._event("MODIFIED", eps("api", "a1", False))
    clock.now = 103.5
    p._event("MODIFIED", eps("api", "a1", True))
    clock.now = 104.0
    p._event("DELETED", eps("web", "w1"))
    clock.now = 110.0
    report = p.stop()
    web, api = report.services["ns/web"], report.services["ns/api"]
    assert (web.min_ready, web.max_ready, web.ready) == (0, 2, 0)
    assert [(z.start, z.end) for z in web.zero_intervals] == [(4.0, None)]
    assert [(z.start, z.end) for z in api.zero_intervals] == [(2.0, 3.5)]
    assert report.min_ready == 0 and not report.zero_downtime
    assert report.seconds == 10.0
    assert "2 of 2 service(s) had no ready endpoint" in report.message()
    gate = no_zero_endpoint_interval(report)
    assert gate.items == (
        "service ns/api: no ready endpoint from 2.0s to 3.5s",
        "service ns/web: no ready endpoint from 4.0s to still",
    )
    json.dumps(report.as_dict())  # JSON-able


def test_service_without_slices_starts_at_zero() -> None:
    clock = Clock()
    p = probe(clock, "ns/web")
    p._sync([])
    clock.now = 100.5
    p._event("ADDED", eps("web", "w1", True))
    report = p.report()
    assert [(z.start, z.end) for z in report.services["ns/web"].zero_intervals] == [(0.0, 0.5)]


def test_zero_downtime_report_passes_gate() -> None:
    clock = Clock()
    p = probe(clock, "ns/web")
    p._sync([eps("web", "w1", True, True, True)])
    p._event("MODIFIED", eps("web", "w1", True, True, False))
    report = p.stop()
    assert report.zero_downtime and report.min_ready == 2
    assert no_zero_endpoint_interval(report).done
    assert "kept ready endpoints" in report.message()
