"""Pulumi property paths (``tags["kubernetes.io/role"]``, ``ingress[0].cidrBlocks``).

The engine names each property of a detailed diff by such a path; adoption reads the
live and the declared value at it to say what differs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from pulumi.runtime import rpc

from automation.core.masking import mask_credentials
from components.contract.userdata import decode

_SEGMENT = re.compile(r'\["((?:[^"\\]|\\.)*)"\]|\[(\d+)\]|\.?([^.\[\]]+)')
MISSING = object()
UNKNOWN_SHOWN = "(known only after the update)"
"""How :func:`shown` says a value a preview cannot know yet (the id of a resource it
would create), which the engine's step metadata carries as :data:`rpc.UNKNOWN`."""


def segments(path: str) -> list[str | int]:
    """``a.b[0]["c.d"]`` -> ``["a", "b", 0, "c.d"]``."""
    found: list[str | int] = []
    for quoted, index, plain in _SEGMENT.findall(path):
        if index:
            found.append(int(index))
        elif plain:
            found.append(plain)
        else:
            found.append(json.loads(f'"{quoted}"'))
    return found


def top_level(path: str) -> str:
    """``tags["team"]`` -> ``tags``; ``healthCheck.timeout`` -> ``healthCheck``."""
    return path.split(".", 1)[0].split("[", 1)[0]


def value_at(document: Mapping[str, Any] | None, path: str) -> Any:
    """The value at ``path`` in ``document``; :data:`MISSING` when absent."""
    current: Any = document or {}
    for segment in segments(path):
        in_list = isinstance(segment, int) and isinstance(current, list) and segment < len(current)
        in_map = isinstance(segment, str) and isinstance(current, Mapping) and segment in current
        if not (in_list or in_map):
            return MISSING
        current = current[segment]
    return current


def shown(value: Any, limit: int = 80) -> str:
    """A value on one line, cut at ``limit`` characters; ``(none)`` when absent, and an
    unknown one said so."""
    if value is MISSING or value is None:
        return "(none)"
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    text = " ".join(str(text).split()).replace(rpc.UNKNOWN, UNKNOWN_SHOWN)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shown_change(path: str, old: Any, new: Any) -> tuple[str, str]:
    """``old`` and ``new`` at ``path`` on one line each. Two boot scripts (base64 user
    data) are shown where they part, by line, as their encodings would not say, with any
    credential on that line masked; two maps (tags, as a map or as an Auto Scaling
    group's list of key/value blocks) by the keys where they differ, which a line cut at
    its width would not reach."""
    if segments(path)[-1:] in (["userData"], ["userDataBase64"]):
        before, after = (decode(v) if isinstance(v, str) else None for v in (old, new))
        if before is not None and after is not None and before != after:
            return _where_scripts_part(before.splitlines(), after.splitlines())
    before_map, after_map = _as_map(old), _as_map(new)
    if before_map is not None and after_map is not None and before_map != after_map:
        return _where_maps_part(before_map, after_map)
    return shown(old), shown(new)


def added_keys(path: str, old: Any, new: Any) -> tuple[str, ...]:
    """The keys a change only adds to a map (tags, at any depth: a template's tag
    specifications), sorted; empty when it changes or removes anything. ``path`` may
    name the map or one key of it (``tags["a"]``)."""
    absent = old is MISSING or old is None
    steps = segments(path)
    if len(steps) > 1 and isinstance(steps[-1], str) and absent and new is not MISSING:
        return (steps[-1],) if new is not None else ()
    before = {} if absent else _as_map(old)
    after = _as_map(new)
    if before is None or after is None:
        return ()
    found = _added(before, after)
    return tuple(sorted(found)) if found else ()


def _added(before: Mapping[str, Any], after: Mapping[str, Any]) -> set[str] | None:
    """The keys ``after`` adds to ``before`` at any depth; None if it changes any other."""
    added = set(after.keys() - before.keys())
    for key, value in before.items():
        if key not in after:
            return None
        inner = after[key]
        if isinstance(value, Mapping) and isinstance(inner, Mapping):
            deeper = _added(value, inner)
            if deeper is None:
                return None
            added |= deeper
        elif value != inner:
            return None
    return added


def _as_map(value: Any) -> dict[str, Any] | None:
    """A map as it is, a list of ``{key, value, …}`` blocks keyed by ``key`` (a group's
    tags), or of ``{resourceType, …}`` blocks keyed by their type (a template's tag
    specifications); None for anything else."""
    if isinstance(value, Mapping):
        return dict(value)
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(b, Mapping) for b in value):
        return None
    if all(isinstance(b.get("key"), str) for b in value):
        return {b["key"]: _block_value(b) for b in value}
    if all(isinstance(b.get("resourceType"), str) for b in value):
        return {b["resourceType"]: {k: v for k, v in b.items() if k != "resourceType"}
                for b in value}  # fmt: skip
    return None


def _block_value(block: Mapping[str, Any]) -> Any:
    """A tag block's value, said so when it is not propagated to the group's instances;
    the whole block but its key when it says more than that."""
    if not set(block) <= {"key", "value", "propagateAtLaunch"}:
        return json.dumps({k: v for k, v in block.items() if k != "key"}, sort_keys=True)
    if block.get("propagateAtLaunch", True):
        return block.get("value")
    return f"{block.get('value')} (not propagated)"


def _where_maps_part(before: dict[str, Any], after: dict[str, Any]) -> tuple[str, str]:
    """Both maps by the leaves where they differ, a nested map's by its dotted path."""
    flat_before, flat_after = _leaves(before), _leaves(after)
    every = flat_before.keys() | flat_after.keys()
    keys = sorted(k for k in every if flat_before.get(k, MISSING) != flat_after.get(k, MISSING))

    def only(side: dict[str, Any]) -> str:
        parted = json.dumps({k: side.get(k, "(none)") for k in keys}, sort_keys=True, default=str)
        return shown(f"{len(keys)} of {len(every)} keys differ: {parted}", limit=120)

    return only(flat_before), only(flat_after)


def _leaves(value: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, item in value.items():
        if isinstance(item, Mapping) and item:
            flat.update(_leaves(item, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = item
    return flat


def _where_scripts_part(before: list[str], after: list[str]) -> tuple[str, str]:
    line = next(
        (i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b),
        min(len(before), len(after)),
    )

    def at(lines: list[str]) -> str:
        text = mask_credentials(lines[line]) if line < len(lines) else "(end of script)"
        return shown(f"script line {line + 1} of {len(lines)}: {text}")

    return at(before), at(after)
