"""The stack's secret values, found so they can be redacted from journals and output.

Pulumi keeps ``pulumi config set --secret`` values encrypted in the stack file
(``{secure: v1:…}``); only the engine holds the key. kubeshift asks the engine for the
decrypted config and keeps exactly the leaves the stack file marks ``secure`` — not
the whole object a ``--path`` secret sits in, which would hide names a user needs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def _is_secure(value: Any) -> bool:
    return isinstance(value, Mapping) and set(value) == {"secure"}


def secret_strings(raw: Mapping[str, Any], decrypted: Mapping[str, str]) -> list[str]:
    """Plain values of the leaves ``raw`` (the stack file's config) marks ``secure``.

    ``decrypted`` maps config keys to the engine's plaintext (JSON for objects).
    """
    found: list[str] = []
    for key, plain in decrypted.items():
        marked = raw.get(key)
        if _is_secure(marked):
            found.append(plain)
            continue
        if isinstance(marked, (dict, list)):
            try:
                parsed = json.loads(plain)
            except ValueError:
                continue
            _collect(marked, parsed, found)
    return sorted({s for s in found if s}, key=len, reverse=True)


def _collect(marked: Any, plain: Any, found: list[str]) -> None:
    if _is_secure(marked):
        found.append(plain if isinstance(plain, str) else json.dumps(plain))
    elif isinstance(marked, dict) and isinstance(plain, dict):
        for name, child in marked.items():
            if name in plain:
                _collect(child, plain[name], found)
    elif isinstance(marked, list) and isinstance(plain, list):
        for child, value in zip(marked, plain, strict=False):
            _collect(child, value, found)
