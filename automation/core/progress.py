"""Progress reporting that hooks and gates use without knowing how it is shown.

Hooks call ``ctx.progress.task("draining nodes", total=12)`` and advance it; the CLI
plugs in a rich-backed reporter, tests and ``--json`` runs a silent one. Long waits
feed ``on_wait`` so every deadline is visible while it runs down.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol

from automation.core.waiting import Pending, summarize


class TaskHandle(Protocol):
    def advance(self, amount: int = 1) -> None: ...
    def update(self, *, completed: int | None = None, detail: str | None = None) -> None: ...


class Reporter(Protocol):
    """Where long work reports how far it has got."""

    def task(
        self, description: str, total: int | None = None
    ) -> AbstractContextManager[TaskHandle]: ...

    def on_wait(self, what: str, status: Pending, remaining: float) -> None: ...


class _NullTask:
    def __init__(self) -> None:
        self.completed = 0
        self.detail = ""

    def advance(self, amount: int = 1) -> None:
        self.completed += amount

    def update(self, *, completed: int | None = None, detail: str | None = None) -> None:
        if completed is not None:
            self.completed = completed
        if detail is not None:
            self.detail = detail

    def __enter__(self) -> _NullTask:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


class NullReporter:
    """Records nothing visible; used by tests, ``--json`` and non-interactive runs."""

    def task(self, description: str, total: int | None = None) -> _NullTask:
        return _NullTask()

    def on_wait(self, what: str, status: Pending, remaining: float) -> None:
        return None


class _RichTask:
    def __init__(self, progress: Any, description: str, total: int | None) -> None:
        self._progress = progress
        self._description = description
        self._id = progress.add_task(description, total=total)

    def advance(self, amount: int = 1) -> None:
        self._progress.advance(self._id, amount)

    def update(self, *, completed: int | None = None, detail: str | None = None) -> None:
        description = f"{self._description} — {detail}" if detail else None
        self._progress.update(self._id, completed=completed, description=description)

    def __enter__(self) -> _RichTask:
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.remove_task(self._id)


class RichReporter:
    """Renders tasks and waits as rich progress bars on the given console."""

    def __init__(self, console: Any) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )
        self._waits: dict[str, Any] = {}

    def __enter__(self) -> RichReporter:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def task(self, description: str, total: int | None = None) -> _RichTask:
        return _RichTask(self._progress, description, total)

    def on_wait(self, what: str, status: Pending, remaining: float) -> None:
        text = f"waiting for {what} ({remaining:.0f}s left)"
        if not status.done:
            text += f": {summarize(status.items, 3)}"
        task_id = self._waits.get(what)
        if task_id is None:
            self._waits[what] = self._progress.add_task(text, total=None)
        elif status.done:
            self._progress.remove_task(task_id)
            del self._waits[what]
        else:
            self._progress.update(task_id, description=text)


WAIT_REPORT_SECONDS = 30.0
"""How often a wait whose pending items do not change is reported again as a line."""


class LogReporter:
    """Waits as log lines, for runs without a terminal (``--json``: one JSON object per
    line, ``event: waiting``): a line when a wait starts, when what it waits for changes,
    at least every :data:`WAIT_REPORT_SECONDS`, and when it ends — so a CI log or a bot
    can follow a long drain without a line per poll."""

    def __init__(
        self, log: logging.Logger | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._log = log or logging.getLogger("kubeshift.waits")
        self._clock = clock
        self._last: dict[str, tuple[tuple[str, ...], float]] = {}

    def task(self, description: str, total: int | None = None) -> _NullTask:
        return _NullTask()

    def on_wait(self, what: str, status: Pending, remaining: float) -> None:
        now = self._clock()
        seen = self._last.get(what)
        if status.done:
            if seen is not None:
                del self._last[what]
                self._log.info("waited for %s: done", what, extra={"event": "waited"})
            return
        if seen is not None and seen[0] == status.items and now - seen[1] < WAIT_REPORT_SECONDS:
            return
        self._last[what] = (status.items, now)
        self._log.info(
            "waiting for %s (%.0fs left): %s", what, remaining, summarize(status.items, 3),
            extra={"event": "waiting", "pending": len(status.items), "remaining": round(remaining)},
        )  # fmt: skip
