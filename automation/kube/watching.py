"""List-then-watch of one collection in a background thread, on plain dicts.

Drains await pod deletions, follow PodDisruptionBudgets and the probe follows
EndpointSlices, all by watch rather than polling. This is the one loop that does it:
list (paged) to get a consistent state and resource version, watch from there, and
re-list when the watch expires (410) or the connection drops. Events arrive as the
API's JSON (no model building: thousands of pods stay cheap).
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from kubernetes import client
from kubernetes.watch.watch import iter_resp_lines

from automation.kube.clients import list_all

log = logging.getLogger("kubeshift.watch")

SyncFn = Callable[[list[dict[str, Any]]], None]
EventFn = Callable[[str, dict[str, Any]], None]


STOP_TIMEOUT = 5.0
"""Seconds ``ListWatcher.stop`` waits for its thread (its read ends once its socket is
shut, also when the watch request was still on its way)."""


class WatchExpired(Exception):
    """The watch's resource version is too old (HTTP 410): list again."""


def stream_events(
    call: Any,
    *args: Any,
    resource_version: str,
    timeout_seconds: int,
    on_response: Callable[[Any], None] = lambda r: None,
    **kwargs: Any,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(type, object)`` from one watch request until the server closes it."""
    response = call(
        *args,
        watch=True,
        resource_version=resource_version,
        timeout_seconds=timeout_seconds,
        allow_watch_bookmarks=True,
        _preload_content=False,
        _request_timeout=(10, timeout_seconds + 15),
        **kwargs,
    )
    on_response(response)
    try:
        for line in iter_resp_lines(response):
            if not line or line.isspace():
                continue
            event = json.loads(line)
            kind, obj = event.get("type", ""), event.get("object") or {}
            if kind == "ERROR":
                if obj.get("code") == 410:
                    raise WatchExpired(obj.get("message", "expired"))
                raise client.ApiException(status=obj.get("code"), reason=obj.get("message"))
            yield kind, obj
    finally:
        response.close()
        response.release_conn()


class ListWatcher:
    """Keeps a callback-fed view of a collection: ``on_sync`` after each list, then events."""

    def __init__(
        self,
        call: Any,
        *args: Any,
        name: str,
        on_sync: SyncFn,
        on_event: EventFn,
        watch_timeout: int = 30,
        **kwargs: Any,
    ) -> None:
        self._call, self._args, self._kwargs = call, args, kwargs
        self.name = name
        self._on_sync, self._on_event = on_sync, on_event
        self._watch_timeout = watch_timeout
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._response: Any = None
        self.version = ""

    def sync(self) -> None:
        listing = list_all(self._call, *self._args, action=f"list {self.name}", **self._kwargs)
        self.version = listing["resourceVersion"]
        self._on_sync(listing["items"])

    def start(self) -> ListWatcher:
        """List once (so the view is ready when this returns), then watch in a thread."""
        self.sync()
        self._thread = threading.Thread(target=self._run, name=f"watch-{self.name}", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Stop watching and wait (up to ``timeout``) for the thread to end: a daemon
        thread still inside a TLS read when the interpreter exits can kill the process
        with a signal after its last word (a run stopped by Ctrl-C once exited on SIGABRT)."""
        self._stop.set()
        _shut(self._response)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def _set_response(self, response: Any) -> None:
        self._response = response
        if self._stop.is_set():  # stop() came while this request was on its way
            _shut(response)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                for kind, obj in stream_events(
                    self._call,
                    *self._args,
                    resource_version=self.version,
                    timeout_seconds=self._watch_timeout,
                    on_response=self._set_response,
                    **self._kwargs,
                ):
                    if self._stop.is_set():
                        return
                    version = (obj.get("metadata") or {}).get("resourceVersion")
                    if version:
                        self.version = version
                    if kind != "BOOKMARK":
                        self._on_event(kind, obj)
            except WatchExpired:
                self._resync()
            except Exception as exc:  # dropped connection, apiserver restart: back off, re-list
                if self._stop.is_set():
                    return
                log.debug("watch %s failed: %s; re-listing", self.name, exc)
                self._stop.wait(1.0)
                self._resync()

    def _resync(self) -> None:
        if self._stop.is_set():
            return
        try:
            self.sync()
        except Exception as exc:  # the API is still away: this thread must outlive it
            log.debug("re-list of %s failed: %s", self.name, exc)
            self._stop.wait(1.0)


def _shut(response: Any) -> None:
    """End a read in progress on ``response`` from another thread (best effort)."""
    if response is not None:
        with contextlib.suppress(Exception):
            response.shutdown() if hasattr(response, "shutdown") else response.close()


def meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}
