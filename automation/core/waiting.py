"""Polling with an interval and a deadline, the one way kubeshift waits for anything.

Gates, drains and DNS syncs all wait on something outside our control. Each wait
names what it waits for, reports what is still pending on every poll (to a progress
callback the CLI renders with rich), and ends in a ``GateTimeoutError`` that lists
the pending items when its deadline passes. Time and sleep are injectable for tests.

A poll that fails with a temporary error (a ``RetryableError``, or a foreign error
``errors.translate`` maps to one: throttling, an API server restarting, AWS out of
reach) counts as "not yet": the wait reports it as pending and polls again until the
deadline, whose ``GateTimeoutError`` then names the last error. Any other error ends
the wait at once, a foreign one translated (``raise ... from exc``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from automation.core import interrupt
from automation.core.errors import ErrorKind, GateTimeoutError, KubeshiftError, translate


@dataclass(frozen=True)
class Pending:
    """The outcome of one poll: done when nothing is pending."""

    items: tuple[str, ...] = ()
    detail: str = ""

    @property
    def done(self) -> bool:
        return not self.items

    @classmethod
    def of(cls, items: Sequence[str], detail: str = "") -> Pending:
        return cls(tuple(sorted(items)), detail)


DONE = Pending()


def summarize(items: Sequence[str], limit: int = 5) -> str:
    """``a, b, c … and 4 more`` — sorted, cut, readable."""
    ordered = sorted(items)
    shown = ", ".join(ordered[:limit])
    extra = len(ordered) - limit
    return f"{shown} … and {extra} more" if extra > 0 else shown


ProgressCallback = Callable[[str, Pending, float], None]


@dataclass
class Deadline:
    """A point in (monotonic) time after which a wait gives up."""

    timeout: float
    clock: Callable[[], float] = time.monotonic
    start: float = field(init=False)

    def __post_init__(self) -> None:
        self.start = self.clock()

    @property
    def remaining(self) -> float:
        return max(0.0, self.start + self.timeout - self.clock())

    @property
    def expired(self) -> bool:
        return self.remaining <= 0.0


def wait_until(
    what: str,
    poll: Callable[[], Pending],
    *,
    timeout: float,
    interval: float,
    on_progress: ProgressCallback | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Pending:
    """Call ``poll`` every ``interval`` seconds until nothing is pending or ``timeout`` passes.

    Returns the final (done) ``Pending``; raises ``GateTimeoutError`` naming the items
    still pending at the deadline, or the temporary error the last poll failed with.
    Permanent errors propagate at once.
    """
    deadline = Deadline(timeout, clock)
    while True:
        interrupt.check(f"waiting for {what}")
        status, error = _poll_once(what, poll)
        if on_progress is not None:
            on_progress(what, status, deadline.remaining)
        if status.done:
            return status
        if deadline.expired:
            raise _timed_out(what, timeout, status, error)
        sleep(min(interval, max(deadline.remaining, 0.01)))


def _poll_once(what: str, poll: Callable[[], Pending]) -> tuple[Pending, KubeshiftError | None]:
    """One poll; a temporary error becomes a pending item naming it (and is returned)."""
    try:
        return poll(), None
    except Exception as exc:
        error = _temporary_or_raise(exc, f"check {what}")
    return Pending.of([f"transient error: {_sentence(error)}"]), error


def _temporary_or_raise(exc: Exception, action: str) -> KubeshiftError:
    """``exc`` as a temporary kubeshift error; a permanent one is raised instead.

    kubeshift's own errors and unknown ones are re-raised unchanged, a foreign one we
    know is raised translated, with ``exc`` as its cause.
    """
    mapped = translate(exc, action)
    if mapped is not None and mapped.kind is ErrorKind.RETRYABLE:
        return mapped
    if mapped is None or mapped is exc:
        raise exc
    raise mapped from exc


def _sentence(error: KubeshiftError, limit: int = 300) -> str:
    """The error as one short line, without its promise to retry or its final period."""
    text = " ".join(str(error).split()).removesuffix(" Will retry.").rstrip(".")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _timed_out(
    what: str, timeout: float, status: Pending, error: KubeshiftError | None
) -> GateTimeoutError:
    """The sentence for a deadline that passed: what is pending, or the last error."""
    waited = f"Timed out after {timeout:.0f}s waiting for {what}"
    if error is not None:
        return GateTimeoutError(f"{waited}; the last check failed: {_sentence(error)}.")
    detail = f" ({status.detail})" if status.detail else ""
    return GateTimeoutError(f"{waited}: still pending {summarize(status.items)}{detail}.")
