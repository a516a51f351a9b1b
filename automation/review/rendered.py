"""What an offline render returns, per resource, without importing the Pulumi SDK.

Kept apart from :mod:`automation.review.render` so that what only reads renders (the render
cache, targets, the CLI's tables) starts without the SDK's import time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROGRAM = Path(__file__).resolve().parents[2] / "__main__.py"
"""The Pulumi program every render runs."""


@dataclass(frozen=True)
class RenderedResource:
    """One resource the program declared, as the engine would receive it."""

    type: str
    name: str
    parent: str | None
    """Logical name of the parent resource (``None`` for children of the stack)."""
    inputs: dict[str, Any]
    """Inputs with the engine's camelCase keys; secrets replaced by ``"[secret]"``."""
    urn: str
    id: str = ""
    """The mock's physical id (``<name>-id``), used by other resources' inputs."""
    outputs: dict[str, Any] = field(default_factory=dict)
    """The mock's state: inputs plus computed attributes (``arn``, ``dnsName``...)."""
    custom: bool = True
    """False for component resources."""
    aliases: tuple[dict[str, Any], ...] = ()
    """Alias specs (``name``/``parent`` URN/``noParent``) or alias URNs (``urn``)."""
    options: dict[str, Any] = field(default_factory=dict)
    """Options that shape the engine's plan: deleteBeforeReplace, replaceOnChanges,
    ignoreChanges, protect, dependsOn, import (the id adoption imports it by)."""
    parent_urn: str | None = None
    """The parent's URN as the mocks made it (they qualify a type by the parent's
    type only, so real URNs are rebuilt from these links: ``automation.run.targets``)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "name": self.name,
            "parent": self.parent,
            "urn": self.urn,
            "inputs": self.inputs,
            "aliases": list(self.aliases),
            "options": self.options,
        }
