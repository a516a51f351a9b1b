"""How the stand-in decides update versus replace, as pulumi-aws does.

pulumi-aws diffs the declared inputs against the last declared inputs; a change to a
property its Terraform schema marks ``ForceNew`` replaces the resource, any other
change is an update in place. Absent, ``None``, ``[]`` and ``{}`` all mean "not set"
(Terraform's zero values), and a value still unknown during a preview counts as a
change.
"""

from __future__ import annotations

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


@dataclass(frozen=True)
class Verdict:
    changed: tuple[str, ...]
    replaces: tuple[str, ...]

    @property
    def replace(self) -> bool:
        return bool(self.replaces)


def decide(force_new: frozenset[str], old_inputs: dict[str, Any], news: dict[str, Any]) -> Verdict:
    """Which declared properties changed, and which of them force a replacement."""
    keys = (set(old_inputs) | set(news)) - IGNORED
    changed = tuple(sorted(k for k in keys if not same(old_inputs.get(k), news.get(k))))
    return Verdict(changed=changed, replaces=tuple(k for k in changed if k in force_new))
