"""Availability probe: did any Service in scope lose all its ready endpoints?

Runs in the background while a phase moves workloads. It watches EndpointSlices (the
data kube-proxy and ingress controllers route by) and records, per Service, the
minimum number of ready endpoints and every interval during which there were none.
A phase is called zero-downtime when no Service had such an interval; the gate
``no_zero_endpoint_interval`` turns the report into ``Pending``.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubernetes import client

from automation.core.waiting import Pending, summarize
from automation.kube.watching import ListWatcher

SERVICE_LABEL = "kubernetes.io/service-name"


@dataclass
class ZeroInterval:
    start: float  # seconds since the probe started
    end: float | None = None  # None: still at zero when the report was made

    def as_dict(self) -> dict[str, float | None]:
        return {
            "start": round(self.start, 3),
            "end": None if self.end is None else round(self.end, 3),
        }


@dataclass
class ServiceAvailability:
    service: str
    ready: int = 0
    min_ready: int | None = None
    max_ready: int = 0
    changes: int = 0
    zero_intervals: list[ZeroInterval] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "service": self.service,
            "ready": self.ready,
            "min_ready": self.min_ready,
            "max_ready": self.max_ready,
            "changes": self.changes,
            "zero_intervals": [z.as_dict() for z in self.zero_intervals],
        }


@dataclass
class ProbeReport:
    started_at: str
    seconds: float
    services: dict[str, ServiceAvailability]

    @property
    def zero_downtime(self) -> bool:
        return all(not s.zero_intervals for s in self.services.values())

    @property
    def min_ready(self) -> int | None:
        values = [s.min_ready for s in self.services.values() if s.min_ready is not None]
        return min(values) if values else None

    def message(self) -> str:
        down = sorted(k for k, s in self.services.items() if s.zero_intervals)
        if not down:
            return (
                f"{len(self.services)} service(s) kept ready endpoints for {self.seconds:.0f}s "
                f"(minimum {self.min_ready})."
            )
        return (
            f"{len(down)} of {len(self.services)} service(s) had no ready endpoint for a "
            f"while: {summarize(down)}."
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "started_at": self.started_at,
            "seconds": round(self.seconds, 3),
            "zero_downtime": self.zero_downtime,
            "min_ready": self.min_ready,
            "services": {k: v.as_dict() for k, v in sorted(self.services.items())},
        }


def ready_endpoints(slices: Iterable[Mapping[str, Any]]) -> int:
    """Distinct ready endpoints across a Service's slices (``ready`` unset counts as ready)."""
    seen: set[str] = set()
    for sl in slices:
        for ep in sl.get("endpoints") or []:
            ready = (ep.get("conditions") or {}).get("ready")
            if ready is False:
                continue
            ref = ep.get("targetRef") or {}
            seen.add(ref.get("uid") or ",".join(sorted(ep.get("addresses") or [])))
    return len(seen)


class AvailabilityProbe:
    """Watch EndpointSlices of ``services`` (``namespace/name``) from ``start`` to ``stop``."""

    def __init__(
        self,
        discovery: client.DiscoveryV1Api,
        services: Iterable[str],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._discovery = discovery
        self._clock = clock
        self._lock = threading.Lock()
        self._slices: dict[str, dict[str, Any]] = {}  # ns/slice -> slice
        self._services = {s: ServiceAvailability(s) for s in sorted(set(services))}
        self._t0 = 0.0
        self._started_at = ""
        self._stopped_at: float | None = None
        self._watcher: ListWatcher | None = None

    # --- lifecycle -------------------------------------------------------------------
    def start(self) -> AvailabilityProbe:
        self._t0 = self._clock()
        self._started_at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        namespaces = {s.split("/", 1)[0] for s in self._services}
        kwargs: dict[str, Any] = {"label_selector": SERVICE_LABEL}
        if len(namespaces) == 1:
            call: Any = self._discovery.list_namespaced_endpoint_slice
            args: tuple[Any, ...] = (next(iter(namespaces)),)
        else:
            call, args = self._discovery.list_endpoint_slice_for_all_namespaces, ()
        self._watcher = ListWatcher(
            call, *args, name="EndpointSlices", on_sync=self._sync, on_event=self._event, **kwargs
        ).start()
        return self

    def stop(self) -> ProbeReport:
        if self._watcher is not None:
            self._watcher.stop()
        with self._lock:
            if self._stopped_at is None:
                self._stopped_at = self._clock() - self._t0
        return self.report()

    def __enter__(self) -> AvailabilityProbe:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- state -----------------------------------------------------------------------
    @staticmethod
    def _slice_key(sl: Mapping[str, Any]) -> str:
        meta = sl.get("metadata") or {}
        return f"{meta.get('namespace')}/{meta.get('name')}"

    @staticmethod
    def _service_of(sl: Mapping[str, Any]) -> str:
        meta = sl.get("metadata") or {}
        return f"{meta.get('namespace')}/{(meta.get('labels') or {}).get(SERVICE_LABEL)}"

    def _sync(self, items: list[dict[str, Any]]) -> None:
        with self._lock:
            self._slices = {
                self._slice_key(s): s for s in items if self._service_of(s) in self._services
            }
            for name in self._services:
                self._recount(name)

    def _event(self, kind: str, sl: dict[str, Any]) -> None:
        service = self._service_of(sl)
        if service not in self._services:
            return
        with self._lock:
            if kind == "DELETED":
                self._slices.pop(self._slice_key(sl), None)
            else:
                self._slices[self._slice_key(sl)] = sl
            self._recount(service)

    def observe(self, service: str, ready: int) -> None:
        """Record a ready-endpoint count for ``service`` now (the watch calls this)."""
        with self._lock:
            self._record(service, ready)

    def _recount(self, service: str) -> None:
        slices = [s for s in self._slices.values() if self._service_of(s) == service]
        self._record(service, ready_endpoints(slices))

    def _record(self, service: str, ready: int) -> None:
        state = self._services[service]
        now = self._clock() - self._t0
        if state.min_ready is not None and ready != state.ready:
            state.changes += 1
        state.ready = ready
        state.min_ready = ready if state.min_ready is None else min(state.min_ready, ready)
        state.max_ready = max(state.max_ready, ready)
        open_interval = state.zero_intervals and state.zero_intervals[-1].end is None
        if ready == 0 and not open_interval:
            state.zero_intervals.append(ZeroInterval(now))
        elif ready > 0 and open_interval:
            state.zero_intervals[-1].end = now

    def report(self) -> ProbeReport:
        """A snapshot (the probe may keep running)."""
        with self._lock:
            seconds = self._stopped_at if self._stopped_at is not None else self._clock() - self._t0
            services = {
                k: ServiceAvailability(
                    v.service,
                    v.ready,
                    v.min_ready,
                    v.max_ready,
                    v.changes,
                    [ZeroInterval(z.start, z.end) for z in v.zero_intervals],
                )
                for k, v in self._services.items()
            }
        return ProbeReport(self._started_at, seconds, services)


def no_zero_endpoint_interval(report: ProbeReport) -> Pending:
    """Gate: pending lists every Service that had an interval without ready endpoints."""
    items = []
    for name, state in sorted(report.services.items()):
        for z in state.zero_intervals:
            end = "still" if z.end is None else f"{z.end:.1f}s"
            items.append(f"service {name}: no ready endpoint from {z.start:.1f}s to {end}")
    return Pending.of(items, report.message())
