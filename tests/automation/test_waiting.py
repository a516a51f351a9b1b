"""Polling with deadlines, and the sorted, truncated summaries every message uses."""

from __future__ import annotations

import pytest

from automation.errors import GateTimeoutError
from automation.waiting import DONE, Pending, summarize, wait_until


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_wait_returns_once_nothing_is_pending() -> None:
    clock = FakeClock()
    answers = iter([Pending.of(["b", "a"]), Pending.of(["a"]), DONE])
    seen: list[tuple[str, ...]] = []
    result = wait_until(
        "nodes Ready",
        lambda: next(answers),
        timeout=60,
        interval=5,
        on_progress=lambda _w, status, _r: seen.append(status.items),
        clock=clock,
        sleep=clock.sleep,
    )
    assert result.done
    assert seen == [("a", "b"), ("a",), ()]
    assert clock.now == 10


def test_wait_times_out_naming_pending_items() -> None:
    clock = FakeClock()
    with pytest.raises(GateTimeoutError) as info:
        wait_until(
            "routes created",
            lambda: Pending.of([f"node-{i}" for i in range(8)], "reason not RouteCreated"),
            timeout=30,
            interval=10,
            clock=clock,
            sleep=clock.sleep,
        )
    assert str(info.value) == (
        "Timed out after 30s waiting for routes created: still pending node-0, node-1, "
        "node-2, node-3, node-4 … and 3 more (reason not RouteCreated)."
    )


@pytest.mark.parametrize(
    ("items", "expected"),
    [([], ""), (["b", "a"], "a, b"), ([str(i) for i in range(7)], "0, 1, 2, 3, 4 … and 2 more")],
    ids=["empty", "sorted", "cut"],
)
def test_summarize(items: list[str], expected: str) -> None:
    assert summarize(items) == expected
