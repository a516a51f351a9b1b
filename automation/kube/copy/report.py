"""What a copy did, per object: :class:`CopyReport`, its table, summary and hook result.

Items carry kind, namespace and name (and the image references rewritten), never an
object's content, so no Secret value reaches a log or the journal through a report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from automation.core.errors import StepFailedError
from automation.core.results import HookResult
from automation.core.waiting import summarize
from automation.kube.copy.kinds import DEFAULT_KINDS

Action = Literal[
    "created", "updated", "unchanged", "skipped", "failed", "would-create", "would-update"
]
_COPIED: frozenset[str] = frozenset({"created", "updated", "would-create", "would-update"})
_COLUMNS: tuple[Action, ...] = (
    "created",
    "updated",
    "would-create",
    "would-update",
    "unchanged",
    "skipped",
    "failed",
)


@dataclass(frozen=True)
class CopyItem:
    """What happened to one object. Never carries an object's content."""

    kind: str
    namespace: str
    name: str
    action: Action
    reason: str = ""
    images: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"


@dataclass(frozen=True)
class CopyReport:
    """Per-object outcomes of a copy, in copy order, and the namespaces it created."""

    items: tuple[CopyItem, ...]
    namespaces: tuple[str, ...] = ()
    namespaces_created: tuple[str, ...] = ()
    dry_run: bool = False

    def by_action(self, *actions: str) -> list[CopyItem]:
        return [i for i in self.items if i.action in actions]

    @property
    def copied(self) -> list[CopyItem]:
        return [i for i in self.items if i.action in _COPIED]

    @property
    def failed(self) -> list[CopyItem]:
        return self.by_action("failed")

    @property
    def changed(self) -> bool:
        if self.dry_run:
            return False
        return bool(self.namespaces_created or self.by_action("created", "updated"))

    def counts(self) -> dict[str, dict[str, int]]:
        """``{kind: {action: n}}`` for every kind with at least one object."""
        out: dict[str, dict[str, int]] = {}
        for item in self.items:
            per_kind = out.setdefault(item.kind, {})
            per_kind[item.action] = per_kind.get(item.action, 0) + 1
        return out

    def table(self) -> str:
        """A fixed-width table: one row per kind, one column per action that occurred."""
        counts = self.counts()
        columns = [a for a in _COLUMNS if any(a in c for c in counts.values())]
        if not counts:
            return "nothing to copy"
        width = max(len("kind"), *(len(k) for k in counts))
        head = "kind".ljust(width) + "".join(f"  {c:>12}" for c in columns)
        rows = [
            kind.ljust(width) + "".join(f"  {counts[kind].get(c, 0):>12}" for c in columns)
            for kind in (k for k in DEFAULT_KINDS if k in counts)
        ]
        return "\n".join([head, *rows])

    def summary(self) -> str:
        prefix = "dry-run: " if self.dry_run else ""
        verbs = ("would-create", "would-update") if self.dry_run else ("created", "updated")
        parts = [f"{len(self.by_action(v))} {v}" for v in verbs]
        parts += [f"{len(self.by_action(v))} {v}" for v in ("unchanged", "skipped", "failed")]
        images = sum(len(i.images) for i in self.copied)
        ns = f"{len(self.namespaces)} namespace(s)"
        if self.namespaces_created:
            made = "would create" if self.dry_run else "created"
            ns += f", {made} {summarize(self.namespaces_created)}"
        text = f"{prefix}copy to mirror: {', '.join(parts)} across {ns}"
        if images:
            text += f"; {images} image reference(s) rewritten"
        if self.failed:
            text += f"; failed: {summarize([f'{i.key} ({i.reason})' for i in self.failed], 3)}"
        return text + "."

    def raise_for_failure(self) -> None:
        if self.failed:
            raise StepFailedError(
                f"Copy to the mirror failed for {len(self.failed)} object(s): "
                f"{summarize([f'{i.key}: {i.reason}' for i in self.failed], 3)}. "
                "Fix them and run the copy again; objects already copied stay unchanged."
            )

    def as_hook_result(self) -> HookResult:
        """The hook's result; raises when any object failed."""
        self.raise_for_failure()
        details = {
            "counts": self.counts(),
            "namespaces_created": list(self.namespaces_created),
            "copied": [i.key for i in self.copied],
        }
        return HookResult(self.changed, self.summary(), details)
