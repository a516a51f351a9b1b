"""The phase model: a scenario is an ordered tuple of frozen ``Phase`` records.

A phase is data, not a script. It names the infrastructure state it wants (the
Pulumi program reads ``kubeshift:phase``), the update targets, the preview changes it
allows (the blast-radius guard), the steps to run before and after the update (hooks
that act, gates that wait), whether it is destructive, and its way back. The runner
executes any phase without knowing which one it is: adding a phase never touches it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from automation.core.errors import UserError
from automation.core.results import HookResult, ProbeOutcome
from automation.model.change_policy import (
    CHANGES_NOTHING,
    CREATES_AND_UPDATES,
    CREATES_ONLY,
    NO_OP_OPS,
    REPLACE_OPS,
    ChangePolicy,
    deletes_in,
    retires_what_the_program_retires,
    undoes_what_the_phase_did,
)
from automation.model.hooks_and_gates import Gate, GateFn, Hook, HookFn, Step, Watch
from automation.model.way_back import NoReturn, WayBack

if TYPE_CHECKING:
    from automation.model.context import HookContext

__all__ = [  # the phase model, with the hooks, gates and change policies it is made of
    "CHANGES_NOTHING", "CREATES_AND_UPDATES", "CREATES_ONLY", "NO_OP_OPS", "REPLACE_OPS",
    "ChangePolicy", "Gate", "GateFn", "Hook", "HookFn", "HookResult", "Phase", "PhaseProbe",
    "Probing", "Scenario", "Step", "Watch", "deletes_in", "retires_what_the_program_retires",
    "undoes_what_the_phase_did",
]  # fmt: skip


class Probing(Protocol):
    """A probe running while the ``with`` block runs the phase's steps."""

    def __enter__(self) -> object: ...

    def __exit__(self, *exc: object) -> None: ...

    def outcome(self, earlier: Mapping[str, Any] | None) -> ProbeOutcome:
        """What it saw, added to ``earlier`` (the journalled details of an earlier run)."""
        ...


@dataclass(frozen=True)
class PhaseProbe:
    """Something watched from a phase's first step to its last (the API's availability).

    The runner journals its outcome as the step ``probe:<name>`` and stops after the
    phase when the outcome names a failure; ``start`` returns None when switched off.
    """

    name: str
    summary: str
    start: Callable[[HookContext], Probing | None]

    @property
    def key(self) -> str:
        return f"probe:{self.name}"


@dataclass(frozen=True)
class Phase:
    """One named state of a scenario and what to run around reaching it."""

    id: str
    summary: str
    before: tuple[Step, ...] = ()
    after: tuple[Step, ...] = ()
    targets: tuple[str, ...] = ()
    targeted: bool = False
    """Update only what the program's render changes entering this phase
    (``automation.run.targets``), as ``terraform apply -target`` did."""
    changes: ChangePolicy = CREATES_AND_UPDATES
    destructive: bool = False
    way_back: WayBack | None = None
    """How the phase is undone, or why it cannot be (``model.way_back``); every
    scenario's phases declare one."""
    probe: PhaseProbe | None = None
    program_phase: str | None = None
    """The ``kubeshift:phase`` its update applies, when not its own id: taking a phase
    back applies the one before it (``automation.run.going_back``)."""
    undoes: tuple[str, ...] = ()
    """The phases this one takes back: its update drops their marks from the stack's
    record, and their journal records become undone once it succeeded."""

    @property
    def applies(self) -> str:
        """The ``kubeshift:phase`` this phase's update applies."""
        return self.program_phase or self.id

    @property
    def point_of_no_return(self) -> NoReturn | None:
        return self.way_back if isinstance(self.way_back, NoReturn) else None

    @property
    def gates(self) -> tuple[Gate, ...]:
        return tuple(s for s in (*self.before, *self.after) if isinstance(s, Gate))

    @property
    def hooks(self) -> tuple[Hook, ...]:
        return tuple(s for s in (*self.before, *self.after) if isinstance(s, Hook))


@dataclass(frozen=True)
class Scenario:
    """An ordered, readable list of phases."""

    id: str
    summary: str
    phases: tuple[Phase, ...]

    def phase(self, phase_id: str) -> Phase:
        for phase in self.phases:
            if phase.id == phase_id:
                return phase
        known = ", ".join(p.id for p in self.phases)
        raise UserError(f"Unknown phase '{phase_id}' for scenario {self.id}; known: {known}.")

    def ids(self) -> tuple[str, ...]:
        return tuple(p.id for p in self.phases)

    def slice(self, start: str | None, stop: str | None) -> tuple[Phase, ...]:
        """Phases from ``start`` to ``stop`` inclusive (either end open)."""
        ids = self.ids()
        lo = ids.index(self.phase(start).id) if start else 0
        hi = ids.index(self.phase(stop).id) if stop else len(ids) - 1
        if lo > hi:
            raise UserError(f"Phase '{start}' comes after '{stop}' in scenario {self.id}.")
        return self.phases[lo : hi + 1]
