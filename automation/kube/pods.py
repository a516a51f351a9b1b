"""What a pod's manifest says of it, read one way by every gate and benchmark."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def pod_ready(pod: Mapping[str, Any]) -> bool:
    """Whether ``pod`` (a manifest as the API serves it) counts as a Ready replica: its
    ``Ready`` condition is True and it is not being deleted."""
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
