"""Polling with an interval and a deadline, the one way kubeshift waits for anything.

Gates, drains and DNS syncs all wait on something outside our control. Each wait
names what it waits for, reports what is still pending on every poll (to a progress
callback the CLI renders with rich), and ends in a ``GateTimeoutError`` that lists
the pending items when its deadline passes. Time and sleep are injectable for tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from automation.errors import GateTimeoutError


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
    still pending at the deadline.
    """
    deadline = Deadline(timeout, clock)
    while True:
        status = poll()
        if on_progress is not None:
            on_progress(what, status, deadline.remaining)
        if status.done:
            return status
        if deadline.expired:
            detail = f" ({status.detail})" if status.detail else ""
            raise GateTimeoutError(
                f"Timed out after {timeout:.0f}s waiting for {what}: still pending "
                f"{summarize(status.items)}{detail}."
            )
        sleep(min(interval, max(deadline.remaining, 0.01)))
