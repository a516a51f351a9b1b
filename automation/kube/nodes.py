"""Taint, untaint, cordon and uncordon nodes chosen by label selector or by name.

The vpc-move scenario taints the old-VPC nodes (names come from an EC2 lookup) so
nothing new lands there, and the drain cordons each node right before emptying it.
Every function here is idempotent (a node already in the wanted state is left alone
and reported unchanged), honours dry-run (reports what it would change, changes
nothing) and refuses an empty selection, so a typo cannot taint a whole cluster.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from kubernetes import client
from pydantic import BaseModel, ConfigDict, Field, model_validator

from automation.core.errors import UserError, from_api_exception
from automation.core.waiting import summarize
from automation.kube.clients import MERGE_PATCH, list_all, patch_on_conflict, raw

log = logging.getLogger("kubeshift.nodes")


class NodeSelection(BaseModel):
    """Which nodes: an explicit list of names, a label selector, or names within a selector."""

    names: list[str] = Field(default_factory=list, description="Node names (e.g. from EC2).")
    label_selector: str | None = Field(default=None, description="e.g. 'kubeshift/pool=old'.")

    @model_validator(mode="after")
    def _not_everything(self) -> NodeSelection:
        if not self.names and not self.label_selector:
            raise ValueError("a node selection needs names or a label selector")
        return self

    def describe(self) -> str:
        parts = []
        if self.names:
            parts.append(f"nodes {summarize(self.names, 3)}")
        if self.label_selector:
            parts.append(f"selector '{self.label_selector}'")
        return " within ".join(parts)


class Taint(BaseModel):
    """A node taint kubeshift puts on (and takes off) nodes."""

    model_config = ConfigDict(extra="forbid")

    key: str = Field(description="The taint's key.")
    value: str = Field(default="", description="The taint's value; may be empty.")
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = Field(
        default="NoSchedule", description="What the taint does to pods that do not tolerate it."
    )

    def as_dict(self) -> dict[str, str]:
        out = {"key": self.key, "effect": self.effect}
        if self.value:
            out["value"] = self.value
        return out

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}"


@dataclass
class NodeChange:
    """What a node hook did (or would do, in dry-run)."""

    action: str
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    dry_run: bool = False

    @property
    def message(self) -> str:
        verb = "would " + self.action if self.dry_run else self.action
        text = f"{verb} {len(self.changed)} node(s)"
        if self.changed:
            text += f": {summarize(self.changed)}"
        if self.unchanged:
            text += f"; {len(self.unchanged)} already done"
        if self.missing:
            text += f"; not found: {summarize(self.missing)}"
        return text + "."


def select_nodes(core: client.CoreV1Api, selection: NodeSelection) -> tuple[list[dict], list[str]]:
    """The selected nodes (JSON) sorted by name, and the asked-for names that do not exist."""
    kwargs: dict[str, Any] = (
        {"label_selector": selection.label_selector} if selection.label_selector else {}
    )
    items = list_all(core.list_node, action="list nodes", **kwargs)["items"]
    by_name = {n["metadata"]["name"]: n for n in items}
    if not selection.names:
        return [by_name[k] for k in sorted(by_name)], []
    wanted = sorted(set(selection.names))
    return [by_name[n] for n in wanted if n in by_name], [n for n in wanted if n not in by_name]


def _has_taint(node: Mapping[str, Any], taint: Taint) -> bool:
    return any(
        t.get("key") == taint.key
        and t.get("effect") == taint.effect
        and t.get("value", "") == taint.value
        for t in (node.get("spec") or {}).get("taints") or []
    )


def _patch_node(
    core: client.CoreV1Api, name: str, build: Callable[[dict], dict | None], action: str
) -> bool:
    """Read-modify-write with the node's resourceVersion; retries conflicts. True if patched."""
    patched = patch_on_conflict(
        lambda: raw(core.read_node, name, action=f"read node {name}"),
        lambda patch: core.patch_node(
            name, patch, _content_type=MERGE_PATCH, _preload_content=False
        ),
        build,
        f"{action} node {name}",
    )
    return patched.after is not None


