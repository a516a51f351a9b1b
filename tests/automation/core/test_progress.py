"""Waits as log lines for runs without a terminal: one line when a wait starts, when
what it waits for changes, at least every 30 s, and when it ends — never one per poll."""

from __future__ import annotations

import io
import json
import logging

from automation.core.logs import JsonFormatter
from automation.core.progress import WAIT_REPORT_SECONDS, LogReporter
from automation.core.waiting import DONE, Pending


def test_a_wait_is_a_few_json_lines_not_one_per_poll() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    log = logging.getLogger("test.waits")
    log.handlers[:] = [handler]
    log.propagate = False
    log.setLevel(logging.INFO)
    now = [0.0]
    reporter = LogReporter(log, clock=lambda: now[0])

    every = int(WAIT_REPORT_SECONDS)
    for second in range(3 * every + 5):  # a drain polled every second
        now[0] = float(second)
        pending = ("node-a", "node-b") if second < 2 * every else ("node-b",)
        reporter.on_wait("the drain", Pending.of(pending), 600.0 - second)
    reporter.on_wait("the drain", DONE, 500.0)

    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [(line["event"], line.get("pending")) for line in lines] == [
        ("waiting", 2),  # started
        ("waiting", 2),  # a report interval on, nothing changed
        ("waiting", 1),  # what it waits for changed
        ("waiting", 1),  # a report interval after that
        ("waited", None),
    ]
    assert lines[0]["remaining"] == 600 and "node-a, node-b" in lines[0]["message"]
