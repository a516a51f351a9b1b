"""The API availability probe: was the Kubernetes API answered throughout a phase?

A background thread sends one request every ``interval`` seconds and records whether
it was answered. A gap runs from the first unanswered request to the next answered
one (or to the end of the probe), so a slow machine that sends fewer requests makes
no gap; only requests that went unanswered do. The report counts requests, answers and
gaps, each gap with the first reason given for it; the longest gap is what a phase is
judged by.

The request itself is :func:`readyz`: ``GET /readyz`` on a new connection each time, so
every request resolves the server's name again, as a client that connects afresh does.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

Check = Callable[[], "str | None"]
"""One request: ``None`` when answered, else why not (one short clause)."""

MAX_GAPS_KEPT = 20


@dataclass
class ApiGap:
    start: float  # seconds since the probe started
    end: float | None = None  # None: unanswered still when the report was made
    reason: str = ""

    def length(self, until: float) -> float:
        return (until if self.end is None else self.end) - self.start

    def as_dict(self) -> dict[str, Any]:
        end = None if self.end is None else round(self.end, 3)
        return {"start": round(self.start, 3), "end": end, "reason": self.reason}


@dataclass(frozen=True)
class ApiReport:
    seconds: float
    requests: int
    answered: int
    gaps: tuple[ApiGap, ...] = ()
    earlier_longest: float = 0.0
    """The longest gap of earlier runs of the same phase (a resumed phase)."""

    @property
    def longest_gap(self) -> float:
        return max([self.earlier_longest, *(g.length(self.seconds) for g in self.gaps)])

    @property
    def longest(self) -> ApiGap | None:
        return max(self.gaps, key=lambda g: g.length(self.seconds), default=None)

    def message(self) -> str:
        text = (
            f"API: {self.answered}/{self.requests} requests answered over "
            f"{self.seconds:.0f}s; longest gap {self.longest_gap:.1f}s"
        )
        longest = self.longest
        if longest is not None and longest.reason:
            text += f" ({longest.reason})"
        return text + "."

    def as_dict(self) -> dict[str, Any]:
        return {
            "seconds": round(self.seconds, 3),
            "requests": self.requests,
            "answered": self.answered,
            "longest_gap": round(self.longest_gap, 3),
            "gaps": [g.as_dict() for g in self.gaps[:MAX_GAPS_KEPT]],
        }

    def after(self, earlier: Mapping[str, Any]) -> ApiReport:
        """This report added to an earlier one's ``as_dict`` (the same phase, resumed)."""
        return ApiReport(
            seconds=self.seconds + float(earlier.get("seconds", 0.0)),
            requests=self.requests + int(earlier.get("requests", 0)),
            answered=self.answered + int(earlier.get("answered", 0)),
            gaps=self.gaps,
            earlier_longest=max(self.earlier_longest, float(earlier.get("longest_gap", 0.0))),
        )


@dataclass
class _Tally:
    requests: int = 0
    answered: int = 0
    gaps: list[ApiGap] = field(default_factory=list)
    open_gap: ApiGap | None = None


class ApiProbe:
    """Runs ``check`` every ``interval`` seconds in a thread while the ``with`` block runs,
    and once more after it ended."""

    def __init__(
        self, check: Check, *, interval: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._check = check
        self._interval = interval
        self._clock = clock
        self._tally = _Tally()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._first_sent = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="api-probe", daemon=True)
        self._started = 0.0
        self._ended: float | None = None

    def __enter__(self) -> ApiProbe:
        self._started = self._clock()
        self._thread.start()
        self._first_sent.wait()  # the block starts once its first request is on its way
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._ended = self._clock()

    def _loop(self) -> None:
        """One request as the block starts, one per interval while it runs, and one after
        it ended, however short it was: the report always covers both ends of the phase."""
        while True:
            final = self._stop.is_set()
            sent = self._clock()
            self._first_sent.set()
            self.record(sent - self._started, self._check())
            if final:
                return
            self._stop.wait(max(0.0, self._interval - (self._clock() - sent)))

    def record(self, at: float, reason: str | None) -> None:
        """One request sent ``at`` seconds after the start: answered when ``reason`` is None."""
        with self._lock:
            tally = self._tally
            tally.requests += 1
            if reason is None:
                tally.answered += 1
                if tally.open_gap is not None:
                    tally.open_gap.end = at
                    tally.open_gap = None
            elif tally.open_gap is None:
                tally.open_gap = ApiGap(start=at, reason=reason)
                tally.gaps.append(tally.open_gap)

    def report(self) -> ApiReport:
        with self._lock:
            end = (self._ended if self._ended is not None else self._clock()) - self._started
            gaps = tuple(ApiGap(g.start, g.end, g.reason) for g in self._tally.gaps)
            return ApiReport(end, self._tally.requests, self._tally.answered, gaps)


def readyz(configuration: client.Configuration, timeout: float) -> Check:
    """``GET /readyz`` through ``configuration``'s server, a new connection per request."""
    api = client.ApiClient(configuration)

    def ask() -> str | None:
        method, url, headers, _body, _post = api.param_serialize(
            "GET", "/readyz", header_params={"Connection": "close"}, auth_settings=["BearerToken"]
        )
        try:
            response = api.call_api(method, url, header_params=headers, _request_timeout=timeout)
            response.read()
        except ApiException as exc:
            return f"the API answered {exc.status} {exc.reason}"
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            return f"no answer from the API ({_short(exc)})"
        if response.status != 200:
            return f"the API answered {response.status} {response.reason}"
        return None

    return ask


def _short(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None)
    text = str(reason if reason is not None else exc)
    return text.rsplit(": ", 1)[-1][:160] or type(exc).__name__
