"""Read the engine's preview of the imports: what differs, what else would change.

Adoption may only take resources into the state. In the preview of the first phase
with the imports, each step is one of:

- an ``import`` (the live resource becomes the declared one) — with a detailed diff
  when live attributes and the stack file disagree, each a :class:`Difference`;
- a ``create`` of a component, of the provider, or of a type pulumi-aws cannot import
  whose create changes nothing live (discovery checked it is there already);
- ``same``: adopted before;
- anything else — a create of a cloud resource, a replace, an update, a delete — would
  change what runs, so adoption refuses it, one sentence each.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from automation.adoption.models import Difference, Discovery
from automation.engine import ResourceChange

_STATE_ONLY_PREFIXES = ("kubeshift:", "pulumi:providers:", "pulumi:pulumi:")


@dataclass(frozen=True)
class Assessment:
    imports: tuple[str, ...] = ()
    """Logical names the update would import."""
    recorded: tuple[str, ...] = ()
    """Logical names recorded by a create that changes nothing live."""
    adopted: tuple[str, ...] = ()
    """Logical names already in the state, unchanged."""
    differences: tuple[Difference, ...] = ()
    refusals: tuple[str, ...] = field(default_factory=tuple)
    """Steps adoption never takes, one sentence each."""

    @property
    def clean(self) -> bool:
        return not self.differences and not self.refusals


def _label(change: ResourceChange) -> str:
    return f"{change.name} ({change.type})"


def assess(changes: Iterable[ResourceChange], discovery: Discovery) -> Assessment:
    """Sort the preview's steps; see the module docstring."""
    recordable = {r.name for r in discovery.resources if r.import_id is None}
    imports: list[str] = []
    recorded: list[str] = []
    adopted: list[str] = []
    differences: list[Difference] = []
    refusals: list[str] = []
    for change in changes:
        state_only = change.type.startswith(_STATE_ONLY_PREFIXES)
        if change.op in ("same", "read") or (state_only and change.op == "create"):
            if change.op == "same" and not state_only:
                adopted.append(change.name)
            continue
        if change.op == "import":
            imports.append(change.name)
            differences.extend(
                Difference(
                    name=change.name,
                    type=change.type,
                    attribute=p.path,
                    live=p.old,
                    declared=p.new,
                    replaces=p.replaces,
                )
                for p in change.detail
            )
            if change.diffs and not change.detail:
                differences.extend(
                    Difference(
                        name=change.name, type=change.type, attribute=d, live="?", declared="?"
                    )
                    for d in change.diffs
                )
        elif change.op == "create" and change.name in recordable:
            recorded.append(change.name)
        elif change.op == "update" and change.detail:
            differences.extend(
                Difference(
                    name=change.name,
                    type=change.type,
                    attribute=p.path,
                    live=p.old,
                    declared=p.new,
                )
                for p in change.detail
            )
        else:
            refusals.append(_refusal(change))
    return Assessment(
        imports=tuple(imports),
        recorded=tuple(recorded),
        adopted=tuple(adopted),
        differences=tuple(differences),
        refusals=tuple(refusals),
    )


def _refusal(change: ResourceChange) -> str:
    verb = {
        "create": "would create",
        "create-replacement": "would replace",
        "replace": "would replace",
        "delete": "would delete",
        "delete-replaced": "would replace",
        "update": "would update",
    }.get(change.op, f"would {change.op}")
    why = {
        "create": ": nothing live matched it",
    }.get(change.op, "")
    return f"The first phase {verb} {_label(change)}{why}."
