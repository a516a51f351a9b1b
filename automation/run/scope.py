"""What a phase's preview and update reach: every resource, or what the checkpoint says differs.

A preview checks and diffs every resource through its provider, which at 600 resources
takes a minute even for a phase that changes none. With ``preview_scope: judged`` the
phase is first judged offline against the stack's checkpoint (``review.checkpoint``),
and the preview and the update target what differs, what depends on it, and the stack
resource (whose outputs carry the progress record); a phase that changes nothing is not
previewed, and its update targets the stack resource alone. The engine's own
``--target-dependents`` is not used for these: it follows every resource's parent, so a
targeted stack resource takes every resource along. ``verify`` previews every resource
as ``full`` does and fails where the engine changes something the judgement did not
place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from automation.core.errors import StepFailedError
from automation.core.waiting import summarize
from automation.engine.adapter import PreviewOutcome
from automation.model.phase import Phase
from automation.run.targets import STACK_TYPE

if TYPE_CHECKING:
    from automation.review.checkpoint import Verdict

PreviewScope = Literal["judged", "verify", "full"]


@dataclass(frozen=True)
class EngineScope:
    """The targets of one phase's preview and update."""

    targets: Sequence[str]
    """URNs to target; empty: every resource."""
    dependents: bool
    """Whether the engine adds what depends on the targets (``--target-dependents``)."""
    verdict: Verdict | None = None
    allowed: frozenset[str] | None = None
    """verify: every URN the judgement placed; the engine may change nothing else."""
    judging: float | None = None
    """Seconds the judgement took (the checkpoint's export, the program's render)."""

    @property
    def previews(self) -> bool:
        """False where the judgement (not verify's) found every resource as the
        checkpoint holds it: a preview of the stack resource alone could show nothing but
        its own outputs (the default providers it also reaches were judged too), so only
        the update runs, to write the progress record."""
        verdict = self.verdict
        if verdict is None or self.allowed is not None or not verdict.unchanged:
            return True
        return list(self.targets) != [verdict.root]

    def check(self, phase: str, outcome: PreviewOutcome) -> None:
        """verify: stop where the engine's preview changes what the judgement left out."""
        if self.allowed is None:
            return
        missed = [
            f"{c.op} {c.name}"
            for c in outcome.changed()
            if c.type != STACK_TYPE and c.urn not in self.allowed
        ]
        if missed:
            raise StepFailedError(
                f"{phase}: the engine's preview changes {summarize(missed, 5)}, which the "
                "judgement against the stack's checkpoint left out; set kubeshift:runtime."
                "preview_scope to full and report this."
            )

    def details(self) -> dict[str, Any]:
        """For the journal: what the judgement found, how many resources it would have
        the preview reach (None: every one), and how far the preview reached."""
        if self.verdict is None:
            return {}
        reach = f"{len(self.targets)} targets" if self.targets else "every resource"
        reach = reach if self.previews else "skipped"
        placed = self.allowed if self.allowed is not None else self.verdict.targets()
        return {
            "checkpoint": self.verdict.summary(),
            "judged": None if placed is None else len(placed),
            "judging": self.judging,
            "previewed": reach,
        }

    def note(self) -> str:
        """What the preview's message adds when the judgement narrowed it."""
        if self.verdict is None or self.allowed is not None or not self.targets:
            return ""
        if not self.previews:
            return (
                " (every resource as the checkpoint holds it: no preview; the update "
                "reaches the stack resource alone)"
            )
        return f" ({len(self.targets) - 1} resources the checkpoint says differ or depend on them)"


def choose(
    phase: Phase,
    mode: PreviewScope,
    verdict: Verdict | None,
    declared: Callable[[], list[str]],
) -> EngineScope:
    """The scope of ``phase``'s preview and update. ``declared``: the phase's own targets
    (a targeted phase's from the render, or its ``targets`` patterns'; [] for every
    resource)."""
    if verdict is None or mode == "full":
        targets = declared()
        return EngineScope(targets, dependents=bool(targets))
    own = declared() or None  # a phase's own targets (its render's, its patterns') stay
    judged = verdict.targets(own)
    if mode == "verify":
        allowed = frozenset(judged) if judged is not None else None
        return EngineScope(own or [], bool(own), verdict, allowed)
    if verdict.unchanged and verdict.root:
        return EngineScope([verdict.root], dependents=False, verdict=verdict)
    if judged is None:
        return EngineScope(own or [], dependents=bool(own), verdict=verdict)
    return EngineScope(judged, dependents=False, verdict=verdict)
