"""The one place foreign errors become kubeshift's: kinds and exit codes per case."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError, NoCredentialsError
from kubernetes.client import ApiException

from automation.core.errors import (
    ErrorKind,
    from_api_exception,
    from_client_error,
    translate,
)


def client_error(code: str) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": "nope."}}, "DoThing")


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        ("Throttling", ErrorKind.RETRYABLE),
        ("RouteLimitExceeded", ErrorKind.PRECONDITION),
        ("NoSuchHostedZone", ErrorKind.PRECONDITION),
        ("AccessDenied", ErrorKind.USER),
        ("ExpiredToken", ErrorKind.USER),
        ("SomethingElse", ErrorKind.FATAL),
    ],
    ids=["throttled", "route-limit", "no-zone", "denied", "expired", "other"],
)
def test_client_errors(code: str, kind: ErrorKind) -> None:
    error = from_client_error(client_error(code), "switch DNS")
    assert error.kind is kind
    assert str(error).startswith(f"AWS refused to switch DNS: {code}: nope.")


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (429, ErrorKind.RETRYABLE),
        (403, ErrorKind.USER),
        (404, ErrorKind.PRECONDITION),
        (422, ErrorKind.FATAL),
    ],
    ids=["429", "403", "404", "422"],
)
def test_api_exceptions(status: int, kind: ErrorKind) -> None:
    error = from_api_exception(ApiException(status=status, reason="Why"), "evict pod a/b")
    assert error.kind is kind and "evict pod a/b" in str(error)


def test_translate_botocore_non_client_errors() -> None:
    creds = translate(NoCredentialsError(), "list instances")
    assert creds is not None and creds.kind is ErrorKind.USER
    down = translate(EndpointConnectionError(endpoint_url="http://x"), "list instances")
    assert down is not None and down.kind is ErrorKind.RETRYABLE
    assert translate(ValueError("x"), "anything") is None


def test_a_program_error_is_told_in_its_own_words() -> None:
    from pulumi.automation import errors as auto_errors
    from pulumi.automation._cmd import CommandResult

    from automation.core.errors import from_command_error

    stdout = (
        "Diagnostics:\n  pulumi:pulumi:Stack (kubeshift-local):\n"
        "    error: Program exited with non-zero exit code: 1\n"
        "    error: kubeshift:cluster.dns.zone_id '' is not a Route53 hosted zone id.\n"
    )
    result = CommandResult(
        stdout=stdout,
        stderr="error: an unhandled error occurred: Program exited with non-zero exit code: 1",
        code=255,
    )
    error = from_command_error(auto_errors.CommandError(result), "update the stack")

    assert "zone_id '' is not a Route53 hosted zone id" in str(error)


def test_an_unhandled_exception_in_the_program_is_told_by_its_last_line() -> None:
    from pulumi.automation import errors as auto_errors
    from pulumi.automation._cmd import CommandResult

    from automation.core.errors import from_command_error

    stdout = (
        "Diagnostics:\n  pulumi:pulumi:Stack (kubeshift-local):\n"
        "    error: Program failed with an unhandled exception:\n"
        "    Traceback (most recent call last):\n"
        '      File "/work/__main__.py", line 9, in <module>\n'
        "        main()\n"
        "    KeyError: 'vpc-move'\n"
        "\nResources:\n    1 unchanged\n"
    )
    result = CommandResult(stdout=stdout, stderr="error: update failed", code=255)
    error = from_command_error(auto_errors.CommandError(result), "update the stack")

    assert str(error).endswith("Program failed with an unhandled exception: KeyError: 'vpc-move'")


def test_the_programs_progress_refusal_is_a_failed_precondition() -> None:
    from pulumi.automation import errors as auto_errors
    from pulumi.automation._cmd import CommandResult

    from automation.core.errors import from_command_error

    sentence = (
        "Phase 'retire-old-workers' cannot be updated yet: the stack records no after "
        "drain-workers (hooks and gates), so nothing was changed; run `kubeshift --stack "
        "local hooks drain-workers --before` next."
    )
    stdout = (
        f"    pulumi:pulumi:Stack kubeshift-local running error: {sentence}\n"
        f"Diagnostics:\n  pulumi:pulumi:Stack (kubeshift-local):\n    error: {sentence}\n"
    )
    result = CommandResult(stdout=stdout, stderr="error: preview failed", code=255)
    error = from_command_error(auto_errors.CommandError(result), "preview the stack")

    assert error.kind is ErrorKind.PRECONDITION
    assert str(error) == sentence


def test_an_engine_killed_by_a_signal_points_to_recover() -> None:
    from pulumi.automation._cmd import CommandResult
    from pulumi.automation.errors import create_command_error

    from automation.core.errors import from_command_error

    killed = create_command_error(CommandResult("Updating (local):", "", -9))
    mapped = from_command_error(killed, "update the stack", "local")

    assert "killed (signal 9)" in str(mapped)
    assert "kubeshift --stack local recover" in str(mapped)


def test_a_throttled_answer_carries_its_retry_after() -> None:
    from kubernetes.client import ApiException

    from automation.core.errors import RetryableError, from_api_exception

    throttled = ApiException(status=429, reason="Too Many Requests")
    throttled.headers = {"Retry-After": "3"}
    mapped = from_api_exception(throttled, "evict pod a/b")
    assert isinstance(mapped, RetryableError) and mapped.delay == 3.0
    assert from_api_exception(ApiException(status=503), "list pods").delay is None  # type: ignore[attr-defined]
