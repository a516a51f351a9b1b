"""Going back: the phases that take a stack from where it is to an earlier phase.

Each phase after the target that the stack records any mark of (or the journal any
finished step of) is taken back, the latest first, by an *undo phase* the runner runs
like any other: the reverse's before-steps, the update that applies the phase before it
(``kubeshift:phase``), previewed and guarded by what undoing may change, then the
reverse's after-steps. Its update carries the undoing to the stack's record
(``Phase.undoes``), and the undone phase's journal records become ``undone`` so a later
``run`` does it again. Nothing is taken back unless every phase on the way can be:
a point of no return, or a reverse kubeshift does not run yet, refuses the whole walk
in one sentence naming the phase, before anything changes.
"""

from __future__ import annotations

from collections.abc import Sequence

from automation.core.errors import UserError
from automation.model.phase import CHANGES_NOTHING, Phase, Scenario
from automation.model.way_back import NoReturn, Reverse, undo_id
from automation.run.journal import Journal
from automation.run.steps import plan_steps
from components.contract.progress import Progress

__all__ = ["finished_before", "reached", "undo_id", "walk_back"]


def reached(scenario: Scenario, progress: Progress, done: set[str]) -> list[Phase]:
    """The phases the stack has entered: any mark recorded, or any step finished here."""
    marked = {m.phase for m in progress.marks}
    return [p for p in scenario.phases if p.id in marked or p.id in done]


def walk_back(
    scenario: Scenario, progress: Progress, target: str, done: Sequence[str] = ()
) -> tuple[Phase, ...]:
    """The undo phases from where the stack is back to ``target``, latest first."""
    goal = scenario.phase(target)
    ids = scenario.ids()
    entered = reached(scenario, progress, set(done))
    later = [p for p in entered if ids.index(p.id) > ids.index(goal.id)]
    if progress.finished(goal.id) is None:
        raise UserError(
            f"Phase '{target}' is not finished on stack's record, so there is nothing to go "
            f"back to; `kubeshift status` shows where the stack is."
        )
    if not later:
        raise UserError(
            f"The stack is at '{target}' already: no later phase has run; nothing to take back."
        )
    for phase in later:
        way = phase.way_back
        if isinstance(way, NoReturn):
            raise UserError(
                f"Phase '{phase.id}' is a point of no return ({way.why}); kubeshift cannot "
                f"go back to '{target}'. Nothing was changed."
            )
        if not isinstance(way, Reverse) or not way.runs:
            how = way.how if isinstance(way, Reverse) else "none declared"
            raise UserError(
                f"kubeshift does not take phase '{phase.id}' back yet (its way back: {how}); "
                f"go back past it by hand. Nothing was changed."
            )
    return tuple(_undo(phase, ids[ids.index(phase.id) - 1]) for phase in reversed(later))


def _undo(phase: Phase, before: str) -> Phase:
    way = phase.way_back
    assert isinstance(way, Reverse)
    return Phase(
        id=undo_id(phase.id),
        summary=f"take {phase.id} back: {way.how}",
        before=way.before,
        after=way.after,
        changes=way.changes or CHANGES_NOTHING,
        destructive=way.changes is not None
        or any(getattr(s, "destructive", False) for s in (*way.before, *way.after)),
        program_phase=before,
        undoes=(phase.id,),
        probe=phase.probe,
    )


def finished_before(journal: Journal, undo: Sequence[Phase]) -> list[str]:
    """Undo phases a completed earlier walk finished: they run again (one the walk left
    unfinished, a crash say, resumes instead)."""
    return [
        phase.id
        for phase in undo
        if all(journal.is_done(phase.id, step.key) for step in plan_steps(phase))
    ]
