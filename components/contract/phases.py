"""Where a stack stands in its scenario's phases (ids from ``contract.scenarios``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PhaseCursor:
    """Where a stack stands in its scenario; answers "has phase X been reached?"."""

    phases: tuple[str, ...]
    current: str

    def __post_init__(self) -> None:
        if self.current not in self.phases:
            raise ValueError(f"unknown phase {self.current!r}")

    @property
    def index(self) -> int:
        return self.phases.index(self.current)

    def reached(self, phase: str) -> bool:
        """True when ``phase`` is the current phase or an earlier one."""
        return self.phases.index(phase) <= self.index

    def before(self, phase: str) -> bool:
        """True when the current phase comes strictly before ``phase``."""
        return not self.reached(phase)
