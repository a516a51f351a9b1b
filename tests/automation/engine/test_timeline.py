"""An operation's time is split at the arrival of its prelude, first and last resource
events and summary; a stretch whose ends were not both seen is left out."""

from __future__ import annotations

from types import SimpleNamespace

from automation.engine.timeline import Timeline


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _event(kind: str) -> SimpleNamespace:
    return SimpleNamespace(**{kind: object()})


def test_each_stretch_runs_from_one_marking_event_to_the_next() -> None:
    clock = Clock()
    timeline = Timeline(clock=clock)
    for at, kind in [
        (101.0, "prelude_event"),
        (103.5, "resource_pre_event"),  # the stack resource
        (104.0, "diagnostic_event"),
        (106.0, "resource_pre_event"),
        (107.0, "res_outputs_event"),
        (108.0, "summary_event"),
    ]:
        clock.now = at
        timeline.on_event(_event(kind))
    clock.now = 110.0

    assert timeline.seconds() == {
        "start": 1.0,
        "program": 2.5,
        "steps": 3.5,
        "finish": 1.0,
        "after": 2.0,
        "total": 10.0,
    }


def test_an_operation_that_failed_before_its_program_ran_has_only_its_start() -> None:
    clock = Clock()
    timeline = Timeline(clock=clock)
    clock.now = 100.5
    timeline.on_event(_event("prelude_event"))
    clock.now = 102.0

    assert timeline.seconds() == {"start": 0.5, "total": 2.0}
