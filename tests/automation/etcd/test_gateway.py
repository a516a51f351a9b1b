"""The transport without etcd: endpoints, TLS files, failover, and how answers map to errors.

Fake servers on 127.0.0.1 stand in for an endpoint that is down, one that never
answers, and one that is not etcd at all.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from automation.core.errors import (
    ErrorKind,
    PreconditionFailed,
    RetryableError,
    StepFailedError,
    UserError,
)
from automation.etcd.client import EtcdClient, prefix_end
from automation.etcd.gateway import EndpointUnreachable, EtcdUnavailable, _answer_error
from automation.sandbox.processes import LOOPBACK, free_port


def dead_endpoint() -> str:
    return f"http://{LOOPBACK}:{free_port()}"


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (503, {"code": 14, "message": "etcdserver: request timed out"}, ErrorKind.RETRYABLE),
        (504, {"code": 4, "message": "context deadline exceeded"}, ErrorKind.RETRYABLE),
        (429, {"code": 8, "message": "etcdserver: too many requests"}, ErrorKind.RETRYABLE),
        (404, {"code": 5, "message": "etcdserver: member not found"}, ErrorKind.PRECONDITION),
        (
            400,
            {"code": 9, "message": "etcdserver: Peer URLs already exists"},
            ErrorKind.PRECONDITION,
        ),
        (401, {"code": 16, "message": "etcdserver: user name is empty"}, ErrorKind.USER),
        (400, {"code": 3, "message": "unexpected EOF"}, ErrorKind.FATAL),
        (
            503,
            {
                "code": 14,
                "message": 'connection error: desc = "remote error: tls: bad certificate"',
            },
            ErrorKind.USER,
        ),
        (502, None, ErrorKind.RETRYABLE),
        (404, None, ErrorKind.FATAL),
    ],
)
def test_etcd_answers_map_to_kinds(status: int, body: object, kind: ErrorKind) -> None:
    error = _answer_error("http://e:2379", "update member 1", status, body)
    assert error.kind is kind
    if kind is ErrorKind.USER and status == 503:
        assert "needs the client-auth usage too" in str(error)
    elif kind is not ErrorKind.RETRYABLE:
        assert str(error).startswith("etcd at http://e:2379 refused to update member 1: ")


def test_endpoints_and_tls_files_are_checked_up_front(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="No etcd endpoint"):
        EtcdClient([])
    with pytest.raises(UserError, match=r"'10.0.0.1:2379': use http\(s\)://host\[:port\]"):
        EtcdClient(["10.0.0.1:2379"])
    with pytest.raises(UserError, match="without a path"):
        EtcdClient(["https://10.0.0.1:2379/v3"])
    with pytest.raises(UserError, match=r"The etcd CA file .*ca.crt does not exist\."):
        EtcdClient(["https://10.0.0.1:2379"], ca_file=tmp_path / "ca.crt")
    with pytest.raises(UserError, match="both a certificate file and a key file"):
        EtcdClient(["https://10.0.0.1:2379"], cert_file=tmp_path / "c.crt")
    (tmp_path / "ca.crt").write_text("not a certificate")
    with pytest.raises(UserError, match="The etcd TLS files could not be loaded"):
        EtcdClient(["https://10.0.0.1:2379"], ca_file=tmp_path / "ca.crt")


def test_a_member_advertising_a_socket_is_a_clear_failure() -> None:
    with EtcdClient(["http://10.0.0.1:2379"]) as client, pytest.raises(StepFailedError) as bad:
        client.status("unix://etcd.sock")
    assert str(bad.value) == (
        "kubeshift cannot report its status at etcd endpoint 'unix://etcd.sock': use "
        "http(s)://host[:port]."
    )


def test_unreachable_endpoints_are_temporary_and_named() -> None:
    one, two = dead_endpoint(), dead_endpoint()
    with EtcdClient([one]) as client, pytest.raises(EndpointUnreachable) as single:
        client.members()
    assert str(single.value) == (
        f"etcd at {one} could not list the members: connection refused. Will retry."
    )
    with EtcdClient([one, two]) as client, pytest.raises(RetryableError) as both:
        client.members()
    assert str(both.value) == (
        f"No etcd endpoint could be reached to list the members ({one}: connection refused; "
        f"{two}: connection refused). Will retry."
    )


@pytest.fixture
def silent_endpoint() -> Iterator[str]:
    """Accepts connections (the kernel's backlog) and never answers."""
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        sock.listen(8)
        yield f"http://{LOOPBACK}:{sock.getsockname()[1]}"


def test_a_member_that_never_answers_times_out_as_temporary(silent_endpoint: str) -> None:
    client = EtcdClient([silent_endpoint], timeout=0.3)
    with client, pytest.raises(EtcdUnavailable) as caught:
        client.status(silent_endpoint)
    assert caught.value.reason == "no answer within 0.3s"
    assert not isinstance(caught.value, EndpointUnreachable)  # it may have been received


class _NotEtcd(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = b"<html>hello</html>"
        self.send_response(200 if self.path.endswith("status") else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def not_etcd() -> Iterator[str]:
    server = ThreadingHTTPServer((LOOPBACK, 0), _NotEtcd)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://{LOOPBACK}:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_server_that_is_not_etcd_is_a_clear_failure(not_etcd: str) -> None:
    with EtcdClient([not_etcd]) as client:
        with pytest.raises(StepFailedError, match="did not answer like etcd when asked to report"):
            client.status(not_etcd)
        with pytest.raises(StepFailedError) as refused:
            client.members()
    assert str(refused.value) == f"etcd at {not_etcd} refused to list the members: HTTP 404."
    assert not isinstance(refused.value, PreconditionFailed)


def test_prefix_end_covers_exactly_the_prefix() -> None:
    assert prefix_end(b"/move/") == b"/move0"
    assert prefix_end(b"a\xff") == b"b"
    assert prefix_end(b"") == b"\x00"
