"""How a phase is undone, or why it cannot be: every phase of every scenario says which.

A :class:`Reverse` says what undoing the phase does: what it removes, what it turns
back. A :class:`NoReturn` names a point of no return and why: what the phase destroys
that nothing can bring back. ``plan`` shows both (``--json``, ``--markdown``), and
``run`` without ``--yes`` names a point of no return in the confirmation of each of its
destructive steps, before crossing it. A phase that declares neither fails the
registry's test, so no phase is added without saying how it goes back.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Reverse:
    """What undoing the phase does."""

    how: str

    def describe(self) -> str:
        return self.how


@dataclass(frozen=True)
class NoReturn:
    """A point of no return: why the phase cannot be undone."""

    why: str

    def describe(self) -> str:
        return f"none, a point of no return: {self.why}"


WayBack = Reverse | NoReturn
