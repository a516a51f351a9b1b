"""Deleting a fleet's pods at once, as the benchmarks' ceilings do.

One pod per request, many requests in flight, so that the API server and the
controllers set the pace. A ``deletecollection`` does not: the API server deletes a
collection's items one after another (``--delete-collection-workers`` is 1 by default),
so a loop of them measures that serial deletion rather than what the control plane can
replace.

Only a pod already gone (404) is passed over. Any other answer (a refusal, a throttle,
a server error) is raised: a ceiling whose deletes were refused would time a control
plane that replaced less than the fleet, and look faster than it is.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from kubernetes import client as k8s

DELETERS = 64
"""Requests kept in flight; the client's connection pool should hold as many."""

GONE = 404
"""The only answer a delete may get and still count: the pod had already left."""


@dataclass(frozen=True)
class Deleted:
    """What :func:`delete_at_once` did: seconds until every request was answered, pods
    deleted, pods found gone already."""

    seconds: float
    deleted: int
    gone: int


def delete_at_once(
    core: k8s.CoreV1Api, pods: Iterable[tuple[str, str]], workers: int = DELETERS
) -> Deleted:
    """Delete every ``(namespace, name)`` with no grace period, ``workers`` requests in
    flight. A pod already gone is counted, not deleted; any other error is raised (once
    the requests already sent have been answered)."""

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="delete") as pool:
        outcomes = list(pool.map(lambda pod: delete_pod(core, pod), pods))
    deleted = sum(outcomes)
    return Deleted(time.monotonic() - started, deleted, len(outcomes) - deleted)


def delete_pod(core: k8s.CoreV1Api, pod: tuple[str, str]) -> bool:
    """Delete ``(namespace, name)`` with no grace period; return False when it was gone
    already (404). Every other API error is raised, naming the pod."""
    namespace, name = pod
    try:
        core.delete_namespaced_pod(name, namespace, grace_period_seconds=0)
    except k8s.ApiException as exc:
        if exc.status == GONE:
            return False
        raise DeleteRefused(namespace, name, exc) from exc
    return True


class DeleteRefused(RuntimeError):
    """A pod delete answered with something other than success or 'already gone'."""

    def __init__(self, namespace: str, name: str, cause: k8s.ApiException) -> None:
        super().__init__(f"delete of pod {namespace}/{name} failed: {cause.status} {cause.reason}")
        self.status = cause.status
