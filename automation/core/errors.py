"""kubeshift's own error types, and the one place foreign errors are mapped onto them.

Every error carries a kind that decides what the runner does next (retry, stop, ask
the user to fix something) and the CLI's exit code. Pulumi ``CommandError``s,
kubernetes ``ApiException``s and botocore ``ClientError``s are translated here and
nowhere else, always with ``raise ... from exc`` so the cause stays inspectable.
"""

from __future__ import annotations

import enum
import logging
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from automation.engine.lock import LockHolder


class ErrorKind(enum.Enum):
    USER = "user"  # bad input: config, flags, kubeconfig, missing CLI
    PRECONDITION = "precondition"  # the world is not in a state where the step is safe
    RETRYABLE = "retryable"  # transient: throttling, conflicts, budgets not yet allowing
    GATE_TIMEOUT = "gate-timeout"  # a gate's deadline passed with work still pending
    FATAL = "fatal"  # a step failed and must not be retried blindly
    LOCKED = "locked"  # another run holds the stack
    INTERRUPTED = "interrupted"  # Ctrl-C: stopped at a safe point


EXIT_CODES: dict[ErrorKind, int] = {
    ErrorKind.USER: 2,
    ErrorKind.PRECONDITION: 3,
    ErrorKind.GATE_TIMEOUT: 4,
    ErrorKind.FATAL: 5,
    ErrorKind.RETRYABLE: 5,
    ErrorKind.LOCKED: 6,
    ErrorKind.INTERRUPTED: 130,
}


class KubeshiftError(Exception):
    """Base error: one sentence for a human, a kind for the machine."""

    kind: ErrorKind = ErrorKind.FATAL

    def __init__(self, message: str, *, kind: ErrorKind | None = None) -> None:
        super().__init__(message)
        if kind is not None:
            self.kind = kind

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.kind]


class UserError(KubeshiftError):
    kind = ErrorKind.USER


class ConfigError(UserError):
    """The stack configuration is invalid; the message names the key."""


class EngineMissingError(UserError):
    """The ``pulumi`` CLI is not installed or not on PATH."""


class StackNotFoundError(UserError):
    """The named stack does not exist in the backend."""


class StackLockedError(KubeshiftError):
    """Another update (or another kubeshift run) holds the stack.

    ``holders`` lists the engine lock's owners when the backend names them.
    """

    kind = ErrorKind.LOCKED

    def __init__(self, message: str, *, holders: Sequence[LockHolder] = ()) -> None:
        super().__init__(message)
        self.holders = tuple(holders)


class PreconditionFailed(KubeshiftError):
    kind = ErrorKind.PRECONDITION


class BlastRadiusError(PreconditionFailed):
    """A preview contains changes the phase does not allow."""


class RetryableError(KubeshiftError):
    """A temporary error: trying again later may succeed.

    ``delay`` is how long to wait first when the source says (a Retry-After header,
    a throttling answer); None leaves it to the caller's own back-off.
    """

    kind = ErrorKind.RETRYABLE

    def __init__(self, message: str, *, delay: float | None = None) -> None:
        super().__init__(message)
        self.delay = delay


class GateTimeoutError(KubeshiftError):
    kind = ErrorKind.GATE_TIMEOUT


class StepFailedError(KubeshiftError):
    kind = ErrorKind.FATAL


class InterruptedRun(KubeshiftError):
    """The operator pressed Ctrl-C; the run stopped at a safe point."""

    kind = ErrorKind.INTERRUPTED


# --- mapping foreign errors -------------------------------------------------------------

_RETRYABLE_HTTP = {409, 429, 500, 502, 503, 504}
_RETRYABLE_AWS_CODES = {
    "Throttling",
    "ThrottlingException",
    "RequestLimitExceeded",
    "PriorRequestNotComplete",
    "RequestExpired",
    "ServiceUnavailable",
    "InternalError",
}
_PRECONDITION_AWS_CODES = {
    "NoSuchHostedZone",
    "TargetGroupNotFound",
    "LoadBalancerNotFound",
    "InvalidGroup.NotFound",
    "InvalidVpcID.NotFound",
    "InvalidRouteTableID.NotFound",
    "RouteLimitExceeded",
    "RulesPerSecurityGroupLimitExceeded",
    "InvalidChangeBatch",
    "InvalidVpcPeeringConnectionID.NotFound",
    "DependencyViolation",
}


