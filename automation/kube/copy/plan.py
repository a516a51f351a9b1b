"""What a copy would write: every listed source object, prepared, or why it is skipped.

The copy applies this plan and the drift check compares it with the copies' stamps, so
both see the primary alike. Workloads that keep data in PersistentVolumeClaims are
found here too (:func:`stateful_workloads`), whatever ``stateful`` choice is then made.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from automation.kube.copy.api import Apis, list_objects
from automation.kube.copy.kinds import KindSpec, Obj
from automation.kube.copy.options import CopyOptions
from automation.kube.copy.transforms import digest, prepare, skip_reason
from automation.kube.stateful import StatefulWorkload, claims, dig


@dataclass
class Planned:
    """One listed source object: its mirror manifest and digest, or why it is skipped."""

    spec: KindSpec
    source: Obj
    manifest: Obj = field(default_factory=dict)
    digest: str = ""
    images: tuple[str, ...] = ()
    skip: str = ""
    claims: tuple[str, ...] = ()
    """PersistentVolumeClaims the object keeps data in (its copy starts without them)."""

    @property
    def name(self) -> str:
        return str(self.source["metadata"]["name"])

    def stateful(self, namespace: str) -> StatefulWorkload:
        template = dig(self.source, (self.spec.pod_spec or ("spec",))[:-1]) or {}
        labels = (template.get("metadata") or {}).get("labels") or {}
        return StatefulWorkload(self.spec.kind, namespace, self.name, self.claims, labels)


def plan_namespace(apis: Apis, options: CopyOptions, namespace: str) -> list[Planned]:
    """Every listed source object of ``namespace``, prepared or with its skip reason."""
    listed: list[tuple[KindSpec, Obj]] = []
    for spec in options.specs:
        listed.extend(
            (spec, obj) for obj in list_objects(apis, spec, namespace, options.label_selector)
        )
    uids = {o["metadata"].get("uid", ""): f"{s.kind}/{o['metadata']['name']}" for s, o in listed}
    uids.pop("", None)
    planned = []
    for spec, obj in listed:
        why = skip_reason(spec, obj, uids)
        if spec.kind == "Job" and not options.skip_finished_jobs and why == "finished job":
            why = ""
        item = Planned(spec, obj, skip=why)
        if not why:
            item.claims = claims(spec.kind, obj, spec.pod_spec)
            if item.claims and options.stateful == "leave-on-primary":
                item.skip = (
                    f"keeps its data in PersistentVolumeClaims ({', '.join(item.claims)}); "
                    "left on the primary"
                )
        if not item.skip:
            item.manifest, images = prepare(spec, obj, options.registry_rewrites)
            item.images = tuple(images)
            item.digest = digest(item.manifest)
        planned.append(item)
    return planned


def stateful_workloads(primary: Any, options: CopyOptions) -> list[StatefulWorkload]:
    """The workloads of ``options.namespaces`` on the primary that keep data in claims
    (what the copy would otherwise take, whatever ``options.stateful`` says)."""
    apis = Apis(primary)
    every = options.model_copy(update={"stateful": "copy-without-data"})
    return [
        item.stateful(namespace)
        for namespace in options.namespaces
        for item in plan_namespace(apis, every, namespace)
        if item.claims and not item.skip
    ]
