"""A list-watch against the real API server ends its thread when stopped."""

from __future__ import annotations

import threading

import pytest

from automation.kube.clients import KubeClients
from automation.kube.watching import ListWatcher

pytestmark = pytest.mark.controlplane


def _threads(name: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == f"watch-{name}"]


def test_a_stopped_watch_leaves_no_thread_behind(kube: KubeClients, namespace: str) -> None:
    """No daemon thread is still reading its stream when the caller goes on (or the
    process exits): stop returns once the thread has ended."""
    seen: list[str] = []
    watcher = ListWatcher(
        kube.core.list_namespaced_config_map,
        namespace,
        name="stop-test",
        on_sync=lambda items: None,
        on_event=lambda kind, _obj: seen.append(kind),
    ).start()
    assert _threads("stop-test")
    watcher.stop()
    assert _threads("stop-test") == []