def from_client_error(exc: Any, action: str) -> KubeshiftError:
    """Map a botocore ``ClientError`` raised while doing ``action``."""
    error = getattr(exc, "response", {}).get("Error", {})
    code = str(error.get("Code", "Unknown"))
    message = str(error.get("Message", exc)).rstrip(".")
    text = f"AWS refused to {action}: {code}: {message}."
    if code in _RETRYABLE_AWS_CODES:
        return RetryableError(text + " Will retry.")
    if code in _PRECONDITION_AWS_CODES:
        return PreconditionFailed(text)
    if code in {"AccessDenied", "AccessDeniedException", "UnauthorizedOperation"}:
        return UserError(text + " Check the IAM permissions listed in docs/iam.md.")
    if code in {"ExpiredToken", "InvalidClientTokenId", "UnrecognizedClientException"}:
        return UserError(text + " Refresh the AWS credentials of the profile in use.")
    return StepFailedError(text)


def from_api_exception(exc: Any, action: str) -> KubeshiftError:
    """Map a kubernetes ``ApiException`` raised while doing ``action``."""
    status = int(getattr(exc, "status", 0) or 0)
    reason = str(getattr(exc, "reason", "") or "error")
    text = f"Kubernetes answered {status} {reason} to {action}."
    if status in _RETRYABLE_HTTP or status == 0:
        return RetryableError(text + " Will retry.", delay=_retry_after(exc))
    if status in {401, 403}:
        return UserError(text + " Check the kubeconfig context's credentials and RBAC.")
    if status == 404:
        return PreconditionFailed(text)
    return StepFailedError(text)


def _retry_after(exc: Any) -> float | None:
    """The seconds a 429/503 answer's ``Retry-After`` header asks for (API priority and
    fairness sends it), or None."""
    headers = getattr(exc, "headers", None) or {}
    try:
        value = float(headers.get("Retry-After", ""))
    except (TypeError, ValueError):
        return None
    return value if value >= 0 else None


def torn_checkpoint_read(exc: BaseException) -> bool:
    """Whether the engine failed because it read the stack's checkpoint while another
    process was saving it. A ``file://`` backend (go-cloud's fileblob) renames the
    checkpoint into place but rewrites its ``.attrs`` sidecar in place, truncating it
    first, so a reader beside a running ``pulumi up`` can find that empty: "failed to
    load checkpoint: EOF"."""
    text = str(exc)
    return "failed to load checkpoint" in text and (
        "EOF" in text or "unexpected end of JSON input" in text
    )


def from_command_error(exc: Any, action: str, stack: str = "") -> KubeshiftError:
    """Map a Pulumi Automation API ``CommandError`` (or subclass) raised by ``action``."""
    from pulumi.automation import errors as auto_errors

    stderr = (getattr(exc, "stderr", "") or str(exc)).strip()
    # The sentence below is what a user needs; the whole output is what a bug report does.
    logging.getLogger("kubeshift.engine").debug("pulumi failed to %s:\n%s", action, exc)
    # CommandError keeps the engine's stdout and stderr only inside its text.
    stdout = getattr(exc, "stdout", "") or str(exc)
    detail = _program_diagnostic(stdout) or _last_meaningful_line(stderr)
    if isinstance(exc, auto_errors.ConcurrentUpdateError):
        from automation.engine.lock import locked_sentence, parse_holders

        holders = parse_holders(f"{getattr(exc, 'stdout', '') or ''}\n{stderr}")
        sentence = locked_sentence(stack or "the stack", holders, action)
        return StackLockedError(sentence, holders=holders)
    if isinstance(exc, auto_errors.StackNotFoundError):
        return StackNotFoundError(f"The stack does not exist ({action}): {detail}")
    if torn_checkpoint_read(exc):
        name = f"stack '{stack}'" if stack else "the stack"
        return StepFailedError(
            f"pulumi could not read {name}'s checkpoint to {action} ("
            f"{detail.removeprefix('stderr: ').removeprefix('error: ')}): another update is "
            "rewriting it or it is damaged; run again once no other update runs."
        )
    killed_by = _killed_by_signal(str(exc))
    if killed_by is not None:
        name = f" on stack '{stack}'" if stack else ""
        recover = f"kubeshift --stack {stack} recover" if stack else "kubeshift recover"
        return StepFailedError(
            f"The pulumi engine was killed (signal {killed_by}) while trying to {action}"
            f"{name}; it may have left its lock and half-done operations behind — run "
            f"`{recover}`, then run again."
        )
    output = f"{getattr(exc, 'stdout', '') or ''}\n{stderr}"
    if "violates plan" in output:
        where = next((line.strip() for line in output.splitlines() if "violates plan" in line), "")
        return PreconditionFailed(
            f"The update stopped where it departed from the preview the guard accepted "
            f"({where.removeprefix('error: ')[:300]}); nothing past that point changed. Run "
            "again to preview afresh."
        )
    if isinstance(exc, auto_errors.CompilationError):
        return UserError(f"The Pulumi program failed to load while trying to {action}: {detail}")
    from components.contract.progress import TOO_EARLY

    refusal = next((line for line in output.splitlines() if TOO_EARLY in line), "")
    if "Phase '" in refusal:  # the program's progress check refused: its sentence says all
        return PreconditionFailed(refusal[refusal.index("Phase '") :].strip())
    return StepFailedError(f"pulumi failed to {action}: {detail}")


