"""What a caller gets back from a DNS cutover: a report per record, and for all of them.

Each :class:`RecordReport` says what happened to one record (unchanged, switched, rolled
back, failed...) with the record sets before and after; :class:`CutoverReport` turns
them into a summary, a ``StepFailedError`` naming the failures, or a hook's result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from automation.core.errors import StepFailedError
from automation.core.results import HookResult
from automation.core.waiting import summarize

Status = Literal["unchanged", "switched", "would-switch", "rolled-back", "failed", "skipped"]


@dataclass(frozen=True)
class RecordReport:
    """What happened to one record."""

    name: str
    status: Status
    message: str
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    change_ids: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status in {"unchanged", "switched", "would-switch"}


@dataclass(frozen=True)
class CutoverReport:
    """Per-record outcomes of a cutover, in the order the records were given."""

    records: tuple[RecordReport, ...]
    dry_run: bool = False

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.records)

    @property
    def changed(self) -> bool:
        return any(r.status in {"switched", "rolled-back"} for r in self.records)

    def summary(self) -> str:
        counts: dict[str, list[str]] = {}
        for record in self.records:
            counts.setdefault(record.status, []).append(record.name)
        return "; ".join(f"{status}: {summarize(names)}" for status, names in counts.items())

    def raise_for_failure(self) -> None:
        """Raise ``StepFailedError`` naming every record that failed or was rolled back."""
        bad = [r for r in self.records if r.status in {"failed", "rolled-back"}]
        if bad:
            lines = " ".join(f"{r.name}: {r.message}." for r in bad)
            skipped = [r.name for r in self.records if r.status == "skipped"]
            rest = f" Not attempted: {summarize(skipped)}." if skipped else ""
            raise StepFailedError(f"DNS cutover failed for {len(bad)} record(s). {lines}{rest}")

    def as_hook_result(self) -> HookResult:
        """The hook's result; raises when any record failed (after its rollback)."""
        self.raise_for_failure()
        details = {
            r.name: {"status": r.status, "message": r.message, "before": r.before, "after": r.after}
            for r in self.records
        }
        prefix = "dry-run: " if self.dry_run else ""
        return HookResult(self.changed, prefix + self.summary(), details)
