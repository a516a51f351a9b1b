"""PodDisruptionBudgets followed by watch, so evictions are sent when a budget allows them.

kubectl retries a blocked eviction every 5 s. Following the budgets instead lets a
drain (a) not send evictions a budget is known to refuse (fewer requests, fewer 429s)
and (b) retry the moment ``disruptionsAllowed`` rises, instead of up to 5 s later.
Each status update grants as many "tokens" as it allows; a pod takes one before its
eviction. The tracker is only an optimisation: when it knows nothing about a budget
(not observed yet, watch lagging), callers fall back to backoff and the API server
stays the judge.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from kubernetes import client

from automation.kube.selectors import matches
from automation.kube.watching import ListWatcher


def pdb_key(pdb: Mapping[str, Any]) -> str:
    meta = pdb.get("metadata") or {}
    return f"{meta.get('namespace')}/{meta.get('name')}"


def describe_pdb(pdb: Mapping[str, Any]) -> str:
    """``payments/api (minAvailable 3; currentHealthy 3, desiredHealthy 3, allowed 0)``."""
    spec = pdb.get("spec") or {}
    status = pdb.get("status") or {}
    rule = (
        f"minAvailable {spec['minAvailable']}"
        if spec.get("minAvailable") is not None
        else f"maxUnavailable {spec.get('maxUnavailable')}"
    )
    return (
        f"{pdb_key(pdb)} ({rule}; currentHealthy {status.get('currentHealthy', '?')}, "
        f"desiredHealthy {status.get('desiredHealthy', '?')}, "
        f"disruptionsAllowed {status.get('disruptionsAllowed', '?')})"
    )


def observed(pdb: Mapping[str, Any]) -> bool:
    """True when the disruption controller has caught up with the PDB's spec."""
    meta = pdb.get("metadata") or {}
    status = pdb.get("status") or {}
    gen = meta.get("generation")
    seen = status.get("observedGeneration")
    return seen is not None and (gen is None or seen >= gen)


class BudgetTracker:
    """Latest state of every PDB, kept by one list + watch, with eviction tokens."""

    def __init__(
        self,
        policy: client.PolicyV1Api,
        on_change: Callable[[str | None], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._policy = policy
        self._clock = clock
        self._updated: dict[str, float] = {}
        self._on_change = on_change or (lambda key: None)  # the budget's key; None: all
        self._lock = threading.Lock()
        self._pdbs: dict[str, dict[str, Any]] = {}
        self._claimed: dict[str, int] = {}
        self._watcher: ListWatcher | None = None

    # --- lifecycle -------------------------------------------------------------------
    def start(self) -> BudgetTracker:
        """List the budgets (ready on return), then follow them in a background watch."""
        self._watcher = ListWatcher(
            self._policy.list_pod_disruption_budget_for_all_namespaces,
            name="PodDisruptionBudgets",
            on_sync=self._sync,
            on_event=self._event,
        ).start()
        return self

    def stop(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()

    def load(self, items: list[dict[str, Any]]) -> None:
        """Replace the known budgets (also used by tests to feed a fixed state)."""
        self._sync(items)

    def _sync(self, items: list[dict[str, Any]]) -> None:
        now = self._clock()
        with self._lock:
            self._pdbs = {pdb_key(p): p for p in items}
            self._updated = dict.fromkeys(self._pdbs, now)
            self._claimed.clear()
        self._on_change(None)

    def _event(self, kind: str, obj: dict[str, Any]) -> None:
        key = pdb_key(obj)
        with self._lock:
            if kind == "DELETED":
                self._pdbs.pop(key, None)
            else:
                self._pdbs[key] = obj
            self._updated[key] = self._clock()
            self._claimed[key] = 0
        self._on_change(key)

    # --- queries ---------------------------------------------------------------------
    def budgets_for(self, namespace: str, labels: Mapping[str, str] | None) -> list[str]:
        with self._lock:
            return sorted(
                key
                for key, pdb in self._pdbs.items()
                if key.startswith(namespace + "/")
                and matches((pdb.get("spec") or {}).get("selector"), labels)
            )

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            return self._pdbs.get(key)

    def describe(self, key: str) -> str:
        pdb = self.get(key)
        return describe_pdb(pdb) if pdb else key

    def follows(self, keys: list[str]) -> bool:
        """True when every budget in ``keys`` is known and observed (its updates will come)."""
        with self._lock:
            return bool(keys) and all(
                (p := self._pdbs.get(k)) is not None and observed(p) for k in keys
            )

    def quiet_for(self, keys: list[str]) -> float:
        """Seconds since the least recently updated budget of ``keys`` last changed."""
        now = self._clock()
        with self._lock:
            return max((now - self._updated.get(k, now) for k in keys), default=0.0)

    def try_claim(self, keys: list[str]) -> bool | None:
        """Take one eviction token from each of ``keys``.

        True: every budget allows one more eviction (tokens taken). False: a budget is
        known to allow none right now. None: unknown (no budgets, or not observed yet).
        """
        if not keys:
            return None
        with self._lock:
            pdbs = [self._pdbs.get(k) for k in keys]
            if any(p is None or not observed(p) for p in pdbs):
                return None
            for key, pdb in zip(keys, pdbs, strict=True):
                allowed = int(((pdb or {}).get("status") or {}).get("disruptionsAllowed", 0))
                if allowed - self._claimed.get(key, 0) <= 0:
                    return False
            for key in keys:
                self._claimed[key] = self._claimed.get(key, 0) + 1
            return True

    def release(self, keys: list[str]) -> None:
        """Give back tokens of an eviction that was not sent or did not count."""
        with self._lock:
            for key in keys:
                if self._claimed.get(key, 0) > 0:
                    self._claimed[key] -= 1
