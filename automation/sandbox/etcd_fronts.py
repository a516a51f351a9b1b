"""One stable address per etcd member for the sandbox's kube-apiserver.

A control plane's API servers never hold a dead etcd address for minutes: kops's reach
their own host's member, others a name per member that follows it when it moves. The
sandbox's one API server outside every member was instead given each member's client
URL on both sides, and gRPC backs off up to 120 s from an address that refused it: by
the time the last member left the source network, the target addresses its first
minutes of refusals had put in backoff were still not retried, and the API server
stalled for 30 s and more (nodes went Unknown, their pods not Ready) on a busy machine.

:class:`MemberFronts` listens on loopback once per member and forwards each connection
to the member's current client URL, as a member's name resolving to its new address.
A connection that arrives while its member is between instances is held until the
member answers (up to ``backend_wait``), so no address stays in backoff for long.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import threading
from collections.abc import Callable
from urllib.parse import urlsplit

log = logging.getLogger("kubeshift.sandbox.etcd_fronts")

LOOPBACK = "127.0.0.1"
CHUNK = 1 << 16


def _host_port(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    if parts.hostname is None or parts.port is None:
        raise ValueError(f"not a client URL with a host and port: {url!r}")
    return parts.hostname, parts.port


def raise_open_files_limit() -> int:
    """Lift this process's soft limit on open files to the hard one, as Go programs do
    at start: each front holds two sockets per API server connection (hundreds), and a
    desktop's soft limit is often 1024. Returns the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass  # a platform capping it lower keeps its soft limit
    return soft


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy until either side ends; then close the writing side (which ends the other
    direction's copy too)."""
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        writer.close()


class MemberFronts:
    """A loopback listener per member name, forwarding to ``client_url(name)`` as it is
    at each connection; ``start`` returns the URLs to give the API server."""

    def __init__(
        self,
        client_url: Callable[[str], str],
        names: list[str],
        *,
        backend_wait: float = 30.0,
        retry_every: float = 0.2,
    ) -> None:
        self._client_url = client_url
        self._names = list(names)
        self._backend_wait = backend_wait
        self._retry_every = retry_every
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="etcd-fronts", daemon=True
        )
        self._servers: list[asyncio.Server] = []
        self.urls: dict[str, str] = {}

    def start(self) -> list[str]:
        """Listen for every member; the front URLs in the members' order."""
        raise_open_files_limit()
        self._thread.start()
        for name in self._names:
            server = asyncio.run_coroutine_threadsafe(self._listen(name), self._loop).result(10)
            self._servers.append(server)
            port = server.sockets[0].getsockname()[1]
            scheme = urlsplit(self._client_url(name)).scheme or "http"
            self.urls[name] = f"{scheme}://{LOOPBACK}:{port}"
        log.info(
            "etcd fronts: %s",
            ", ".join(f"{name} at {url}" for name, url in self.urls.items()),
        )
        return [self.urls[name] for name in self._names]

    def stop(self) -> None:
        """Close the listeners and every forwarded connection."""
        if not self._thread.is_alive():
            return
        asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    async def _shutdown(self) -> None:
        for server in self._servers:
            server.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _listen(self, name: str) -> asyncio.Server:
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await self._serve(name, reader, writer)

        return await asyncio.start_server(serve, LOOPBACK, 0)

    async def _serve(
        self, name: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        backend = await self._connect(name)
        if backend is None:
            writer.close()
            return
        member_reader, member_writer = backend
        await asyncio.gather(_pipe(reader, member_writer), _pipe(member_reader, writer))

    async def _connect(
        self, name: str
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        """The member's current address, retried while it is between instances; None
        once ``backend_wait`` passes (the client then sees its connection closed)."""
        deadline = self._loop.time() + self._backend_wait
        while True:
            host, port = _host_port(self._client_url(name))
            with contextlib.suppress(OSError):
                return await asyncio.open_connection(host, port)
            if self._loop.time() >= deadline:
                return None
            await asyncio.sleep(self._retry_every)