def _apply(
    core: client.CoreV1Api,
    selection: NodeSelection,
    action: str,
    wanted: Callable[[dict], bool],
    build: Callable[[dict], dict | None],
    dry_run: bool,
) -> NodeChange:
    nodes, missing = select_nodes(core, selection)
    if not nodes and not missing:
        raise UserError(f"No node matches {selection.describe()}; nothing to {action}.")
    result = NodeChange(action=action, missing=missing, dry_run=dry_run)
    for node in nodes:
        name = node["metadata"]["name"]
        if wanted(node):
            result.unchanged.append(name)
        elif dry_run or _patch_node(core, name, build, action):
            result.changed.append(name)
        else:
            result.unchanged.append(name)
    log.info("%s", result.message)
    return result


def taint_nodes(
    core: client.CoreV1Api, selection: NodeSelection, taint: Taint, *, dry_run: bool = False
) -> NodeChange:
    """Add ``taint`` to every selected node (replacing a same key+effect taint's value)."""

    def build(node: dict) -> dict | None:
        if _has_taint(node, taint):
            return None
        taints = [
            t
            for t in (node.get("spec") or {}).get("taints") or []
            if not (t.get("key") == taint.key and t.get("effect") == taint.effect)
        ]
        return {"spec": {"taints": [*taints, taint.as_dict()]}}

    return _apply(core, selection, f"taint {taint}", lambda n: _has_taint(n, taint), build, dry_run)


def label_nodes(
    core: client.CoreV1Api,
    selection: NodeSelection,
    labels: Mapping[str, str],
    *,
    dry_run: bool = False,
) -> NodeChange:
    """Give every selected node ``labels`` (a node already carrying them is unchanged)."""

    def has(node: Mapping[str, Any]) -> bool:
        present = node["metadata"].get("labels") or {}
        return all(present.get(k) == v for k, v in labels.items())

    def build(node: dict) -> dict | None:
        return None if has(node) else {"metadata": {"labels": dict(labels)}}

    shown = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    return _apply(core, selection, f"label {shown}", has, build, dry_run)


def untaint_nodes(
    core: client.CoreV1Api, selection: NodeSelection, taint: Taint, *, dry_run: bool = False
) -> NodeChange:
    """Remove taints with ``taint``'s key and effect from every selected node."""

    def present(node: Mapping[str, Any]) -> bool:
        return any(
            t.get("key") == taint.key and t.get("effect") == taint.effect
            for t in (node.get("spec") or {}).get("taints") or []
        )

    def build(node: dict) -> dict | None:
        if not present(node):
            return None
        taints = [
            t
            for t in (node.get("spec") or {}).get("taints") or []
            if not (t.get("key") == taint.key and t.get("effect") == taint.effect)
        ]
        return {"spec": {"taints": taints or None}}

    return _apply(
        core,
        selection,
        f"untaint {taint.key}:{taint.effect}",
        lambda n: not present(n),
        build,
        dry_run,
    )


def _unschedulable(node: Mapping[str, Any]) -> bool:
    return bool((node.get("spec") or {}).get("unschedulable"))


def cordon_nodes(
    core: client.CoreV1Api, selection: NodeSelection, *, dry_run: bool = False
) -> NodeChange:
    """Mark the selected nodes unschedulable."""
    return _apply(
        core,
        selection,
        "cordon",
        _unschedulable,
        lambda n: None if _unschedulable(n) else {"spec": {"unschedulable": True}},
        dry_run,
    )


def uncordon_nodes(
    core: client.CoreV1Api, selection: NodeSelection, *, dry_run: bool = False
) -> NodeChange:
    """Mark the selected nodes schedulable again."""
    return _apply(
        core,
        selection,
        "uncordon",
        lambda n: not _unschedulable(n),
        lambda n: {"spec": {"unschedulable": None}} if _unschedulable(n) else None,
        dry_run,
    )


def cordon(core: client.CoreV1Api, name: str) -> None:
    """Cordon one node without reading it first (the drain already knows it is schedulable)."""
    try:
        core.patch_node(
            name,
            {"spec": {"unschedulable": True}},
            _content_type=MERGE_PATCH,
            _preload_content=False,
        )
    except client.ApiException as exc:
        raise from_api_exception(exc, f"cordon node {name}") from exc
