"""The list a Terraform-bridged provider keeps in every object of a resource's checked
inputs, naming what its Check filled in: pulumi-terraform-bridge's ``defaultsKey``
(``pkg/tfbridge/schema.go``: ``applyDefaults`` runs for each object ``MakeTerraformInputs``
converts, nested ones included). Bookkeeping, no attribute of the resource."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

DEFAULTS = "__defaults"


def without_defaults(props: Mapping[str, Any]) -> dict[str, Any]:
    """``props`` without the defaults lists, at any depth."""
    return {k: _without(v) for k, v in props.items() if k != DEFAULTS}


def _without(value: Any) -> Any:
    if isinstance(value, Mapping):
        return without_defaults(value)
    if isinstance(value, list):
        return [_without(v) for v in value]
    return value
