"""What a hook reports (the one result type shared by hooks, adapters and the runner),
and what a phase's probe concluded."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class HookResult:
    """What a hook did. ``changed`` is False when it found the work already done."""

    changed: bool
    message: str
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ProbeOutcome:
    """What a phase's probe saw; ``failure`` says why the phase was not available."""

    message: str
    details: dict[str, Any] = field(default_factory=dict)
    failure: str | None = None
