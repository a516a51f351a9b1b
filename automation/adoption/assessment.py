"""Read the engine's preview of the imports: what differs, what else would change.

Adoption may only take resources into the state. In the preview of the first phase
with the imports, each step is one of:

- an ``import`` (the live resource becomes the declared one) — with a detailed diff
  when live attributes and the stack file disagree, each a :class:`Difference`;
- a ``create`` of a component, of the provider, or of a type pulumi-aws cannot import
  whose create changes nothing live (discovery checked it is there already);
- a ``create`` of what discovery found nothing for and adoption adds beside what runs
  (:mod:`.additions`);
- ``same``: adopted before;
- a replacement (planned as several steps) — one sentence naming the attributes that
  cannot change in place, each of its differing attributes one line; replacements
  forced only by another replacement's new id (a group's rules, once the group would
  be replaced) follow it, and are named together in one sentence after the causes;
- anything else — a create of a cloud resource, an update, a delete — would change
  what runs, so adoption refuses it, one sentence each.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from automation.adoption.models import Difference, Discovery
from automation.engine.adapter import ResourceChange
from automation.engine.property_paths import UNKNOWN_SHOWN

_STATE_ONLY_PREFIXES = ("kubeshift:", "pulumi:providers:", "pulumi:pulumi:")
_REPLACING = ("replace", "create-replacement", "delete-replaced", "import-replacement")
_NAMED = 5
"""Followers named in their sentence; the rest are counted."""


@dataclass(frozen=True)
class Assessment:
    imports: tuple[str, ...] = ()
    """Logical names the update would import."""
    recorded: tuple[str, ...] = ()
    """Logical names recorded by a create that changes nothing live."""
    added: tuple[str, ...] = ()
    """Logical names created beside what runs (:mod:`.additions`)."""
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


def _differences(change: ResourceChange) -> list[Difference]:
    """One :class:`Difference` per attribute the step changes (``?`` for values the
    engine did not detail)."""
    if not change.detail:
        return [
            Difference(name=change.name, type=change.type, attribute=d, live="?", declared="?")
            for d in change.diffs
        ]
    return [
        Difference(
            name=change.name,
            type=change.type,
            attribute=p.path,
            live=p.old,
            declared=p.new,
            replaces=p.replaces,
            added=list(p.added),
            live_input=p.live_input,
            declared_input=p.declared_input,
        )
        for p in change.detail
    ]


def assess(changes: Iterable[ResourceChange], discovery: Discovery) -> Assessment:
    """Sort the preview's steps; see the module docstring."""
    recordable = {r.name for r in discovery.resources if r.import_id is None}
    addable = {a.name for a in discovery.additions}
    imports: list[str] = []
    recorded: list[str] = []
    added: list[str] = []
    adopted: list[str] = []
    differences: list[Difference] = []
    refusals: list[str] = []
    replaced: set[str] = set()
    followers: list[ResourceChange] = []
    # a replacement's steps: the one that details its attributes, whichever comes first
    # (a delete-first replacement starts with its detail-less delete-replaced)
    detailed: dict[str, ResourceChange] = {}
    for change in changes:
        if change.op in _REPLACING and change.detail:
            detailed.setdefault(change.name, change)
    for change in changes:
        state_only = change.type.startswith(_STATE_ONLY_PREFIXES)
        if change.op in ("same", "read") or (state_only and change.op == "create"):
            if change.op == "same" and not state_only:
                adopted.append(change.name)
            continue
        if change.op == "import":
            imports.append(change.name)
            differences.extend(_differences(change))
        elif change.op == "create" and change.name in recordable:
            recorded.append(change.name)
        elif change.op == "create" and change.name in addable:
            added.append(change.name)
        elif change.op == "update" and change.detail:
            differences.extend(_differences(change))
        elif change.op in _REPLACING:
            # the engine plans a replacement as several steps: one line, one refusal
            if change.name not in replaced:
                replaced.add(change.name)
                change = detailed.get(change.name, change)
                found = _differences(change)
                differences.extend(found)
                if _follows(found):
                    followers.append(change)
                else:
                    refusals.append(_replace_refusal(change, found))
        else:
            refusals.append(_refusal(change))
    if followers:
        refusals.append(_followers_refusal(followers, caused=len(replaced) > len(followers)))
    return Assessment(
        imports=tuple(imports),
        recorded=tuple(recorded),
        added=tuple(added),
        adopted=tuple(adopted),
        differences=tuple(differences),
        refusals=tuple(refusals),
    )


def _replace_refusal(change: ResourceChange, differences: list[Difference]) -> str:
    forcing = [d.attribute for d in differences if d.replaces]
    why = f": {', '.join(forcing)} cannot change in place" if forcing else ""
    return f"The first phase would replace {_label(change)}{why}."


def _follows(differences: list[Difference]) -> bool:
    """Replaced only because an attribute that forces it takes another resource's new
    id, which the preview cannot know yet."""
    forcing = [d for d in differences if d.replaces]
    return bool(forcing) and all(UNKNOWN_SHOWN in d.declared for d in forcing)


def _followers_refusal(followers: list[ResourceChange], *, caused: bool) -> str:
    named = ", ".join(_label(c) for c in followers[:_NAMED])
    more = f" and {len(followers) - _NAMED} more" if len(followers) > _NAMED else ""
    whose = "a resource replaced above" if caused else "a replaced resource"
    return (
        f"The first phase would also replace {len(followers)} resource(s) that take the new "
        f"id of {whose}, known only after the update: {named}{more}."
    )


_CREATED_WHY = {
    "aws:iam/rolePolicy:RolePolicy": (
        ": kubeshift's grants for its own boot script, which the launch templates would run "
        "instead of the live one (kubeshift:cluster.user_data keeps the live script, for "
        "the new nodes of a migration too, and then no grant is needed)"
    ),
}
"""Why the first phase creates a resource of a type that only kubeshift adds."""


def _refusal(change: ResourceChange) -> str:
    verb = {
        "create": "would create",
        "delete": "would delete",
        "update": "would update",
    }.get(change.op, f"would {change.op}")
    why = {
        "create": _CREATED_WHY.get(change.type, ": nothing live matched it"),
    }.get(change.op, "")
    return f"The first phase {verb} {_label(change)}{why}."
