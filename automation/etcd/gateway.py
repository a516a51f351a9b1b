"""POST JSON to etcd's gRPC gateway over HTTP(S); every failure becomes kubeshift's error.

One ``urllib3.PoolManager`` (thread-safe) with explicit connect and read timeouts, no
automatic retries or redirects, and the client's TLS files loaded up front so a wrong
path fails at once, in one sentence. A call to "the cluster" starts at the endpoint
that answered last and tries the next one only when the current one cannot be reached
at all (the request never left, so even a non-idempotent call is safe to resend);
any other temporary failure moves the preference on for the next call and is raised.

etcd answers errors as ``{"code": <gRPC code>, "message": "etcdserver: ..."}``:
unavailable, deadline exceeded, too many requests and aborted are temporary
(``RetryableError``); not found and failed precondition are ``PreconditionFailed``;
unauthenticated and permission denied are ``UserError``; the rest ``StepFailedError``.
"""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import urllib3
from urllib3.exceptions import (
    ConnectTimeoutError,
    HTTPError,
    ProtocolError,
    ReadTimeoutError,
    SSLError,
)

from automation.core.errors import (
    KubeshiftError,
    PreconditionFailed,
    RetryableError,
    StepFailedError,
    UserError,
)

DEFAULT_TIMEOUT = 10.0
DEFAULT_CONNECT_TIMEOUT = 3.0

_RETRYABLE_CODES = {1, 4, 8, 10, 14}  # canceled, deadline, exhausted, aborted, unavailable
_PRECONDITION_CODES = {5, 9}  # not found, failed precondition
_CREDENTIAL_CODES = {7, 16}  # permission denied, unauthenticated
_CLIENT_CERT_ALERTS = ("certificate required", "bad certificate", "unknown ca", "bad_certificate")


class EtcdUnavailable(RetryableError):
    """etcd did not give a usable answer for now; ``reason`` is the short why."""

    def __init__(self, endpoint: str, action: str, reason: str) -> None:
        super().__init__(f"etcd at {endpoint} could not {action}: {reason}. Will retry.")
        self.endpoint = endpoint
        self.reason = reason


class EndpointUnreachable(EtcdUnavailable):
    """No connection could be made: the request never reached etcd."""


def check_endpoint(url: str) -> str:
    """``url`` without a trailing slash when it is ``http(s)://host[:port]``; else ValueError."""
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise ValueError(f"{url!r}: its port is not a number") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r}: use http(s)://host[:port]")
    if parts.path.strip("/") or parts.query or parts.fragment:
        raise ValueError(f"{url!r}: give the client URL only, without a path")
    return f"{parts.scheme}://{parts.netloc}"


def tls_context(
    ca_file: Path | None, cert_file: Path | None, key_file: Path | None
) -> ssl.SSLContext:
    """A verifying client context: ``ca_file`` (default: the system's) and a client pair."""
    if (cert_file is None) != (key_file is None):
        raise UserError("etcd client TLS needs both a certificate file and a key file, or neither.")
    for what, path in (("CA", ca_file), ("client certificate", cert_file), ("key", key_file)):
        if path is not None and not Path(path).expanduser().is_file():
            raise UserError(f"The etcd {what} file {path} does not exist.")
    try:
        context = ssl.create_default_context(
            cafile=str(Path(ca_file).expanduser()) if ca_file else None
        )
        if cert_file is not None and key_file is not None:
            context.load_cert_chain(Path(cert_file).expanduser(), Path(key_file).expanduser())
    except (ssl.SSLError, OSError) as exc:
        raise UserError(f"The etcd TLS files could not be loaded: {exc}.") from exc
    return context


class Gateway:
    """The HTTP side of the client: one pool, a preferred endpoint, mapped errors."""

    def __init__(
        self,
        endpoints: Sequence[str],
        *,
        ca_file: Path | None = None,
        cert_file: Path | None = None,
        key_file: Path | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    ) -> None:
        if not endpoints:
            raise UserError("No etcd endpoint is configured.")
        try:
            self.endpoints = tuple(check_endpoint(url) for url in endpoints)
        except ValueError as exc:
            raise UserError(f"An etcd endpoint is not a client URL: {exc}.") from None
        self.timeout = timeout
        self._client_cert = cert_file is not None
        files = ca_file or cert_file or key_file
        context = tls_context(ca_file, cert_file, key_file) if files else None
        self._pool = urllib3.PoolManager(
            num_pools=16,
            maxsize=8,
            ssl_context=context,
            retries=False,
            timeout=urllib3.Timeout(connect=min(connect_timeout, timeout), read=timeout),
        )
        self._lock = threading.Lock()
        self._preferred = 0

    def close(self) -> None:
        self._pool.clear()

    def post_cluster(self, path: str, body: Mapping[str, Any], *, action: str) -> dict[str, Any]:
        """POST to the cluster: the preferred endpoint first, the next ones if unreachable."""
        with self._lock:
            start = self._preferred
        order = [
            self.endpoints[(start + i) % len(self.endpoints)] for i in range(len(self.endpoints))
        ]
        unreached: list[EndpointUnreachable] = []
        for endpoint in order:
            try:
                answer = self.post(endpoint, path, body, action=action)
            except EndpointUnreachable as exc:
                unreached.append(exc)
                continue
            except EtcdUnavailable:
                self._prefer_after(endpoint)
                raise
            self._prefer(endpoint)
            return answer
        self._prefer_after(order[0])
        if len(unreached) == 1:
            raise unreached[0]
        reasons = "; ".join(f"{e.endpoint}: {e.reason}" for e in unreached)
        raise RetryableError(
            f"No etcd endpoint could be reached to {action} ({reasons}). Will retry."
        )

    def post(
        self, endpoint: str, path: str, body: Mapping[str, Any], *, action: str
    ) -> dict[str, Any]:
        """POST ``body`` to ``endpoint`` + ``path``; the decoded answer or a kubeshift error."""
        try:
            url = check_endpoint(endpoint) + path
        except ValueError as exc:
            raise StepFailedError(f"kubeshift cannot {action} at etcd endpoint {exc}.") from None
        try:
            response = self._pool.request(
                "POST",
                url,
                body=json.dumps(body).encode(),
                headers={"Content-Type": "application/json"},
                redirect=False,
            )
        except HTTPError as exc:
            raise _transport_error(exc, endpoint, action, self.timeout, self._client_cert) from exc
        except OSError as exc:
            raise EtcdUnavailable(endpoint, action, _reason(exc)) from exc
        data = _decode(response.data)
        if response.status == 200 and isinstance(data, dict):
            return data
        if response.status == 200:
            raise StepFailedError(
                f"{endpoint} did not answer like etcd when asked to {action} (not JSON)."
            )
        raise _answer_error(endpoint, action, response.status, data)

    def _prefer(self, endpoint: str) -> None:
        with self._lock:
            self._preferred = self.endpoints.index(endpoint) if endpoint in self.endpoints else 0

    def _prefer_after(self, endpoint: str) -> None:
        with self._lock:
            here = self.endpoints.index(endpoint) if endpoint in self.endpoints else -1
            self._preferred = (here + 1) % len(self.endpoints)


