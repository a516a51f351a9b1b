"""Where one engine operation's time went, told by the moments its events arrive.

The engine streams its events to the Automation API as they happen (over gRPC since
Pulumi 3.206), so their arrival marks the stretches of a preview or an update:

- ``start``: the CLI starting, the stack's checkpoint loaded, until the engine's
  prelude;
- ``program``: the language host and the program starting (its imports), until the
  first resource's step;
- ``steps``: from the first resource's step to the last (the program's registrations
  and whatever the steps do through their providers);
- ``finish``: from the last resource's step to the summary (the last checkpoint
  writes, plugins shutting down);
- ``after``: what the Automation API reads back once the command ended (an update's
  outputs and its history entry).

The journal keeps these with the preview and update steps; the benchmarks read them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

STRETCHES = ("start", "program", "steps", "finish", "after")


@dataclass
class Timeline:
    """The arrival times of one operation's marking events (``time.monotonic``)."""

    clock: Callable[[], float] = time.monotonic
    began: float = field(init=False)
    prelude: float | None = None
    first_step: float | None = None
    last_step: float | None = None
    summary: float | None = None

    def __post_init__(self) -> None:
        self.began = self.clock()

    def on_event(self, event: Any) -> None:
        now = self.clock()
        if getattr(event, "prelude_event", None) is not None:
            self.prelude = self.prelude or now
        elif getattr(event, "resource_pre_event", None) is not None:
            self.first_step = self.first_step or now
            self.last_step = now
        elif getattr(event, "res_outputs_event", None) is not None:
            self.last_step = now
        elif getattr(event, "summary_event", None) is not None:
            self.summary = now

    def seconds(self) -> dict[str, float]:
        """Seconds per stretch that both its ends were seen for, and ``total``."""
        ended = self.clock()
        marks = [self.began, self.prelude, self.first_step, self.last_step, self.summary, ended]
        spans: dict[str, float] = {}
        for name, start, end in zip(STRETCHES, marks[:-1], marks[1:], strict=True):
            if start is not None and end is not None:
                spans[name] = round(end - start, 2)
        spans["total"] = round(ended - self.began, 2)
        return spans
