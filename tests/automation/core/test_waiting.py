"""Polling with deadlines, and the sorted, truncated summaries every message uses."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError
from kubernetes.client import ApiException
from urllib3.exceptions import ProtocolError

from automation.core.errors import (
    GateTimeoutError,
    PreconditionFailed,
    RetryableError,
    StepFailedError,
    UserError,
)
from automation.core.waiting import DONE, Pending, summarize, wait_until


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


class ScriptedPoll:
    """Raises or returns each scripted outcome in turn, then repeats the last one."""

    def __init__(self, outcomes: Iterable[Pending | Exception]) -> None:
        self.outcomes = list(outcomes)
        self.calls = 0

    def __call__(self) -> Pending:
        outcome = self.outcomes[min(self.calls, len(self.outcomes) - 1)]
        self.calls += 1
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


def wait_recording(
    poll: Callable[[], Pending], clock: FakeClock, *, timeout: float = 60
) -> tuple[Pending, list[Pending]]:
    """``wait_until`` on the fake clock; returns its result and every status reported."""
    seen: list[Pending] = []
    result = wait_until(
        "nodes Ready",
        poll,
        timeout=timeout,
        interval=5,
        on_progress=lambda _what, status, _left: seen.append(status),
        clock=clock,
        sleep=clock.sleep,
    )
    return result, seen


def test_a_temporary_error_counts_as_not_yet() -> None:
    clock = FakeClock()
    throttled = RetryableError("the API server is restarting")
    poll = ScriptedPoll([throttled, throttled, DONE])

    result, seen = wait_recording(poll, clock)

    assert result.done
    assert poll.calls == 3
    assert clock.now == 10
    pending, done = seen[:-1], seen[-1]
    assert done.done
    assert [len(status.items) for status in pending] == [1, 1]
    assert all("the API server is restarting" in status.items[0] for status in pending)


def throttling() -> ClientError:
    return ClientError({"Error": {"Code": "Throttling", "Message": "Rate exceeded"}}, "Describe")


@pytest.mark.parametrize(
    ("error", "named"),
    [
        (EndpointConnectionError(endpoint_url="http://127.0.0.1:5999/"), "127.0.0.1:5999"),
        (ApiException(status=503, reason="Service Unavailable"), "503"),
        (ApiException(status=0, reason="Connection reset"), "Connection reset"),
        (throttling(), "Rate exceeded"),
        (ProtocolError("Connection aborted."), "Connection aborted"),
        (ConnectionRefusedError(111, "Connection refused"), "Connection refused"),
        (TimeoutError("timed out"), "timed out"),
    ],
    ids=[
        "aws-unreachable",
        "kube-503",
        "kube-no-status",
        "throttled",
        "urllib3",
        "refused",
        "os-timeout",
    ],
)
def test_foreign_transient_errors_are_ridden_out(error: Exception, named: str) -> None:
    clock = FakeClock()
    poll = ScriptedPoll([error, Pending.of(["node-a"]), error, DONE])

    result, seen = wait_recording(poll, clock)

    assert result.done
    assert poll.calls == 4
    first_error, still_pending, second_error = seen[0], seen[1], seen[2]
    assert still_pending.items == ("node-a",)
    for reported in (first_error, second_error):
        [item] = reported.items
        assert named in item


def test_aws_and_kubernetes_outages_in_one_wait_are_ridden_out() -> None:
    clock = FakeClock()
    aws_down = EndpointConnectionError(endpoint_url="http://127.0.0.1:5999/")
    kube_down = ApiException(status=503, reason="Service Unavailable")
    poll = ScriptedPoll([aws_down, kube_down, Pending.of(["node-a"]), DONE])

    result, _ = wait_recording(poll, clock)

    assert result.done and poll.calls == 4


def test_a_long_error_is_reported_as_one_short_line() -> None:
    clock = FakeClock()
    rambling = RetryableError("the API server is restarting:\n" + "  detail " * 200)
    poll = ScriptedPoll([rambling, DONE])

    _, seen = wait_recording(poll, clock)

    [item] = seen[0].items
    assert "the API server is restarting" in item
    assert "\n" not in item and len(item) < len(str(rambling)) // 2


@pytest.mark.parametrize(
    "error",
    [
        PreconditionFailed("the hosted zone is gone"),
        UserError("bad kubeconfig"),
        StepFailedError("drain failed"),
        ValueError("a bug in the check"),
    ],
    ids=["precondition", "user", "step-failed", "unknown"],
)
def test_permanent_errors_propagate_unchanged_after_one_poll(error: Exception) -> None:
    clock = FakeClock()
    poll = ScriptedPoll([error, DONE])

    with pytest.raises(type(error)) as info:
        wait_recording(poll, clock)

    assert info.value is error
    assert poll.calls == 1 and clock.now == 0


@pytest.mark.parametrize(
    ("status", "kind"),
    [(404, PreconditionFailed), (403, UserError), (422, StepFailedError)],
    ids=["404", "403", "422"],
)
def test_permanent_foreign_errors_propagate_translated_after_one_poll(
    status: int, kind: type[Exception]
) -> None:
    clock = FakeClock()
    refusal = ApiException(status=status, reason="No")
    poll = ScriptedPoll([refusal, DONE])

    with pytest.raises(kind) as info:
        wait_recording(poll, clock)

    assert info.value.__cause__ is refusal
    assert "nodes Ready" in str(info.value)
    assert poll.calls == 1 and clock.now == 0


def test_deadline_during_transient_errors_names_the_last_error() -> None:
    clock = FakeClock()
    poll = ScriptedPoll(
        [
            Pending.of(["node-a"]),
            EndpointConnectionError(endpoint_url="http://127.0.0.1:5999/"),
            ApiException(status=503, reason="Service Unavailable"),
        ]
    )

    with pytest.raises(GateTimeoutError) as info:
        wait_recording(poll, clock, timeout=30)

    message = str(info.value)
    assert "nodes Ready" in message and "30s" in message
    assert "503 Service Unavailable" in message
    assert "127.0.0.1:5999" not in message and "node-a" not in message
    assert "retry" not in message.lower()  # the wait is over: no promise to try again
    assert message.endswith(".") and message.count(". ") == 0 and "\n" not in message
    assert poll.calls == 7


def test_deadline_after_errors_cleared_names_what_is_pending() -> None:
    clock = FakeClock()
    poll = ScriptedPoll([RetryableError("API server restarting"), Pending.of(["node-b"])])

    with pytest.raises(GateTimeoutError) as info:
        wait_recording(poll, clock, timeout=30)

    assert "node-b" in str(info.value)
    assert "restarting" not in str(info.value)


@pytest.mark.parametrize(
    ("items", "expected"),
    [([], ""), (["b", "a"], "a, b"), ([str(i) for i in range(7)], "0, 1, 2, 3, 4 … and 2 more")],
    ids=["empty", "sorted", "cut"],
)
def test_summarize(items: list[str], expected: str) -> None:
    assert summarize(items) == expected
