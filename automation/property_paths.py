"""Pulumi property paths (``tags["kubernetes.io/role"]``, ``ingress[0].cidrBlocks``).

The engine names each property of a detailed diff by such a path; adoption reads the
live and the declared value at it to say what differs.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from typing import Any

from pulumi.runtime import rpc

_SEGMENT = re.compile(r'\["((?:[^"\\]|\\.)*)"\]|\[(\d+)\]|\.?([^.\[\]]+)')
MISSING = object()
ENCODED_SCRIPTS = ("userData", "userDataBase64")
"""Properties that hold a boot script in base64 (EC2 user data)."""
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


def _script_lines(value: Any) -> list[str] | None:
    if not isinstance(value, str):
        return None
    try:
        return base64.b64decode("".join(value.split()), validate=True).decode().splitlines()
    except (binascii.Error, UnicodeDecodeError):
        return None


def shown_change(path: str, old: Any, new: Any) -> tuple[str, str]:
    """``old`` and ``new`` at ``path`` on one line each. Two boot scripts (base64 user
    data) are shown where they part, by line, as their encodings would not say."""
    last = segments(path)[-1:] if path else []
    scripts = [_script_lines(v) for v in (old, new)] if last and last[0] in ENCODED_SCRIPTS else []
    if len(scripts) != 2 or scripts[0] is None or scripts[1] is None or scripts[0] == scripts[1]:
        return shown(old), shown(new)
    before, after = scripts[0], scripts[1]
    line = next(
        (i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b),
        min(len(before), len(after)),
    )

    def at(lines: list[str]) -> str:
        text = lines[line] if line < len(lines) else "(end of script)"
        return shown(f"script line {line + 1} of {len(lines)}: {text}")

    return at(before), at(after)
