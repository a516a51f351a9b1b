"""Gates that react: a gate's wait ends when what it reads changes, not at its next poll.

A gate checks a condition every ``interval`` seconds (10 to 15 s): a node that turns Ready
just after a check is seen up to a whole interval late, and a phase of many gates pays
that many times. When a gate names the collections its check reads
(:class:`automation.model.phase.Watch`), :class:`Wakeups` list-watches them while the gate
waits and cuts the sleep short at their first change; the check then runs at once
(after a short settle, so a burst of events costs one check). The interval stays the
upper bound: a watch that cannot start or drops leaves the gate polling as before.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any

from automation.kube.clients import KubeClients
from automation.kube.watching import ListWatcher

log = logging.getLogger("kubeshift.wakeups")

SETTLE = 0.2
"""Seconds to let a burst of events land before checking again."""
MIN_GAP = 1.0
"""Seconds at least between two checks, however busy the collection (a drain's pods)."""


def _lister(kube: KubeClients, resource: str) -> Callable[..., Any]:
    """The cluster-wide list call of ``resource`` (``nodes``, ``pods``, ...)."""
    calls: dict[str, Callable[[], Callable[..., Any]]] = {
        "nodes": lambda: kube.core.list_node,
        "pods": lambda: kube.core.list_pod_for_all_namespaces,
        "endpointslices": lambda: kube.discovery.list_endpoint_slice_for_all_namespaces,
        "daemonsets": lambda: kube.apps.list_daemon_set_for_all_namespaces,
        "deployments": lambda: kube.apps.list_deployment_for_all_namespaces,
    }
    return calls[resource]()


class Wakeups:
    """List-watch ``(cluster clients, resource)`` pairs; :meth:`sleep` ends at a change."""

    def __init__(self, watched: Iterable[tuple[KubeClients, str]]) -> None:
        self._watched = list(watched)
        self._changed = threading.Event()
        self._watchers: list[ListWatcher] = []
        self._last = time.monotonic()
        self.wakes = 0

    def __enter__(self) -> Wakeups:
        for kube, resource in self._watched:
            watcher = ListWatcher(
                _lister(kube, resource),
                name=f"{kube.name} {resource} (gate wakeups)",
                on_sync=lambda _items: self._changed.set(),
                on_event=lambda _kind, _obj: self._changed.set(),
            )
            try:
                self._watchers.append(watcher.start())
            except Exception as exc:  # no watch: the gate polls at its interval
                log.debug("cannot watch %s: %s; polling instead", watcher.name, exc)
        self._changed.clear()  # the initial lists are not changes
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for watcher in self._watchers:
            watcher.stop()

    @property
    def watching(self) -> bool:
        return bool(self._watchers)

    def sleep(self, seconds: float) -> None:
        """Up to ``seconds``, less when a watched collection changes first."""
        if self._changed.wait(seconds):
            self.wakes += 1
            since = time.monotonic() - self._last
            time.sleep(min(max(SETTLE, MIN_GAP - since), seconds))
        self._changed.clear()
        self._last = time.monotonic()
