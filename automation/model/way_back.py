"""How a phase is undone, or why it cannot be: every phase of every scenario says which.

A :class:`Reverse` says what undoing the phase does: what it removes, what it turns
back; a reverse kubeshift runs (``kubeshift back``, ``automation.run.going_back``) also
carries its steps — hooks and gates around the update that applies the phase before —
and what that update may change. A :class:`NoReturn` names a point of no return and
why: what the phase destroys that nothing can bring back. ``plan`` shows both
(``--json``, ``--markdown``), and ``run`` without ``--yes`` names a point of no return
in the confirmation of each of its destructive steps, before crossing it. A phase that
declares neither fails the registry's test, so no phase is added without saying how it
goes back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from automation.model.change_policy import ChangePolicy
    from automation.model.hooks_and_gates import Step


UNDO_PREFIX = "back-from-"


def undo_id(phase: str) -> str:
    """The name of the undo phase that takes ``phase`` back (its journal records')."""
    return f"{UNDO_PREFIX}{phase}"


def taken_back(phase: str) -> str | None:
    """The phase an undo phase takes back (``back-from-X`` -> X); None for any other."""
    return phase.removeprefix(UNDO_PREFIX) if phase.startswith(UNDO_PREFIX) else None


@dataclass(frozen=True)
class Reverse:
    """What undoing the phase does; ``runs``: kubeshift runs it (``kubeshift back``),
    else it is described only, for an operator to do by hand."""

    how: str
    before: tuple[Step, ...] = ()
    """Run before the update that applies the phase before this one."""
    after: tuple[Step, ...] = ()
    """Run after that update."""
    changes: ChangePolicy | None = field(default=None)
    """What that update may change (None: only what undoing the phase's own changes
    is — nothing, for a phase whose update changes nothing)."""
    runs: bool = False

    def describe(self) -> str:
        return self.how


@dataclass(frozen=True)
class NoReturn:
    """A point of no return: why the phase cannot be undone."""

    why: str

    def describe(self) -> str:
        return f"none, a point of no return: {self.why}"


WayBack = Reverse | NoReturn
