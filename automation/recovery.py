"""``kubeshift recover``: the one safe way on after the engine itself was killed.

A ``pulumi`` killed mid-update leaves two things behind: its lock (a DIY backend
keeps the file of a dead process) and *pending operations* — creates, updates and
deletes it had started but not recorded as done. Updating again blindly could create
a second copy of a resource whose create had in fact succeeded. Recovery is therefore
explicit, shown before it is done, journalled, and refused while anything still runs:

1. no other kubeshift run and no engine a killed run left behind may be working;
2. the stack's pending operations and its lock holders are shown; the lock must be
   stale (its process gone) — or on another machine, with ``--force``;
3. on confirmation: the stale lock is removed (``pulumi cancel``), then a refresh
   reads every resource back from the cloud and drops the pending creates
   (``pulumi refresh --clear-pending-creates``); a create that did complete before
   the kill is then absent from the state, so the listed creates are the ones to
   check in the cloud.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from automation.engine import Engine
from automation.engine_lock import Liveness, LockHolder
from automation.engine_processes import orphaned_engines
from automation.errors import PreconditionFailed, StackLockedError, UserError
from automation.journal import Journal, stack_lock, state_dir
from automation.project import load_stack
from automation.session import EngineFactory, journal_path, pulumi_engine
from automation.waiting import summarize

RECOVER_PHASE = "recover"

Confirm = Callable[[str], bool]


@dataclass
class Recovery:
    """What a recovery found and did."""

    stack: str
    pending: list[str] = field(default_factory=list)
    stale_locks: list[str] = field(default_factory=list)
    refreshed: dict[str, int] = field(default_factory=dict)
    done: bool = False

    @property
    def pending_creates(self) -> list[str]:
        return [p for p in self.pending if p.startswith("creating ")]


def recover(
    project: Path,
    stack: str,
    *,
    force: bool = False,
    confirm: Confirm | None = None,
    engine_factory: EngineFactory = pulumi_engine,
) -> Recovery:
    """``kubeshift recover`` for a stack of this project."""
    info = load_stack(project, stack)
    directory = state_dir(project)
    with stack_lock(directory / f"{stack}.lock", stack):
        refuse_while_orphans_work(project, stack)
        engine = engine_factory(project, stack, uuid.uuid4().hex)
        journal = Journal(journal_path(project, stack), stack, scenario=info.scenario)
        return recover_engine(engine, journal, stack, force=force, confirm=confirm)


def refuse_while_orphans_work(project: Path, stack: str) -> None:
    leftovers = orphaned_engines(project, stack)
    if leftovers:
        raise PreconditionFailed(
            f"An update a killed run left behind still works on stack '{stack}' "
            f"({summarize([p.describe() for p in leftovers], 3)}); nothing to recover "
            "yet — `kubeshift run` waits for it by itself."
        )


def recover_engine(
    engine: Engine,
    journal: Journal,
    stack: str,
    *,
    force: bool = False,
    confirm: Confirm | None = None,
) -> Recovery:
    """Show what the killed engine left, ask, then clear it; journalled as one step.

    The caller holds the stack's kubeshift lock and has checked no orphan still works.
    """
    recovery = Recovery(stack, pending=engine.pending_operations())
    question = _question(recovery)
    if confirm is None:
        raise UserError(f"{question} Pass --yes to recover without a terminal to confirm it.")
    if not confirm(question):
        raise UserError(f"Recovery of stack '{stack}' was not confirmed; nothing changed.")
    step = f"recovery-{sum(r.phase == RECOVER_PHASE for r in journal.records()) + 1}"
    journal.start(RECOVER_PHASE, step, destructive=True)
    try:
        recovery.refreshed = _refresh_past_stale_locks(engine, stack, recovery, force)
    except Exception as exc:
        journal.fail(RECOVER_PHASE, step, str(exc))
        raise
    recovery.done = True
    journal.finish(
        RECOVER_PHASE,
        step,
        _summary(recovery),
        changed=True,
        details={
            "pending_operations": list(recovery.pending),
            "stale_locks": list(recovery.stale_locks),
            "refresh": dict(recovery.refreshed),
        },
    )
    return recovery


def _question(recovery: Recovery) -> str:
    pending = (
        f"{len(recovery.pending)} pending operation(s) ({summarize(recovery.pending, 5)})"
        if recovery.pending
        else "no pending operations"
    )
    return (
        f"Stack '{recovery.stack}' has {pending}. Recovery removes a stale update lock, "
        "reads every resource back from the cloud and drops the pending creates. Proceed?"
    )


def _refresh_past_stale_locks(
    engine: Engine, stack: str, recovery: Recovery, force: bool
) -> dict[str, int]:
    try:
        return engine.refresh(clear_pending_creates=True)
    except StackLockedError as exc:
        _check_removable(stack, exc.holders, force, str(exc))
        recovery.stale_locks = [h.describe() for h in exc.holders]
        engine.cancel()
    return engine.refresh(clear_pending_creates=True)


def _check_removable(
    stack: str, holders: tuple[LockHolder, ...], force: bool, sentence: str
) -> None:
    """Only a dead holder's lock is removed; another machine's needs ``--force``."""
    kinds = {h.liveness() for h in holders}
    if not holders or Liveness.ALIVE in kinds:
        raise StackLockedError(sentence, holders=holders)
    if Liveness.UNKNOWN in kinds and not force:
        raise StackLockedError(sentence, holders=holders)


def _summary(recovery: Recovery) -> str:
    parts = [f"cleared {len(recovery.pending)} pending operation(s)"]
    if recovery.stale_locks:
        parts.append(f"removed the stale lock of {'; '.join(recovery.stale_locks)}")
    if recovery.pending_creates:
        parts.append(
            "check the cloud for these creates, which may have completed: "
            + summarize(recovery.pending_creates, 5)
        )
    return "; ".join(parts)
