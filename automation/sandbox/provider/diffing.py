"""How the stand-in decides update versus replace, as pulumi-aws does.

pulumi-aws diffs the declared inputs against the last declared inputs; a change to a
property its Terraform schema marks ``ForceNew`` replaces the resource, any other
change is an update in place. Absent, ``None``, ``[]`` and ``{}`` all mean "not set"
(Terraform's zero values), and a value still unknown during a preview counts as a
change.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from pulumi.runtime import rpc

IGNORED = frozenset({"__defaults"})


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


def decide(
    force_new: frozenset[str],
    old_inputs: dict[str, Any],
    news: dict[str, Any],
    sets: Collection[str] = (),
) -> Verdict:
    """Which declared properties changed, and which of them force a replacement."""
    keys = (set(old_inputs) | set(news)) - IGNORED

    def equal(key: str) -> bool:
        compare = same_set if key in sets else same
        return compare(old_inputs.get(key), news.get(key))

    changed = tuple(sorted(k for k in keys if not equal(k)))
    return Verdict(changed=changed, replaces=tuple(k for k in changed if k in force_new))


def overlay(prior: object, live: object) -> object:
    """``live`` read back from moto, over ``prior`` state for what moto does not report.

    moto's describe calls omit some attributes the provider stored at create time (a
    target group's health-check timeout, a listener action's order, an ASG's launch
    template name when moto keeps only its id). Reading those as "gone" would make every
    refresh invent drift, and ``kubeshift recover`` refreshes. A value moto reports
    wins; an attribute it leaves out (absent or null) keeps what the state held.
    """
    if isinstance(prior, dict) and isinstance(live, dict):
        merged = dict(prior)
        for key, value in live.items():
            merged[key] = overlay(prior.get(key), value) if key in prior else value
        return merged
    if isinstance(prior, list) and isinstance(live, list) and len(prior) == len(live):
        return [overlay(p, v) for p, v in zip(prior, live, strict=True)]
    if live is None:
        return prior
    return live


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
