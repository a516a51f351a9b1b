"""Review artifacts computed offline: what changes between two phases of a stack.

``kubeshift diff`` renders both phases under Pulumi's mocks and compares the declared
resources by (type, logical name): added, removed, and changed with the input keys
that differ. It needs no engine and no credentials, so a reviewer can attach it to a
pull request.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


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

    def as_dict(self) -> dict[str, Any]:
        return {
            "added": [str(k) for k in self.added],
            "removed": [str(k) for k in self.removed],
            "changed": {str(k): keys for k, keys in self.changed.items()},
        }


def _index(resources: Iterable[Any]) -> dict[ResourceKey, dict[str, Any]]:
    return {ResourceKey(r.type, r.name): dict(r.inputs) for r in resources}


def diff_resources(before: Iterable[Any], after: Iterable[Any]) -> PhaseDiff:
    """Compare two renderings (objects with ``type``, ``name``, ``inputs``)."""
    old, new = _index(before), _index(after)
    result = PhaseDiff(
        added=sorted(set(new) - set(old), key=str),
        removed=sorted(set(old) - set(new), key=str),
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
    from automation.render import render

    index = phase_ids.index(phase)
    if index == 0:
        return ()
    diff = diff_resources(render(values, phase_ids[index - 1]), render(values, phase))
    keys = [*diff.removed, *diff.changed]
    return tuple(_escape(str(key)) for key in sorted(keys, key=str))
