"""Fixtures for the AWS hook tests: kubeshift's clients on the moto server, a local site."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from automation.aws.clients import AwsAccess, AwsClients
from tests.support.moto_fixtures import MotoServer


@pytest.fixture
def aws(moto: MotoServer) -> AwsClients:
    """kubeshift's own clients, reaching moto through ``AWS_ENDPOINT_URL``."""
    return AwsClients(AwsAccess(region=moto.region))


@dataclass
class Site:
    """A real HTTP server on 127.0.0.1 answering queued statuses (then the last one)."""

    statuses: deque[int]
    port: int = 0
    hosts: list[str] = field(default_factory=list)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def answer(self, *statuses: int) -> None:
        self.statuses.clear()
        self.statuses.extend(statuses)


@pytest.fixture
def site() -> Iterator[Site]:
    state = Site(deque([200]))

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.hosts.append(self.headers.get("Host", ""))
            status = state.statuses.popleft() if len(state.statuses) > 1 else state.statuses[0]
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
