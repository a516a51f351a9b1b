"""Ctrl-C during a run: stop at the next safe point, not in the middle of a step.

The first SIGINT only asks the run to stop. Steps end at their safe points: between
steps; inside any wait (gates, drains waiting on evictions), which only watches the
world; and an update, whose ``pulumi`` got the same Ctrl-C from the terminal and stops
itself gracefully, finishing the resource operations it had started. The journal says
where the run stopped, the lock is released on the way out, and ``kubeshift run``
continues from there. A second Ctrl-C stops at once, as an operator expects.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

from automation.core.errors import InterruptedRun

_stop = threading.Event()


def stop_requested() -> bool:
    return _stop.is_set()


def request_stop() -> None:
    """Ask the run to stop at its next safe point, as a first Ctrl-C does (a run whose
    lock another process took: ``automation.run.run_lock``)."""
    _stop.set()


def check(where: str) -> None:
    """Raise ``InterruptedRun`` at this safe point if a stop was asked for."""
    if _stop.is_set():
        raise InterruptedRun(f"Stopped on Ctrl-C while {where}.")


@contextmanager
def stop_at_safe_points(notice: Callable[[str], None]) -> Iterator[None]:
    """Within the block, a first Ctrl-C asks for a stop; a second interrupts at once."""
    _stop.clear()
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach the main thread only; nothing to install here
        return

    def on_sigint(_signum: int, _frame: FrameType | None) -> None:
        if _stop.is_set():
            raise KeyboardInterrupt
        _stop.set()
        notice("Stopping at the next safe point; press Ctrl-C again to stop at once.")

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        _stop.clear()
