"""The copy itself: each namespace's plan applied on the mirror, kind by kind.

:func:`copy_namespaces` refuses workloads that keep data in claims (unless told
otherwise) before writing anything, creates the namespaces the mirror lacks, applies
every object whose source digest differs from its mirror copy's (several at once
within a kind, kinds in order), and reports each object's outcome: one failing object
does not stop the rest.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

from automation.core.errors import KubeshiftError, PreconditionFailed
from automation.core.progress import NullReporter, Reporter
from automation.kube.copy.api import Apis, apply_object, list_objects
from automation.kube.copy.kinds import KindSpec
from automation.kube.copy.namespaces import ensure_namespace
from automation.kube.copy.options import CopyOptions
from automation.kube.copy.plan import Planned, plan_namespace
from automation.kube.copy.report import Action, CopyItem, CopyReport
from automation.kube.copy.transforms import SOURCE_DIGEST, stamped
from automation.kube.stateful import refusal as stateful_refusal

log = logging.getLogger("kubeshift.copy")


def _mirror_digests(apis: Apis, spec: KindSpec, namespace: str) -> dict[str, str]:
    return {
        o["metadata"]["name"]: ((o["metadata"].get("annotations") or {}).get(SOURCE_DIGEST, ""))
        for o in list_objects(apis, spec, namespace, None)
    }


def copy_namespaces(
    primary: Any,
    mirror: Any,
    options: CopyOptions,
    *,
    dry_run: bool = False,
    reporter: Reporter | None = None,
) -> CopyReport:
    """Copy ``options.namespaces`` from ``primary`` to ``mirror`` (both ``KubeClients``).

    Idempotent: an object whose mirror copy carries the same source digest is left
    alone (``unchanged``), so a second run writes nothing. A dry run writes nothing
    either; it lists what it would create or update and validates each change with a
    server-side dry-run apply where the namespace already exists on the mirror.
    A failing object is reported ``failed`` and the rest still copy; call
    ``raise_for_failure()`` or ``as_hook_result()`` on the report.
    """
    source_apis, mirror_apis = Apis(primary), Apis(mirror)
    plans = {ns: plan_namespace(source_apis, options, ns) for ns in options.namespaces}
    if options.stateful == "refuse":
        found = [p.stateful(ns) for ns, planned in plans.items() for p in planned if p.claims]
        if found:  # before anything is written on the mirror
            raise PreconditionFailed(stateful_refusal(found))
    items: list[CopyItem] = []
    created_ns: list[str] = []
    with (reporter or NullReporter()).task("copy to mirror", total=len(options.namespaces)) as task:
        for namespace in options.namespaces:
            new_ns = ensure_namespace(
                primary, mirror, namespace, manager=options.field_manager, dry_run=dry_run
            )
            if new_ns:
                created_ns.append(namespace)
            planned = plans[namespace]
            on_mirror: dict[str, dict[str, str]] = {}
            for spec in options.specs:
                if new_ns:
                    on_mirror[spec.kind] = {}
                else:
                    on_mirror[spec.kind] = _mirror_digests(mirror_apis, spec, namespace)
            with ThreadPoolExecutor(options.concurrency) as pool:
                for spec in options.specs:  # kind by kind: what others reference goes first
                    copy_one = partial(
                        _copy_one,
                        apis=mirror_apis,
                        mirror_digests=on_mirror[spec.kind],
                        namespace=namespace,
                        options=options,
                        dry_run=dry_run,
                        namespace_is_new=new_ns,
                    )
                    items.extend(pool.map(copy_one, [p for p in planned if p.spec is spec]))
            task.advance()
            task.update(detail=namespace)
    report = CopyReport(tuple(items), options.namespaces, tuple(created_ns), dry_run)
    log.info("%s", report.summary())
    return report


def _copy_one(
    p: Planned,
    *,
    apis: Apis,
    mirror_digests: Mapping[str, str],
    namespace: str,
    options: CopyOptions,
    dry_run: bool,
    namespace_is_new: bool,
) -> CopyItem:
    def item(action: Action, reason: str = "") -> CopyItem:
        if p.claims and not reason:
            reason = f"without its data ({', '.join(p.claims)} start empty)"
        return CopyItem(p.spec.kind, namespace, p.name, action, reason, p.images)

    if p.skip:
        return CopyItem(p.spec.kind, namespace, p.name, "skipped", p.skip)
    present = p.name in mirror_digests
    if present and mirror_digests[p.name] == p.digest:
        return item("unchanged")
    body = stamped(p.manifest, p.source, p.digest)
    try:
        if dry_run:
            if not namespace_is_new:  # the server validates the change without keeping it
                apply_object(apis, p.spec, body, manager=options.field_manager, dry_run=True)
            return item("would-update" if present else "would-create")
        apply_object(apis, p.spec, body, manager=options.field_manager, dry_run=False)
    except KubeshiftError as exc:
        log.warning("copy of %s %s/%s failed: %s", p.spec.kind, namespace, p.name, exc)
        return item("failed", str(exc))
    log.debug("applied %s %s/%s on the mirror", p.spec.kind, namespace, p.name)
    return item("updated" if present else "created")
