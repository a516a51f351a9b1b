"""What a phase's preview may change: the blast-radius guard's policy, and the usual ones."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass


@dataclass(frozen=True)
class ChangePolicy:
    """Which preview operations a phase allows; anything else stops the run before ``up``.

    ``allowed_ops`` are allowed on any resource. ``scoped_ops`` are allowed only on
    resources whose ``type::name`` matches one of ``scope`` (fnmatch patterns).
    Resources matching ``protected`` may not change at all. With ``program_scope``,
    the scope also holds every resource the program itself removes or changes in this
    phase — found offline by rendering the previous phase and this one — so the guard
    lets through exactly the declared intent and stops anything else.

    A replacement the engine makes delete-first (pulumi-aws does so for every resource
    whose name the program sets) leaves nothing in the old one's place until its
    successor exists: an Auto Scaling group without instances, a group of rules gone. It
    is allowed only for resources matching ``delete_first``, none by default.
    """

    allowed_ops: frozenset[str] = frozenset({"same", "read", "create", "update"})
    scoped_ops: frozenset[str] = frozenset()
    scope: tuple[str, ...] = ()
    protected: tuple[str, ...] = ()
    program_scope: bool = False
    summary: str = "creates and in-place updates"
    delete_first: tuple[str, ...] = ()

    def widened(self, extra_scope: tuple[str, ...]) -> ChangePolicy:
        """This policy with ``extra_scope`` added to its scope."""
        from dataclasses import replace

        return replace(self, scope=self.scope + tuple(extra_scope))

    def violation(
        self, op: str, resource_type: str, name: str, delete_first: bool = False
    ) -> str | None:
        """Why ``op`` on this resource is not allowed, or None when it is;
        ``delete_first``: the op belongs to a replacement that deletes first."""
        key = f"{resource_type}::{name}"
        if op in {"same", "read"}:
            return None
        if any(fnmatch.fnmatchcase(key, p) for p in self.protected):
            return f"{op} of protected resource {key}"
        if (
            delete_first
            and op in REPLACE_OPS
            and not any(fnmatch.fnmatchcase(key, p) for p in self.delete_first)
        ):
            return (
                f"delete-first replacement of {key} (gone before its successor exists), "
                "which this phase does not allow"
            )
        if op in self.allowed_ops:
            return None
        if op in self.scoped_ops and any(fnmatch.fnmatchcase(key, p) for p in self.scope):
            return None
        return f"{op} of {key} is outside this phase's scope ({self.summary})"


NO_OP_OPS = frozenset({"same", "read", "refresh", "read-replacement", "discard"})
REPLACE_OPS = frozenset({"replace", "create-replacement", "delete-replaced"})

CREATES_ONLY = ChangePolicy(
    allowed_ops=frozenset({"same", "read", "create"}), summary="creates only"
)
CREATES_AND_UPDATES = ChangePolicy(summary="creates and in-place updates")
CHANGES_NOTHING = ChangePolicy(allowed_ops=frozenset({"same", "read"}), summary="no change")


def deletes_in(*scope: str, summary: str = "") -> ChangePolicy:
    """Creates and updates anywhere; deletes and replaces only of resources in ``scope``."""
    return ChangePolicy(
        scoped_ops=frozenset({"delete", *REPLACE_OPS}),
        scope=scope,
        summary=summary or f"creates, updates; deletes/replaces only of {', '.join(scope)}",
    )


def retires_what_the_program_retires(*scope: str, summary: str = "") -> ChangePolicy:
    """Deletes and replaces only of what this phase's program removes or changes (+ ``scope``)."""
    return ChangePolicy(
        scoped_ops=frozenset({"delete", *REPLACE_OPS}),
        scope=scope,
        program_scope=True,
        summary=summary or "creates, updates; deletes/replaces only of what this phase retires",
    )


def undoes_what_the_phase_did(summary: str = "") -> ChangePolicy:
    """Going back: creates, updates, deletes and replaces only of what the program adds,
    removes or changes from the phase taken back to the one before it (found offline, as
    ``program_scope`` is); nothing else may change."""
    return ChangePolicy(
        allowed_ops=frozenset({"same", "read"}),
        scoped_ops=frozenset({"create", "update", "delete", *REPLACE_OPS}),
        program_scope=True,
        summary=summary or "only what undoing the phase changes",
    )