def translate(exc: BaseException, action: str) -> KubeshiftError | None:
    """Map a foreign error we know (botocore, kubernetes, Pulumi, network) raised by ``action``."""
    if isinstance(exc, KubeshiftError):
        return exc
    module = type(exc).__module__
    if module.startswith("botocore"):
        name = type(exc).__name__
        if hasattr(exc, "response"):
            return from_client_error(exc, action)
        if name in {"NoCredentialsError", "PartialCredentialsError", "ProfileNotFound"}:
            return UserError(f"No usable AWS credentials to {action}: {exc}.")
        if name in {"EndpointConnectionError", "ConnectTimeoutError", "ReadTimeoutError"}:
            return RetryableError(f"AWS could not be reached to {action}: {exc}. Will retry.")
        return StepFailedError(f"AWS call failed to {action}: {exc}.")
    if module.startswith("kubernetes") and hasattr(exc, "status"):
        return from_api_exception(exc, action)
    if module.startswith("urllib3"):
        return RetryableError(f"Kubernetes could not be reached to {action}: {exc}. Will retry.")
    if module.startswith("pulumi.automation"):
        return from_command_error(exc, action)
    if isinstance(exc, ConnectionError | TimeoutError):
        reason = str(exc) or type(exc).__name__
        return RetryableError(f"The network failed while trying to {action}: {reason}. Will retry.")
    return None


_GENERIC = (
    "an unhandled error occurred",
    "Program exited with",
    "update failed",
    "preview failed",
    "failed to",
)


def _killed_by_signal(text: str) -> int | None:
    """The signal that ended the ``pulumi`` CLI (its exit code is minus the signal)."""
    match = re.search(r"^\s*code: (-\d+)\s*$", text, re.MULTILINE)
    return -int(match.group(1)) if match else None


def _program_diagnostic(stdout: str) -> str:
    """The program's own error from the engine's diagnostics (a ``pulumi.RunError``'s
    sentence), rather than the generic "Program exited with non-zero exit code"."""
    lines = stdout.splitlines()
    for index, line in enumerate(lines):
        # CommandError's text labels the engine's streams: " stderr: error: ...".
        text = line.strip().removeprefix("stderr: ").removeprefix("stdout: ")
        if text.lower().startswith("error: ") and not any(g in text for g in _GENERIC):
            text = text.removeprefix("error: ")
            if text.endswith("unhandled exception:"):  # the traceback's last line says what
                text = f"{text} {_exception_line(lines[index + 1 :])}"
            return text[:400]
    return ""


def _exception_line(traceback: Sequence[str]) -> str:
    """``ValueError: …`` — the last line of the traceback that follows in the output."""
    indented = []
    for line in traceback:
        if line.strip() and not line.startswith((" ", "\t")):
            break
        if line.strip():
            indented.append(line.strip())
    return indented[-1] if indented else "(no traceback shown)"


def _last_meaningful_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if line.lower().startswith("error")]
    chosen = errors[-1] if errors else (lines[-1] if lines else "no output")
    return chosen[:400]
