"""How the stand-in decides update versus replace, as pulumi-aws does.

pulumi-aws diffs the declared inputs against the last declared inputs; a change to a
property its Terraform schema marks ``ForceNew`` replaces the resource, any other
change is an update in place. Absent, ``None``, ``[]`` and ``{}`` all mean "not set"
(Terraform's zero values), and a value still unknown during a preview counts as a
change.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from pulumi.runtime import rpc

from automation.core.bridge_defaults import DEFAULTS

IGNORED = frozenset({DEFAULTS})


def unset(value: Any) -> bool:
    return value is None or value == [] or value == {}


def contains_unknown(value: Any) -> bool:
    if value == rpc.UNKNOWN:
        return True
    if isinstance(value, dict):
        return any(contains_unknown(v) for v in value.values())
    if isinstance(value, list):
        return any(contains_unknown(v) for v in value)
    return False


def same(old: Any, new: Any) -> bool:
    """Equal as Terraform compares declared values; an unknown is never equal."""
    if contains_unknown(new):
        return False
    if unset(old) and unset(new):
        return True
    return bool(old == new)


def _members(value: Any) -> list[str]:
    return sorted(json.dumps(v, sort_keys=True) for v in value or [])


def same_set(old: Any, new: Any) -> bool:
    """Equal as members of a Terraform ``TypeSet``: order does not count."""
    if contains_unknown(new):
        return False
    if unset(old) and unset(new):
        return True
    return isinstance(old, list) and isinstance(new, list) and _members(old) == _members(new)


def in_prior_order(sets: Collection[str], prior: dict[str, Any], live: dict[str, Any]) -> None:
    """Give each set-typed value read back the order the state held, when its members
    are the same (AWS answers in its own order; a set has none)."""
    for key in sets:
        if key in prior and key in live and same_set(prior[key], live[key]):
            live[key] = prior[key]


@dataclass(frozen=True)
class Verdict:
    changed: tuple[str, ...]
    replaces: tuple[str, ...]

    @property
    def replace(self) -> bool:
        return bool(self.replaces)


@dataclass(frozen=True)
class Schema:
    """What a type's schema says about comparing declared values (``ResourceType``)."""

    sets: Collection[str] = ()
    optional_computed: Collection[str] = ()
    defaults: Mapping[str, Any] = field(default_factory=dict)
    json_documents: Collection[str] = ()


def completed(news: dict[str, Any], olds: dict[str, Any], schema: Schema) -> dict[str, Any]:
    """``news`` as Terraform plans it: an Optional+Computed attribute left out keeps the
    old value, a defaulted one left out is its default."""
    plan = dict(news)
    for path in schema.optional_computed:
        plan = _carried(plan, olds, path.split("."))
    for key, default in schema.defaults.items():
        if unset(plan.get(key)):
            plan[key] = default
    return plan


def _carried(new: dict[str, Any], old: dict[str, Any], path: list[str]) -> dict[str, Any]:
    """``new`` with the old value at ``path`` where ``new`` leaves it out. A segment
    ``a[]`` walks the blocks of list ``a`` pairwise (when both have as many)."""
    head, rest = path[0], path[1:]
    key = head.removesuffix("[]")
    ours: Any = new.get(key)
    theirs: Any = old.get(key)
    if head.endswith("[]"):
        pairs = isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs)
        if pairs and rest:
            blocks = [
                _carried(n, o, rest) if isinstance(n, dict) and isinstance(o, dict) else n
                for n, o in zip(ours, theirs, strict=True)
            ]
            return {**new, key: blocks}
        return new
    if not rest:
        return {**new, key: theirs} if unset(ours) and key in old else new
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return {**new, key: _carried(ours, theirs, rest)}
    return new


def same_document(old: Any, new: Any) -> bool:
    """Equal as JSON documents (whitespace and key order do not count)."""
    try:
        return bool(json.loads(old) == json.loads(new))
    except (TypeError, ValueError):
        return same(old, new)


def decide(
    force_new: frozenset[str],
    old_inputs: dict[str, Any],
    news: dict[str, Any],
    schema: Schema | None = None,
) -> Verdict:
    """Which declared properties changed, and which of them force a replacement."""
    schema = schema or Schema()
    olds = dict(old_inputs)
    for key, default in schema.defaults.items():
        olds.setdefault(key, default)
    news = completed(news, olds, schema)
    keys = (set(olds) | set(news)) - IGNORED

    def equal(key: str) -> bool:
        if key in schema.json_documents:
            return same_document(olds.get(key), news.get(key))
        compare = same_set if key in schema.sets else same
        return compare(olds.get(key), news.get(key))

    changed = tuple(sorted(k for k in keys if not equal(k)))
    return Verdict(changed=changed, replaces=tuple(k for k in changed if k in force_new))


def with_defaults(declared: dict[str, Any], checked: dict[str, Any]) -> dict[str, Any]:
    """``checked`` and, under :data:`DEFAULTS`, the properties Check filled in: those the
    program left out (``applyDefaults`` lists a key only when the property was absent).
    The bridge keeps such a list in every object it converts, nested ones included
    (``MakeTerraformInputs`` runs ``applyDefaults`` at each level, ``schema.go``)."""
    filled = sorted(k for k in checked if k != DEFAULTS and unset(declared.get(k)))
    nested = {k: _nested_defaults(declared.get(k), v) for k, v in checked.items() if k != DEFAULTS}
    return {**nested, DEFAULTS: filled}


def _nested_defaults(declared: Any, checked: Any) -> Any:
    if isinstance(declared, dict) and isinstance(checked, dict):
        return with_defaults(declared, checked)
    if isinstance(declared, list) and isinstance(checked, list) and len(declared) == len(checked):
        return [_nested_defaults(d, c) for d, c in zip(declared, checked, strict=True)]
    return checked


def deletes_first(
    replaces: bool, auto_named: str | None, outright: bool, news: dict[str, Any]
) -> bool:
    """Whether pulumi-aws answers a replacement delete-before-replace: its type is marked
    so, or the program set the property it would autoname (pulumi-terraform-bridge
    ``pkg/tfbridge/provider.go`` Diff and ``schema.go`` nameRequiresDeleteBeforeReplace;
    checked inputs without a defaults list count as autonamed)."""
    if not replaces:
        return False
    if outright:
        return True
    filled = news.get(DEFAULTS)
    if auto_named is None or not isinstance(filled, list):
        return False
    return not unset(news.get(auto_named)) and auto_named not in filled


def read_back(
    state: dict[str, Any], live: dict[str, Any], omitted: Collection[str]
) -> dict[str, Any]:
    """What a refresh stores: ``live``, as the account holds it, but for the paths in
    ``omitted`` (a type's ``moto_omits``), which keep the state's value when moto leaves
    them out. Nothing else is carried over: a tag removed out of band, a cleared
    description or a route's new target reads as drift, as Terraform's Read sets it.
    """
    outputs = dict(live)
    for path in omitted:
        outputs = _carried(outputs, state, path.split("."))
    return outputs


def shaped_like(live: object, declared: object) -> object:
    """``live`` cut to the shape of the ``declared`` inputs, at every depth.

    Read answers with inputs too, and the engine diffs the program against them: an
    attribute moto fills in by default that the program never set (a health check's
    timeout) must not read as one the program removed.
    """
    if isinstance(live, dict) and isinstance(declared, dict):
        return {k: shaped_like(live[k], declared[k]) for k in declared if k in live}
    if isinstance(live, list) and isinstance(declared, list) and len(live) == len(declared):
        return [shaped_like(v, d) for v, d in zip(live, declared, strict=True)]
    return live
