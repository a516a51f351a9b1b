"""The blast-radius guard: a phase's preview may contain only the changes it allows.

Before every update the runner previews with the same targets and hands the result
here. Any delete or replace outside the phase's scope, any replacement that deletes
first where the phase does not allow it, or any change to a protected resource, stops
the run before ``up`` and names the offending resources.
"""

from __future__ import annotations

from dataclasses import dataclass

from automation.core.errors import BlastRadiusError
from automation.core.waiting import summarize
from automation.engine.adapter import PreviewOutcome, ResourceChange
from automation.model.phase import ChangePolicy


@dataclass(frozen=True)
class Violation:
    change: ResourceChange
    reason: str


def violations(preview: PreviewOutcome, policy: ChangePolicy) -> list[Violation]:
    """Every planned change ``policy`` does not allow, in URN order."""
    found = []
    for change in preview.changes:
        bookkeeping = change.type == "pulumi:pulumi:Stack" or change.type.startswith(
            "pulumi:providers:"
        )
        if bookkeeping and change.op in {"same", "update", "create"}:
            continue
        reason = policy.violation(change.op, change.type, change.name, change.delete_first)
        if reason:
            found.append(Violation(change, reason))
    return sorted(found, key=lambda v: v.change.urn)


def check(phase_id: str, preview: PreviewOutcome, policy: ChangePolicy) -> None:
    """Raise ``BlastRadiusError`` when the preview holds a change the phase does not allow."""
    found = violations(preview, policy)
    if not found:
        return
    listed = summarize([v.reason for v in found], limit=8)
    raise BlastRadiusError(
        f"Phase '{phase_id}' stopped before update: its preview has {len(found)} change(s) "
        f"it does not allow: {listed}. Nothing was changed."
    )
