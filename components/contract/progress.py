"""What a stack has been through, recorded with the stack itself: its ``progress`` output.

A phase is safe to update only once every earlier phase is behind it — its hooks and
gates before the update, the update, its hooks and gates after — and its own
before-steps are done. ``kubeshift run`` knows this from its journal, but an engineer
running ``pulumi up`` by hand skips every hook, and a journal lives on one laptop. So
the program keeps the record where every operator of the stack sees it: in the stack's
own ``progress`` output, which it reads back (the engine's ``readStackOutputs`` on the
stack itself) before it declares anything.

Why outputs, not config or tags: config lives in ``Pulumi.<stack>.yaml`` in one
checkout until someone commits it, and the program cannot read stack tags; outputs
live in the backend with the state, so a second operator's fresh clone reads the same
record, and only a successful update can write them. Three kinds of mark:

- ``update`` — added by the program itself on every update of a phase (a failed
  update keeps the previous outputs, so the mark means the update succeeded);
- ``before`` / ``after`` — added by kubeshift once a phase's steps before or after its
  update succeeded: ``kubeshift run`` passes them with its next update, ``kubeshift
  hooks`` with a record-only update (``RECORD_ONLY_VAR``) that targets the stack
  resource alone and renders the deployed phase, so it changes no resource.

The operator who knows better sets ``kubeshift:skipProgressCheck`` to the phase; the
program then warns, names what it skipped, and records the override in the output.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from components.contract.engine_vars import RECORD_VAR
from components.contract.keys import SKIP_PROGRESS_KEY

PROGRESS_OUTPUT = "progress"
BY_HAND = "pulumi up by hand"
TOO_EARLY = "cannot be updated yet"  # in every refusal; kubeshift maps it to exit 3

Milestone = Literal["before", "update", "after"]


class ProgressError(ValueError):
    """A progress record that cannot be read (a damaged output or record variable)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Mark(_Frozen):
    """One milestone of one phase, and who reached it (when kubeshift knows the time)."""

    phase: str
    milestone: Milestone
    by: str
    at: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.phase, self.milestone)


class Override(_Frozen):
    """An update that went ahead without the marks the check wanted."""

    phase: str
    missing: tuple[str, ...]
    by: str


class Undo(_Frozen):
    """A phase taken back (``kubeshift back``): its marks dropped, who and when kept."""

    phase: str
    by: str
    at: str | None = None


Sides = dict[str, tuple[Milestone, ...]]


class Record(_Frozen):
    """What kubeshift adds with one update: marks, phases undone (their marks dropped
    first), and which sides of each phase have steps."""

    marks: tuple[Mark, ...] = ()
    steps: Sides | None = None
    undone: tuple[Undo, ...] = ()

    def to_json(self) -> str:
        return self.model_dump_json()


class Progress(_Frozen):
    """Every mark so far, the overrides, and the scenario's step layout once kubeshift told it.

    ``steps`` maps each phase to the sides (``before``/``after``) that have hooks or
    gates; until kubeshift records it, every side of every phase counts.
    """

    marks: tuple[Mark, ...] = ()
    overrides: tuple[Override, ...] = ()
    steps: Sides | None = None
    undone: tuple[Undo, ...] = ()
    """Every phase taken back so far, in order: the history ``status`` shows."""

    def has(self, phase: str, milestone: Milestone) -> bool:
        return self.mark(phase, milestone) is not None

    def mark(self, phase: str, milestone: Milestone) -> Mark | None:
        return next((m for m in self.marks if m.key == (phase, milestone)), None)

    def with_marks(self, marks: Sequence[Mark]) -> Progress:
        """This record plus ``marks``; a newer mark of the same milestone replaces the old."""
        new = {m.key for m in marks}
        kept = tuple(m for m in self.marks if m.key not in new)
        return self.model_copy(update={"marks": kept + tuple(marks)})

    def with_record(self, record: Record) -> Progress:
        progress = self.without(record.undone).with_marks(record.marks)
        if record.steps is not None:
            progress = progress.model_copy(update={"steps": record.steps})
        return progress

    def without(self, undone: Sequence[Undo]) -> Progress:
        """This record with ``undone`` phases' marks dropped (and their overrides, which
        excused an update that is undone too), the undoing kept in the history — once: an
        undo retried after a crash finds the phase already taken back (no mark since its
        last undoing) and adds nothing."""
        if not undone:
            return self
        phases = {u.phase for u in undone}
        marked = {m.phase for m in self.marks}
        before = {u.phase for u in self.undone}
        new = tuple(u for u in undone if u.phase in marked or u.phase not in before)
        return self.model_copy(
            update={
                "marks": tuple(m for m in self.marks if m.phase not in phases),
                "overrides": tuple(o for o in self.overrides if o.phase not in phases),
                "undone": (*self.undone, *new),
            }
        )

    def with_override(self, override: Override) -> Progress:
        return self.model_copy(update={"overrides": (*self.overrides, override)})

    def has_steps(self, phase: str, side: Milestone) -> bool:
        """Whether ``phase`` has hooks or gates on ``side`` (True while the layout is unknown)."""
        return self.steps is None or side in self.steps.get(phase, ())

    def finished(self, phase: str) -> Mark | None:
        """The mark that says ``phase`` is behind the stack: after-steps, or the update
        of a phase without any."""
        if self.has_steps(phase, "after"):
            return self.mark(phase, "after")
        return self.mark(phase, "update")

    def as_output(self) -> dict[str, object]:
        return self.model_dump(mode="json")


