"""Label-selector matching on plain dicts, as the API server does it.

The drain matches pods to their PodDisruptionBudgets locally (one PDB list and watch
instead of a request per pod), so it needs ``metav1.LabelSelector`` semantics: an empty
selector matches everything, a null one nothing; ``matchExpressions`` operators In,
NotIn, Exists, DoesNotExist.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str] | None) -> bool:
    """True when ``labels`` satisfy the LabelSelector ``selector`` (JSON shape)."""
    if selector is None:
        return False
    labels = labels or {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op = expr["key"], expr["operator"]
        values = set(expr.get("values") or [])
        present = key in labels
        if op == "In" and not (present and labels[key] in values):
            return False
        if op == "NotIn" and present and labels[key] in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
        if op not in {"In", "NotIn", "Exists", "DoesNotExist"}:
            raise ValueError(f"unknown label selector operator {op!r}")
    return True


def to_string(labels: Mapping[str, str]) -> str:
    """``{"a": "1", "b": "2"}`` → ``a=1,b=2`` (sorted), for API ``labelSelector`` params."""
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
