"""``kubeshift recover``: the one safe way on after the engine itself was killed.

A ``pulumi`` killed mid-update leaves two things behind: its lock (a DIY backend
keeps the file of a dead process) and *pending operations* — creates, updates and
deletes it had started but not recorded as done. Updating again blindly could create
a second copy of a resource whose create had in fact succeeded. Recovery is therefore
explicit, shown before it is done, journalled, and refused while anything still runs:

1. no other kubeshift run and no engine a killed run left behind may be working;
2. the stack's pending operations and its lock holders are shown; the lock must be
   stale (its process gone) — or on another machine, with ``--force``;
3. on confirmation: each pending create is looked for in the cloud as adoption looks
   (``automation.aws.lookup``: by the names, CIDRs, tags and parents it declared); one
   that had in fact completed joins the state with its live id (what ``pulumi refresh
   --import-pending-creates`` means to do), so the next update neither fails on it (a
   rule that exists already) nor makes a second one (a VPC, an address). Then the
   stale lock is removed (``pulumi cancel``) and a refresh reads every resource back
   from the cloud and drops the other pending creates (``--clear-pending-creates``).
   A create that was not found, or that kubeshift cannot look for, is listed to check
   in the cloud.

A killed engine can also leave the checkpoint's sidecar of a ``file://`` backend empty,
and then nothing reads the stack; recovery first removes such a sidecar
(:mod:`automation.engine.torn_sidecars`).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from automation.config.project import StackInfo, load_stack, project_name
from automation.config.settings import load_runtime_settings
from automation.core.errors import PreconditionFailed, StackLockedError, UserError
from automation.core.waiting import summarize
from automation.engine import torn_sidecars
from automation.engine.adapter import Engine, PendingCreate, urn_name
from automation.engine.lock import Liveness, LockHolder
from automation.engine.processes import orphaned_engines
from automation.run.journal import Journal
from automation.run.run_lock import DamagedLock, run_lock, stale_holder
from automation.session.assembly import EngineFactory, journal_place, pulumi_engine

if TYPE_CHECKING:
    from automation.aws.lookup import Lookup

RECOVER_PHASE = "recover"

Confirm = Callable[[str], bool]


@dataclass
class Recovery:
    """What a recovery found and did."""

    stack: str
    pending: list[str] = field(default_factory=list)
    stale_locks: list[str] = field(default_factory=list)
    taken: dict[str, str] = field(default_factory=dict)
    """URN -> live id of each pending create found to have completed, now in the state."""
    refreshed: dict[str, int] = field(default_factory=dict)
    repaired: list[str] = field(default_factory=list)
    """Checkpoint sidecars a killed engine left torn, removed (``torn_sidecars``)."""
    stale_run_lock: str = ""
    """The holder of kubeshift's own run lock, past its lease, that recovery removed."""
    done: bool = False

    @property
    def pending_creates(self) -> list[str]:
        """The pending creates not found in the cloud: the ones to check there."""
        return [
            p for p in self.pending
            if p.startswith("creating ") and p.removeprefix("creating ") not in self.taken
        ]  # fmt: skip


LiveFinder = Callable[[PendingCreate], str | None]
"""The live id of the resource a pending create made, if it completed; None when not
found."""


def stack_finder(info: StackInfo) -> LiveFinder:
    """:func:`aws_finder` with the stack's AWS access, for its cluster."""
    from automation.aws.clients import AwsClients
    from automation.aws.lookup import Lookup

    settings = load_runtime_settings(info.values)
    cluster = info.config.cluster
    clients = AwsClients(settings.aws)
    return aws_finder(Lookup(clients=clients, cluster=cluster.name, cluster_id=cluster.tag_id))


def aws_finder(lookup: Lookup) -> LiveFinder:
    """Look for each pending create's resource as adoption does; a type kubeshift cannot
    import, or a lookup that fails, finds nothing."""
    from automation.aws.failures import BotoCoreError, ClientError
    from automation.aws.lookup import LookupProblem, find

    def live(create: PendingCreate) -> str | None:
        try:
            found = find(lookup, create.type, create.name, create.inputs)
        except (LookupProblem, BotoCoreError, ClientError, KeyError):
            return None
        if found.import_id is None:
            return None  # recorded by a create AWS treats as a no-op: harmless to repeat
        return found.id

    return live


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
    settings = load_runtime_settings(info.values)
    place = journal_place(project, stack)
    run_id = uuid.uuid4().hex
    take_stale = False
    try:
        stale = stale_holder(place.lock)
    except DamagedLock:
        _confirm_stale_lock(stack, f"is damaged ({place.lock.where})", confirm)
        take_stale = True
    else:
        if stale is not None:
            _confirm_stale_lock(stack, f"is held by {stale.describe()}, past its lease", confirm)
            take_stale = True
    with run_lock(place.lock, stack, run_id, settings.run_lock, take_stale=take_stale) as lock:
        refuse_while_orphans_work(project, stack)
        # before the engine reads the stack: a torn sidecar makes every read fail
        backend = os.environ.get("PULUMI_BACKEND_URL")
        repaired = torn_sidecars.repair(backend, project_name(project), stack)
        engine = engine_factory(project, stack, run_id)
        journal = Journal(place.journal, stack, scenario=info.scenario)
        replaced = lock.replaced.describe() if lock.replaced else ""
        return recover_engine(
            engine, journal, stack, force=force, confirm=confirm, find_live=stack_finder(info),
            repaired=repaired, stale_run_lock=replaced,
        )  # fmt: skip