def parse_progress(value: object) -> Progress:
    """The ``progress`` output as read back from the stack; absent means nothing recorded."""
    if value is None:
        return Progress()
    try:
        return Progress.model_validate(value)
    except ValidationError as exc:
        raise ProgressError(
            f"The stack's '{PROGRESS_OUTPUT}' output is not a progress record "
            f"({exc.errors()[0]['msg']})"
        ) from None


def parse_record(text: str | None) -> Record:
    """What ``$KUBESHIFT_RECORD`` carries (``Record`` as JSON), or an empty record."""
    if not text:
        return Record()
    try:
        return Record.model_validate_json(text)
    except ValidationError:
        raise ProgressError(f"${RECORD_VAR} is not a kubeshift progress record") from None


# --- what a phase needs ----------------------------------------------------------------


def required(progress: Progress, phases: Sequence[str], phase: str) -> list[tuple[str, Milestone]]:
    """Marks an update of ``phase`` needs: every earlier phase finished, its own before-steps.

    A phase is finished with its after-steps, or with its update when it has none.
    """
    index = phases.index(phase)
    needed: list[tuple[str, Milestone]] = [
        (p, "after" if progress.has_steps(p, "after") else "update") for p in phases[:index]
    ]
    if progress.has_steps(phase, "before"):
        needed.append((phase, "before"))
    return needed


def missing(progress: Progress, phases: Sequence[str], phase: str) -> list[str]:
    """``"after drain-workers"``-style labels of the marks ``phase`` needs and lacks."""
    return [f"{m} {p}" for p, m in required(progress, phases, phase) if not progress.has(p, m)]


def listed(labels: Sequence[str], most: int = 4) -> str:
    """``a, b, c, d and 2 more``: missing marks, short enough for one sentence."""
    more = f" and {len(labels) - most} more" if len(labels) > most else ""
    return ", ".join(labels[:most]) + more


def next_action(progress: Progress, phases: Sequence[str], phase: str, stack: str) -> str:
    """The command that does the first thing ``phase`` still waits for."""
    for p, milestone in required(progress, phases, phase):
        if progress.has(p, milestone):
            continue
        if progress.has_steps(p, "before") and not progress.has(p, "before"):
            return f"`kubeshift --stack {stack} hooks {p} --before`"
        if not progress.has(p, "update"):
            return f"`pulumi up` at kubeshift:phase {p}"
        return f"`kubeshift --stack {stack} hooks {p} --after`"
    return "nothing"


def refusal(progress: Progress, phases: Sequence[str], phase: str, stack: str) -> str:
    """One sentence: why ``phase`` may not update yet, what does it, how to override."""
    action = next_action(progress, phases, phase, stack)
    return (
        f"Phase '{phase}' {TOO_EARLY}: the stack records no "
        f"{listed(missing(progress, phases, phase))} "
        f"(hooks and gates), so nothing was changed; run {action} next "
        f"(or `kubeshift --stack {stack} run`), or set {SKIP_PROGRESS_KEY} to {phase} "
        "to override, which the stack records."
    )


def settle(
    progress: Progress,
    phases: Sequence[str],
    phase: str,
    *,
    stack: str,
    added: Record,
    by: str,
    skip_for: str | None,
) -> tuple[Progress, list[str]]:
    """The record an update of ``phase`` leaves, and what it went ahead without.

    Raises ``ProgressError`` with the refusal sentence when marks are missing and the
    operator did not override for this phase.
    """
    current = progress.with_record(added)
    lacking = missing(current, phases, phase)
    if lacking and skip_for != phase:
        raise ProgressError(refusal(current, phases, phase, stack))
    if lacking:
        current = current.with_override(Override(phase=phase, missing=tuple(lacking), by=by))
    return current.with_marks([Mark(phase=phase, milestone="update", by=by)]), lacking


def outputs_progress(outputs: Mapping[str, object]) -> Progress:
    """The progress record among a stack's outputs (empty when it has none)."""
    return parse_progress(outputs.get(PROGRESS_OUTPUT))
