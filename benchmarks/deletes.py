"""Deleting a fleet's pods at once, as the benchmarks' ceilings do.

One pod per request, many requests in flight, so that the API server and the
controllers set the pace. A ``deletecollection`` does not: the API server deletes a
collection's items one after another (``--delete-collection-workers`` is 1 by default),
so a loop of them measures that serial deletion rather than what the control plane can
replace.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

from kubernetes import client as k8s

DELETERS = 64
"""Requests kept in flight; the client's connection pool should hold as many."""


def delete_at_once(
    core: k8s.CoreV1Api, pods: Iterable[tuple[str, str]], workers: int = DELETERS
) -> float:
    """Delete every ``(namespace, name)`` with no grace period, ``workers`` requests in
    flight; return the seconds until every request was answered. A pod already gone is
    skipped."""

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="delete") as pool:
        list(pool.map(lambda pod: delete_pod(core, pod), pods))
    return time.monotonic() - started


def delete_pod(core: k8s.CoreV1Api, pod: tuple[str, str]) -> None:
    """Delete ``(namespace, name)`` with no grace period; a pod already gone is skipped."""
    namespace, name = pod
    with contextlib.suppress(k8s.ApiException):  # gone already
        core.delete_namespaced_pod(name, namespace, grace_period_seconds=0)
