"""automation/sandbox/pacing.py: pollers slow down while idle and speed up on work."""

from __future__ import annotations

from automation.sandbox.pacing import Pace


def test_idle_passes_double_the_wait_up_to_the_slowest_and_work_brings_it_back() -> None:
    pace = Pace(fastest=1.0, slowest=4.0)

    waits = [pace.after(busy) for busy in (False, False, False, False, True, False)]

    assert waits == [2.0, 4.0, 4.0, 4.0, 1.0, 2.0]


def test_a_fastest_above_the_slowest_is_kept() -> None:
    """A caller's own interval (a slow test bridge) is never shortened."""
    pace = Pace(fastest=5.0, slowest=4.0)

    assert [pace.after(False), pace.after(True)] == [5.0, 5.0]
