"""A TCP forwarder on 127.0.0.1 that can go dark: an outage between a client and a server.

``pause()`` drops every open connection and stops listening, so new connections are
refused (``ECONNREFUSED``, what a restarting API server or an unreachable endpoint
looks like); ``resume()`` listens again on the same port. While paused the port stays
bound (``SO_REUSEPORT``) without listening, so nothing else can take it. Leaving the
``with`` block (or ``close()``) stops and joins every thread the proxy started.
"""

from __future__ import annotations

import select
import socket
import threading
from types import TracebackType
from urllib.parse import urlsplit

LOOPBACK = "127.0.0.1"
_CHUNK = 65536
_TICK = 0.05  # how often idle threads look at their stop flag
_IO_TIMEOUT = 5.0  # no send or upstream connect blocks longer than this


def upstream_of(url: str) -> tuple[str, int]:
    """``http://127.0.0.1:5000`` → ``("127.0.0.1", 5000)``."""
    parts = urlsplit(url)
    if parts.hostname is None or parts.port is None:
        raise ValueError(f"{url} names no host and port")
    return parts.hostname, parts.port


def _bound_socket(port: int) -> socket.socket:
    """A TCP socket bound to ``LOOPBACK:port`` that may share the port with its successor."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((LOOPBACK, port))
    return sock


class _Link:
    """One client connection forwarded to the upstream, pumped by its own thread."""

    def __init__(self, client: socket.socket, upstream: tuple[str, int]) -> None:
        self._client = client
        self._upstream_address = upstream
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="tcp-proxy-link", daemon=True)

    def close(self) -> None:
        """Drop both ends now and wait for the pump thread to end."""
        self._stop.set()
        self.thread.join()

    def _run(self) -> None:
        try:
            upstream = socket.create_connection(self._upstream_address, timeout=_IO_TIMEOUT)
        except OSError:
            self._client.close()
            return
        with self._client, upstream:
            self._client.settimeout(_IO_TIMEOUT)
            self._pump(self._client, upstream)

    def _pump(self, client: socket.socket, upstream: socket.socket) -> None:
        peer = {client: upstream, upstream: client}
        while not self._stop.is_set():
            readable, _, _ = select.select(list(peer), [], [], _TICK)
            for sock in readable:
                try:
                    data = sock.recv(_CHUNK)
                    if not data:
                        return
                    peer[sock].sendall(data)
                except OSError:
                    return


class TcpProxy:
    """Forwards ``LOOPBACK:port`` to ``upstream`` until paused; see the module docstring."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self._lock = threading.Lock()  # pause, resume and close, one at a time
        self._links_lock = threading.Lock()  # the acceptor adds links under this one only
        self._listener: socket.socket | None = _bound_socket(0)
        self.port: int = self._listener.getsockname()[1]
        self._listener.listen()
        self._reserve: socket.socket | None = None
        self._links: set[_Link] = set()
        self._accepting = threading.Event()
        self._acceptor: threading.Thread | None = None
        self._start_accepting()

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def paused(self) -> bool:
        return self._reserve is not None

    def pause(self) -> None:
        """Refuse new connections and drop the open ones; returns once both hold."""
        with self._lock:
            if self._listener is None:
                return
            self._reserve = _bound_socket(self.port)
            self._stop_accepting()
            self._drop_links()

    def resume(self) -> None:
        """Listen on the same port again and forward new connections."""
        with self._lock:
            if self._reserve is None:
                return
            self._listener, self._reserve = self._reserve, None
            self._listener.listen()
            self._start_accepting()

    def close(self) -> None:
        """Stop listening, drop every connection, join every thread; idempotent."""
        with self._lock:
            self._stop_accepting()
            if self._reserve is not None:
                self._reserve.close()
                self._reserve = None
            self._drop_links()

    def __enter__(self) -> TcpProxy:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _start_accepting(self) -> None:
        assert self._listener is not None
        self._accepting.set()
        self._acceptor = threading.Thread(
            target=self._accept, args=(self._listener,), name="tcp-proxy-accept", daemon=True
        )
        self._acceptor.start()

    def _stop_accepting(self) -> None:
        """Join the acceptor, then close the listener (its backlog is refused)."""
        self._accepting.clear()
        if self._acceptor is not None:
            self._acceptor.join()
            self._acceptor = None
        if self._listener is not None:
            self._listener.close()
            self._listener = None

    def _accept(self, listener: socket.socket) -> None:
        while self._accepting.is_set():
            readable, _, _ = select.select([listener], [], [], _TICK)
            if not readable:
                continue
            try:
                client, _ = listener.accept()
            except OSError:
                continue
            link = _Link(client, self.upstream)
            with self._links_lock:
                self._links.add(link)
            link.thread.start()

    def _drop_links(self) -> None:
        with self._links_lock:
            links, self._links = self._links, set()
        for link in links:
            link.close()
