"""Taking a copy back: what the copy wrote on the mirror deleted, and the gate that it went.

A namespace the copy created (``namespaces.CREATED_BY_COPY``) is deleted whole; in a
namespace the mirror had before, only the copies go — the objects carrying the copy's
source stamp and no owner, never the mirror's own. Deleting again what is already gone,
or a namespace already terminating, changes nothing, so the step can run again after a
crash.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubernetes import client

from automation.core.errors import KubeshiftError
from automation.core.results import HookResult
from automation.core.waiting import Pending, summarize
from automation.kube.copy.api import Apis, call_api, not_found
from automation.kube.copy.drift import snapshot_from_mirror
from automation.kube.copy.kinds import KIND_BY_NAME
from automation.kube.copy.namespaces import created_by_copy, read_namespace
from automation.kube.copy.options import CopyOptions


def _terminating(namespace: Mapping[str, Any]) -> bool:
    return (namespace.get("status") or {}).get("phase") == "Terminating"


@dataclass(frozen=True)
class RemovalReport:
    """What taking the copy back deleted (or, in a dry run, would delete)."""

    namespaces: tuple[str, ...]
    """Namespaces the copy created, deleted whole."""
    objects: tuple[str, ...]
    """``Kind namespace/name`` of the copies deleted from namespaces the mirror had."""
    dry_run: bool = False

    def as_hook_result(self) -> HookResult:
        verb = "would delete" if self.dry_run else "deleted"
        parts = []
        if self.namespaces:
            parts.append(f"{verb} namespace(s) {', '.join(self.namespaces)}")
        if self.objects:
            parts.append(f"{verb} {len(self.objects)} copied object(s): {summarize(self.objects)}")
        return HookResult(
            changed=bool(parts) and not self.dry_run,
            message="; ".join(parts) or "nothing the copy wrote is left on the mirror",
            details={"namespaces": list(self.namespaces), "objects": list(self.objects)},
        )


def _delete(fn: Any, *args: Any, action: str) -> None:
    """Delete, in the background (owned objects follow); already gone is done."""
    try:
        call_api(fn, *args, action=action, propagation_policy="Background")
    except KubeshiftError as exc:
        if not not_found(exc):
            raise


def remove_copies(mirror: Any, options: CopyOptions, *, dry_run: bool = False) -> RemovalReport:
    """Delete from ``mirror`` (``KubeClients``) what copying ``options`` wrote there."""
    core = client.CoreV1Api(mirror.api_client)
    whole: list[str] = []
    kept: set[str] = set()
    for name in options.namespaces:
        namespace = read_namespace(core, name, "mirror")
        if namespace is None or _terminating(namespace):
            continue
        if created_by_copy(namespace):
            whole.append(name)
            if not dry_run:
                _delete(
                    core.delete_namespace, name, action=f"delete namespace {name} on the mirror"
                )
        else:
            kept.add(name)
    apis = Apis(mirror)
    copies = sorted(
        (
            (kind, ns, name)
            for kind, ns, name in snapshot_from_mirror(mirror, options)
            if ns in kept
        ),
        key=lambda key: -options.kinds.index(key[0]),  # what references others first
    )
    for kind, where, name in copies if not dry_run else ():
        _delete(
            apis.method(KIND_BY_NAME[kind], "delete"),
            name,
            where,
            action=f"delete {kind} {where}/{name} on the mirror",
        )
    return RemovalReport(
        tuple(whole), tuple(f"{kind} {ns}/{name}" for kind, ns, name in copies), dry_run
    )


def copies_gone(mirror: Any, options: CopyOptions) -> Pending:
    """Nothing the copy wrote is left on the mirror: its namespaces finished terminating,
    no copy left in the namespaces the mirror had."""
    core = client.CoreV1Api(mirror.api_client)
    namespaces = {name: read_namespace(core, name, "mirror") for name in options.namespaces}
    items = [
        f"namespace {name}: still terminating on the mirror"
        for name, found in namespaces.items()
        if found is not None and _terminating(found)
    ]
    items += [
        f"{kind} {ns}/{name}: copy still on the mirror"
        for kind, ns, name in sorted(snapshot_from_mirror(mirror, options))
    ]
    return Pending.of(items, f"nothing copied left in {len(options.namespaces)} namespace(s)")
