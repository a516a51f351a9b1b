"""One runner per CronJob while two clusters hold the same workloads (cni-swap's window).

The copy brings every CronJob to the mirror suspended. The primary's keep running until
the primary is taken down (the CNI swap); then ``hand_over`` suspends them there and
resumes the copies on the mirror, and the reverse when traffic returns. A CronJob the
user had suspended stays suspended on both sides: only CronJobs kubeshift suspended
carry :data:`SUSPENDED_BY` and only those are resumed. Jobs already running where a
CronJob is suspended are reported and left to finish, never killed. Every switch is a
patch of ``spec.suspend`` that checks first, so a second run changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from automation.core.results import HookResult
from automation.kube.clients import KubeClients, list_all, raw

SUSPENDED_BY = "kubeshift.io/suspended-by"
"""On a CronJob kubeshift suspended (the value: why), and only on those."""
COPY_SUSPENDED = "cni-swap: the copy runs on the other cluster"
Side = Literal["primary", "mirror"]


@dataclass(frozen=True)
class CronJobState:
    """One CronJob as one cluster holds it."""

    namespace: str
    name: str
    suspended: bool
    by_kubeshift: bool
    active: int

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def by_user(self) -> bool:
        return self.suspended and not self.by_kubeshift


def cronjobs(clients: KubeClients, namespaces: Iterable[str]) -> dict[str, CronJobState]:
    """The CronJobs of ``namespaces``, by ``namespace/name``."""
    found: dict[str, CronJobState] = {}
    for namespace in namespaces:
        action = f"list CronJobs in {namespace}"
        listed = list_all(clients.batch.list_namespaced_cron_job, namespace, action=action)["items"]
        for obj in listed:
            state = _state(obj)
            found[state.key] = state
    return found


def _state(obj: Mapping[str, Any]) -> CronJobState:
    meta = obj.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    return CronJobState(
        namespace=meta.get("namespace", ""),
        name=meta.get("name", ""),
        suspended=bool((obj.get("spec") or {}).get("suspend")),
        by_kubeshift=SUSPENDED_BY in annotations,
        active=len((obj.get("status") or {}).get("active") or []),
    )


def set_suspended(
    clients: KubeClients, state: CronJobState, suspend: bool, *, dry_run: bool = False
) -> bool:
    """Suspend (marked as kubeshift's) or resume (mark removed) one CronJob; whether it
    changed. One already suspended stays as it is; a user-suspended one is never resumed."""
    if suspend and state.suspended:
        return False
    if not suspend and (not state.suspended or state.by_user):
        return False
    if dry_run:
        return True
    body = {
        "metadata": {"annotations": {SUSPENDED_BY: COPY_SUSPENDED if suspend else None}},
        "spec": {"suspend": suspend},
    }
    raw(
        clients.batch.patch_namespaced_cron_job,
        state.name,
        state.namespace,
        body,
        action=f"{'suspend' if suspend else 'resume'} CronJob {state.key}",
    )
    return True


@dataclass
class HandOver:
    """What a hand-over did, per CronJob: where it runs, and Jobs left to finish."""

    runs_on: dict[str, str] = field(default_factory=dict)
    changed: list[str] = field(default_factory=list)
    still_running: list[str] = field(default_factory=list)
    dry_run: bool = False

    @property
    def message(self) -> str:
        placed = {side: sum(1 for v in self.runs_on.values() if v == side)
                  for side in ("primary", "mirror", "neither (suspended by the user)")}  # fmt: skip
        where = ", ".join(f"{n} on {side}" for side, n in placed.items() if n)
        verb = "would switch" if self.dry_run else "switched"
        text = f"{len(self.runs_on)} CronJob(s): {where or 'none'}; {verb} {len(self.changed)}"
        if self.still_running:
            text += f"; Jobs still running, left to finish: {', '.join(self.still_running)}"
        return text

    def as_hook_result(self) -> HookResult:
        """The journalled result: ``runs_on`` per CronJob is what ``status`` shows."""
        return HookResult(
            bool(self.changed) and not self.dry_run,
            self.message,
            {"runs_on": dict(self.runs_on), "still_running": list(self.still_running)},
        )


def hand_over(
    to: Side,
    primary: KubeClients,
    mirror: KubeClients,
    namespaces: Iterable[str],
    *,
    dry_run: bool = False,
) -> HandOver:
    """Make ``to`` the one cluster that runs each CronJob present on both sides."""
    scope = list(namespaces)
    sides = {"primary": primary, "mirror": mirror}
    states = {side: cronjobs(clients, scope) for side, clients in sides.items()}
    source: Side = "mirror" if to == "primary" else "primary"
    report = HandOver(dry_run=dry_run)
    for key in sorted(states["primary"]):
        on_primary = states["primary"][key]
        if key not in states["mirror"]:
            report.runs_on[key] = "primary" if not on_primary.suspended else "neither"
            continue
        if on_primary.by_user:  # the user's choice holds on both sides
            report.runs_on[key] = "neither (suspended by the user)"
            continue
        stopped = states[source][key]
        if set_suspended(sides[source], stopped, True, dry_run=dry_run):
            report.changed.append(f"{key} suspended on {source}")
            if stopped.active:
                report.still_running.append(f"{key} ({stopped.active} on {source})")
        started = states[to][key]
        if set_suspended(sides[to], started, False, dry_run=dry_run):
            report.changed.append(f"{key} resumed on {to}")
        report.runs_on[key] = to
    return report


def restore(primary: KubeClients, namespaces: Iterable[str], *, dry_run: bool = False) -> HandOver:
    """The primary's CronJobs as they were before the scenario: resume those kubeshift
    suspended (the mirror is being torn down)."""
    report = HandOver(dry_run=dry_run)
    for key, state in sorted(cronjobs(primary, namespaces).items()):
        if state.by_kubeshift and set_suspended(primary, state, False, dry_run=dry_run):
            report.changed.append(f"{key} resumed on primary")
        report.runs_on[key] = "neither (suspended by the user)" if state.by_user else "primary"
    return report
