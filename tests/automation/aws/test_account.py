"""Reaching the account once, before a command reads it resource by resource."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from automation.aws.account import reach_account
from automation.aws.clients import AwsAccess, AwsClients
from automation.core.errors import UserError
from tests.support.moto_fixtures import MotoServer

REFUSAL = (
    b"<ErrorResponse><Error><Type>Sender</Type><Code>InvalidClientTokenId</Code>"
    b"<Message>The security token included in the request is invalid.</Message></Error>"
    b"<RequestId>1</RequestId></ErrorResponse>"
)


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def refusing_sts() -> Iterator[str]:
    """An endpoint that answers every call as STS does for credentials it does not know."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(403)
            self.send_header("Content-Type", "text/xml")
            self.send_header("Content-Length", str(len(REFUSAL)))
            self.end_headers()
            self.wfile.write(REFUSAL)

        def log_message(self, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _clients(endpoint: str) -> AwsClients:
    return AwsClients(
        AwsAccess(region="us-west-2", endpoint_url=endpoint, max_attempts=1, connect_timeout=2)
    )


def test_the_account_the_credentials_sign_in_to(aws: AwsClients, moto: MotoServer) -> None:
    assert reach_account(aws) == moto.client("sts").get_caller_identity()["Account"]


def test_an_endpoint_nobody_answers_is_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    endpoint = f"http://127.0.0.1:{closed_port()}"
    with pytest.raises(UserError, match=f"{endpoint} could not be reached.*endpoint_url"):
        reach_account(_clients(endpoint))


def test_refused_credentials_are_named(refusing_sts: str) -> None:
    with pytest.raises(UserError, match="refused kubeshift's credentials \\(InvalidClientTokenId"):
        reach_account(_clients(refusing_sts))


def test_no_credentials_say_where_to_put_them(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with pytest.raises(UserError, match=r"No AWS credentials were found.*AWS_PROFILE"):
        reach_account(_clients(f"http://127.0.0.1:{closed_port()}"))
