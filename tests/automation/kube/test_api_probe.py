"""The API probe's accounting (gaps from the first unanswered request to the next
answered one) and its request, against the session's real API server."""

from __future__ import annotations

import threading

import pytest

from automation.kube.api_probe import ApiProbe, readyz
from automation.kube.clients import KubeClients
from tests.support.waiting import eventually


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _recorded(*requests: tuple[float, str | None], until: float) -> ApiProbe:
    clock = Clock()
    probe = ApiProbe(lambda: None, interval=1.0, clock=clock)
    for at, reason in requests:
        probe.record(at, reason)
    clock.now = until
    return probe


def test_a_gap_runs_from_the_first_unanswered_request_to_the_next_answered_one() -> None:
    probe = _recorded(
        (0, None), (1, "member 1 stopped"), (2, "still stopped"), (3.5, None), (4, "again"),
        until=5,
    )  # fmt: skip
    report = probe.report()
    assert (report.requests, report.answered) == (5, 2)
    assert [(g.start, g.end, g.reason) for g in report.gaps] == [
        (1, 3.5, "member 1 stopped"),
        (4, None, "again"),
    ]
    assert report.longest_gap == 2.5
    assert "2/5 requests answered" in report.message()
    assert "longest gap 2.5s (member 1 stopped)" in report.message()


def test_requests_that_come_late_but_are_answered_make_no_gap() -> None:
    report = _recorded((0, None), (12, None), (30, None), until=31).report()
    assert report.gaps == () and report.longest_gap == 0


def test_a_resumed_phase_adds_to_what_its_first_run_saw() -> None:
    first = _recorded((0, None), (1, "down"), (8, None), until=9).report()
    second = _recorded((0, None), (1, None), until=2).report().after(first.as_dict())
    assert (second.requests, second.answered) == (5, 4)
    assert second.longest_gap == 7
    assert second.seconds == 11


def test_a_block_shorter_than_the_interval_is_asked_at_its_start_and_after_its_end() -> None:
    block_over = threading.Event()
    asked_after_the_block: list[bool] = []

    def ask() -> None:
        asked_after_the_block.append(block_over.is_set())

    with ApiProbe(ask, interval=60) as probe:
        eventually("the first request", lambda: asked_after_the_block, until=bool, timeout=10)
        block_over.set()

    assert asked_after_the_block == [False, True]
    assert probe.report().requests == 2

    with ApiProbe(lambda: None, interval=60) as empty:
        pass
    assert empty.report().requests == 2  # even a block that does nothing


@pytest.mark.controlplane
def test_readyz_is_answered_by_a_running_api_server_and_not_by_a_closed_port(
    kube: KubeClients,
) -> None:
    configuration = kube.api_client.configuration
    assert readyz(configuration, timeout=5)() is None

    import copy
    import socket

    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    closed = copy.copy(configuration)
    closed.host = f"https://127.0.0.1:{port}"
    reason = readyz(closed, timeout=5)()
    assert reason is not None and reason.startswith("no answer from the API")