def _decode(raw: bytes) -> Any:
    try:
        return json.loads(raw or b"null")
    except ValueError:
        return None


def _reason(exc: BaseException) -> str:
    """The short cause of a transport error: ``connection refused``, ``timed out``."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, OSError) and cause.strerror:
            return _lower_first(cause.strerror)
        cause = cause.__cause__ or cause.__context__
    return _lower_first(str(exc).split(": ")[-1].strip() or type(exc).__name__)


def _lower_first(text: str) -> str:
    """``Connection refused`` → ``connection refused``; ``EOF occurred`` stays."""
    return text[0].lower() + text[1:] if text[1:2].islower() else text


def _transport_error(
    exc: HTTPError, endpoint: str, action: str, timeout: float, client_cert: bool
) -> KubeshiftError:
    if isinstance(exc, SSLError):
        return _tls_error(exc, endpoint, action, client_cert)
    if isinstance(exc, ConnectTimeoutError):  # includes refused and unresolvable (NewConnection)
        return EndpointUnreachable(endpoint, action, _reason(exc))
    if isinstance(exc, ReadTimeoutError):
        return EtcdUnavailable(endpoint, action, f"no answer within {timeout:g}s")
    if isinstance(exc, ProtocolError):
        return EtcdUnavailable(endpoint, action, f"the connection broke ({_reason(exc)})")
    return EtcdUnavailable(endpoint, action, _reason(exc))


def _tls_error(exc: SSLError, endpoint: str, action: str, client_cert: bool) -> KubeshiftError:
    """A certificate etcd's CA file does not trust, or a client certificate etcd refuses,
    is a setting to fix; a handshake cut short (a member restarting) is temporary. etcd
    closes the handshake without a word when a client certificate it requires is
    missing, which looks the same, so that case only gets a hint."""
    chain: list[BaseException] = [exc]
    while chain[-1].__cause__ or chain[-1].__context__:
        chain.append(chain[-1].__cause__ or chain[-1].__context__)  # type: ignore[arg-type]
    if any(isinstance(e, ssl.SSLCertVerificationError) for e in chain):
        detail = next(e for e in chain if isinstance(e, ssl.SSLCertVerificationError))
        return UserError(
            f"etcd at {endpoint} presented a certificate the etcd CA file does not trust "
            f"({getattr(detail, 'verify_message', '') or detail}); check ca_file."
        )
    text = " ".join(str(e) for e in chain).lower()
    if any(alert in text for alert in _CLIENT_CERT_ALERTS):
        if not client_cert:
            return UserError(
                f"etcd at {endpoint} requires a client certificate to {action}; set "
                "cert_file and key_file."
            )
        return UserError(
            f"etcd at {endpoint} refused kubeshift's client certificate while trying to "
            f"{action}; check cert_file and key_file."
        )
    hint = (
        "" if client_cert else "; if etcd requires client certificates, set cert_file and key_file"
    )
    return EtcdUnavailable(endpoint, action, f"the TLS handshake failed ({_reason(exc)}){hint}")


def _answer_error(endpoint: str, action: str, status: int, data: Any) -> KubeshiftError:
    """Map etcd's error answer (``{"code": 14, "message": "etcdserver: ..."}``)."""
    body = data if isinstance(data, dict) else {}
    code = body.get("code")
    message = str(body.get("message") or body.get("error") or f"HTTP {status}").rstrip(".")
    if not isinstance(code, int):
        code = 14 if status in (502, 503, 504) else (8 if status == 429 else -1)
    if "tls: bad certificate" in message:  # the gateway cannot dial etcd's own gRPC port
        return UserError(
            f"etcd at {endpoint} cannot serve its JSON gateway ({message}): with client "
            "certificate auth on, its server certificate needs the client-auth usage too, "
            "or etcd needs --client-cert-file and --client-key-file."
        )
    if code in _RETRYABLE_CODES:
        return EtcdUnavailable(endpoint, action, message)
    text = f"etcd at {endpoint} refused to {action}: {message}."
    if code in _PRECONDITION_CODES:
        return PreconditionFailed(text)
    if code in _CREDENTIAL_CODES:
        return UserError(text + " Check the etcd client certificate and etcd's auth settings.")
    return StepFailedError(text)
