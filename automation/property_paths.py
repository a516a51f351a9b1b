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
