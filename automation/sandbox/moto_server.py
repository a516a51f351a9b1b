"""The sandbox's moto server: real HTTP on a loopback port, one request at a time.

AWS answers concurrent calls consistently: two groups launching at once never see one
another's half-made interfaces. moto's models are plain dicts and lists with no locks
(getmoto/moto#372: "moto is not thread-safe"), and its threaded server answers every
request on a thread of its own, so two requests that touch one table can fail with
``RuntimeError: dictionary changed size during iteration`` (a 500 that pulumi reports
as unparsable XML) or both take the same address. The engine creates resources in
parallel, so a rehearsal met this at random; serving requests one at a time makes
moto as consistent as AWS. Every request moto answers is short (no long polls here),
and all of them run under one interpreter lock anyway, so little is lost.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from werkzeug.serving import BaseWSGIServer, make_server

Start = Callable[..., Any]
App = Callable[[dict[str, Any], Start], Iterable[bytes]]


class OneRequestAtATime:
    """A WSGI application that lets ``app`` answer one request at a time, its whole
    body made before the next request starts."""

    def __init__(self, app: App) -> None:
        self._app = app
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Start) -> list[bytes]:
        with self._lock:
            answer = self._app(environ, start_response)
            try:
                return list(answer)
            finally:
                close = getattr(answer, "close", None)
                if close is not None:
                    close()


class MotoServer:
    """moto in server mode on ``host``; ``port`` 0 picks a free one."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        from moto.moto_server.werkzeug_app import (
            DomainDispatcherApplication,
            MotoRequestHandler,
            create_backend_app,
        )

        app = OneRequestAtATime(DomainDispatcherApplication(create_backend_app))
        self._server: BaseWSGIServer = make_server(
            host, port, app, threaded=True, request_handler=MotoRequestHandler
        )
        self._thread = threading.Thread(target=self._server.serve_forever, name="moto", daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self._server.host}:{self._server.port}"

    def start(self) -> MotoServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._thread.join()
        self._server.server_close()
