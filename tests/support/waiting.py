"""``eventually``: poll a probe with a deadline and say what was last seen on failure."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def eventually(
    what: str,
    probe: Callable[[], T],
    *,
    until: Callable[[T], bool] = bool,
    timeout: float = 60.0,
    interval: float = 0.25,
) -> T:
    """Call ``probe`` until ``until(result)`` holds; return that result.

    On timeout raise ``AssertionError`` naming ``what`` and the last result, so a
    failing test says what it was waiting for and what it saw instead.
    """
    deadline = time.monotonic() + timeout
    last: object = None
    while True:
        try:
            result = probe()
            if until(result):
                return result
            last = result
        except Exception as exc:  # API errors while objects settle count as "not yet"
            last = exc
        if time.monotonic() > deadline:
            raise AssertionError(
                f"timed out after {timeout:.0f}s waiting for {what}; last: {last!r}"
            )
        time.sleep(interval)
