"""The phase model: a scenario is an ordered tuple of frozen ``Phase`` records.

A phase is data, not a script. It names the infrastructure state it wants (the
Pulumi program reads ``kubeshift:phase``), the update targets, the preview changes it
allows (the blast-radius guard), the steps to run before and after the update (hooks
that act, gates that wait), whether it is destructive, and its way back. The runner
executes any phase without knowing which one it is: adding a phase never touches it.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from automation.core.errors import UserError
from automation.core.results import HookResult as HookResult  # re-exported: the hook model
from automation.core.results import ProbeOutcome
from automation.core.waiting import Pending
from automation.model.way_back import NoReturn, WayBack

if TYPE_CHECKING:
    from automation.model.context import HookContext


HookFn = Callable[["HookContext"], HookResult]
GateFn = Callable[["HookContext"], Pending]


@dataclass(frozen=True)
class Hook:
    """An idempotent action run before or after a phase's update.

    ``destructive`` hooks (drains, deletions, DNS switches) ask for confirmation and
    are never run twice once the journal records them finished.
    """

    name: str
    summary: str
    run: HookFn
    destructive: bool = False
    retries: int = 2
    retry_delay: float = 5.0


@dataclass(frozen=True)
class Watch:
    """A Kubernetes collection a gate's check reads, on one cluster of the scenario."""

    resource: Literal["nodes", "pods", "endpointslices", "daemonsets", "deployments"]
    cluster: str = "primary"


@dataclass(frozen=True)
class Gate:
    """A condition polled until it holds or its deadline passes; it blocks, never skips.

    With ``wakes_on`` the wait between two checks ends early when one of those
    collections changes (``automation.kube.wakeups``): the gate passes when the
    condition holds, not at its next poll; ``interval`` stays the upper bound.
    """

    name: str
    summary: str
    check: GateFn
    timeout: float = 900.0
    interval: float = 10.0
    wakes_on: tuple[Watch, ...] = ()


Step = Hook | Gate


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
