"""Review artifacts computed offline: what changes between two phases of a stack.

``kubeshift diff`` renders both phases under Pulumi's mocks and compares the declared
resources by (type, logical name): added, removed, and changed with the input keys
that differ. It needs no engine and no credentials, so a reviewer can attach it to a
pull request.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from components.contract import policy

if TYPE_CHECKING:
    from components.contract.models import StackConfig


@dataclass(frozen=True)
class ResourceKey:
    type: str
    name: str

    def __str__(self) -> str:
        return f"{self.type}::{self.name}"


@dataclass
class PhaseDiff:
    added: list[ResourceKey] = field(default_factory=list)
    removed: list[ResourceKey] = field(default_factory=list)
    changed: dict[ResourceKey, list[str]] = field(default_factory=dict)
    moved: dict[ResourceKey, ResourceKey] = field(default_factory=dict)  # new <- old (alias)

    def as_dict(self) -> dict[str, Any]:
        return {
            "added": [str(k) for k in self.added],
            "removed": [str(k) for k in self.removed],
            "changed": {str(k): keys for k, keys in self.changed.items()},
            "moved": {str(new): str(old) for new, old in self.moved.items()},
        }


def _index(resources: Iterable[Any]) -> dict[ResourceKey, dict[str, Any]]:
    return {ResourceKey(r.type, r.name): dict(r.inputs) for r in resources}


def _alias_keys(resource: Any) -> list[ResourceKey]:
    """The old identities a resource declares through Pulumi aliases."""
    keys = []
    for alias in getattr(resource, "aliases", ()) or ():
        if "urn" in alias:
            urn = str(alias["urn"])
            qualified = urn.rsplit("::", 2)[-2] if urn.count("::") >= 2 else ""
            keys.append(ResourceKey(qualified.rsplit("$", 1)[-1], urn.rsplit("::", 1)[-1]))
        elif "name" in alias:
            keys.append(ResourceKey(str(alias.get("type") or resource.type), str(alias["name"])))
    return keys


def diff_resources(before: Iterable[Any], after: Iterable[Any]) -> PhaseDiff:
    """Compare two renderings (objects with ``type``, ``name``, ``inputs``, ``aliases``).

    A new resource whose alias names a resource that disappeared is a move (the engine
    keeps its state), not an add plus a remove.
    """
    before, after = list(before), list(after)
    old, new = _index(before), _index(after)
    added = set(new) - set(old)
    removed = set(old) - set(new)
    moved: dict[ResourceKey, ResourceKey] = {}
    for resource in after:
        key = ResourceKey(resource.type, resource.name)
        if key not in added:
            continue
        for alias in _alias_keys(resource):
            if alias in removed:
                moved[key] = alias
                added.discard(key)
                removed.discard(alias)
                break
    result = PhaseDiff(
        added=sorted(added, key=str),
        removed=sorted(removed, key=str),
        moved=dict(sorted(moved.items(), key=lambda kv: str(kv[0]))),
    )
    for key in sorted(set(old) & set(new), key=str):
        keys = sorted(
            k for k in set(old[key]) | set(new[key]) if old[key].get(k) != new[key].get(k)
        )
        if keys:
            result.changed[key] = keys
    return result


def count_by_type(keys: Iterable[ResourceKey]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for key in keys:
        counts[key.type] = counts.get(key.type, 0) + 1
    return dict(sorted(counts.items()))


def _escape(text: str) -> str:
    """Make ``text`` match itself literally as an fnmatch pattern."""
    return "".join(f"[{c}]" if c in "*?[]" else c for c in text)


def program_scope(
    values: dict[str, Any], phase_ids: tuple[str, ...], phase: str
) -> tuple[str, ...]:
    """``type::name`` patterns of what the program removes or changes entering ``phase``.

    Rendered offline (mocks) from the previous phase to ``phase``; the first phase has
    no previous one and so retires nothing.
    """
    from automation.review.render import render

    index = phase_ids.index(phase)
    if index == 0:
        return ()
    return scope_of(diff_resources(render(values, phase_ids[index - 1]), render(values, phase)))


def scope_of(diff: PhaseDiff) -> tuple[str, ...]:
    """``type::name`` patterns of what ``diff`` removes or changes."""
    keys = [*diff.removed, *diff.changed]
    return tuple(_escape(str(key)) for key in sorted(keys, key=str))


def undo_scope_of(diff: PhaseDiff) -> tuple[str, ...]:
    """``type::name`` patterns of everything ``diff`` adds, removes or changes: what
    going back may touch (``model.change_policy.undoes_what_the_phase_did``)."""
    keys = [*diff.added, *diff.removed, *diff.changed]
    return tuple(_escape(str(key)) for key in sorted(keys, key=str))


def policy_violations(config: StackConfig, resources: Sequence[policy.Recorded]) -> list[str]:
    """``contract.policy``'s rules over one render, with the ports the config makes public."""
    cluster = config.cluster
    public = policy.public_ports_of(
        not cluster.ingress.internal,
        [listener.port for listener in cluster.ingress.listeners],
        not cluster.api.internal,
        cluster.control_plane.api_port,
    )
    found = policy.check_all(resources, cluster.tag_id, public, legacy_tags=cluster.legacy_tags)
    return [str(v) for v in found]