def _confirm_stale_lock(stack: str, state: str, confirm: Confirm | None) -> None:
    """A stale (or damaged) run lock is removed only on confirmation, before anything
    else is done; ``state`` says which: ``is held by …, past its lease``."""
    question = (
        f"Stack '{stack}''s run lock {state}: remove it (only if no run of it goes on) and recover?"
    )
    if confirm is None:
        raise UserError(f"{question} Pass --yes to recover without a terminal to confirm it.")
    if not confirm(question):
        raise UserError(
            f"Stack '{stack}''s run lock, which {state}, was left as it is; nothing changed."
        )


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
    find_live: LiveFinder | None = None,
    repaired: list[str] | None = None,
    stale_run_lock: str = "",
) -> Recovery:
    """Show what the killed engine left, ask, then take what its creates made
    (``find_live``) and clear the rest; journalled as one step.

    The caller holds the stack's kubeshift lock and has checked no orphan still works.
    """
    recovery = Recovery(
        stack, pending=engine.pending_operations(), repaired=repaired or [],
        stale_run_lock=stale_run_lock,
    )  # fmt: skip
    question = _question(recovery)
    if confirm is None:
        raise UserError(f"{question} Pass --yes to recover without a terminal to confirm it.")
    if not confirm(question):
        raise UserError(f"Recovery of stack '{stack}' was not confirmed; nothing changed.")
    step = f"recovery-{sum(r.phase == RECOVER_PHASE for r in journal.records()) + 1}"
    journal.start(RECOVER_PHASE, step, destructive=True)
    try:
        recovery.taken = _completed_creates(engine, find_live) if find_live else {}
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
            "taken": dict(recovery.taken),
            "refresh": dict(recovery.refreshed),
            "repaired": list(recovery.repaired),
            "stale_run_lock": recovery.stale_run_lock,
        },
    )
    return recovery


def _question(recovery: Recovery) -> str:
    pending = (
        f"{len(recovery.pending)} pending operation(s) ({summarize(recovery.pending, 5)})"
        if recovery.pending
        else "no pending operations"
    )
    stale = (
        f" The run lock of {recovery.stale_run_lock} is past its lease and was taken over."
        if recovery.stale_run_lock
        else ""
    )
    return (
        f"Stack '{recovery.stack}' has {pending}.{stale} Recovery takes into the state what a "
        "pending create had made in the cloud, removes a stale update lock, reads every "
        "resource back from the cloud and drops the other pending creates. Proceed?"
    )


def _completed_creates(engine: Engine, find_live: LiveFinder) -> dict[str, str]:
    """URN -> live id, for each pending create that had in fact completed."""
    found = {create.urn: find_live(create) for create in engine.pending_creates()}
    return {urn: live_id for urn, live_id in found.items() if live_id is not None}


def _refresh_past_stale_locks(
    engine: Engine, stack: str, recovery: Recovery, force: bool
) -> dict[str, int]:
    def refresh() -> dict[str, int]:
        engine.take_pending_creates(recovery.taken)
        return engine.refresh(clear_pending_creates=True)

    try:
        return refresh()
    except StackLockedError as exc:
        _check_removable(stack, exc.holders, force, str(exc))
        recovery.stale_locks = [h.describe() for h in exc.holders]
        engine.cancel()
    return refresh()


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
    if recovery.repaired:
        parts.append(
            f"removed {len(recovery.repaired)} checkpoint sidecar(s) the killed engine left "
            f"torn: {summarize(recovery.repaired, 3)}"
        )
    if recovery.stale_locks:
        parts.append(f"removed the stale lock of {'; '.join(recovery.stale_locks)}")
    if recovery.stale_run_lock:
        parts.append(f"removed the stale run lock of {recovery.stale_run_lock}")
    if recovery.taken:
        taken = [f"{urn_name(urn)} ({id_})" for urn, id_ in recovery.taken.items()]
        parts.append(
            f"took {len(taken)} resource(s) whose create had completed into the state: "
            + summarize(taken, 5)
        )
    if recovery.pending_creates:
        parts.append(
            "check the cloud for these creates, which may have completed: "
            + summarize(recovery.pending_creates, 5)
        )
    return "; ".join(parts)
