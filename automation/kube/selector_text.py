"""Label selectors written as text (``tier=web,track!=canary``), read as the API server
reads them, so a setting that holds one is refused at load rather than by the first
list call that uses it, hours into a migration.

The grammar is apimachinery's ``labels.Parse``: requirements joined by commas, each
``key``, ``!key``, ``key=value``, ``key==value``, ``key!=value``, ``key in (a,b)``,
``key notin (a,b)``, ``key>1`` or ``key<1``; keys are qualified names (an optional
DNS-subdomain prefix and ``/``), values label values. The empty selector selects
everything.

Each requirement is read as the set of values a node's label may have to meet it (a
missing label being one more value), which tells when one selector is sure to select
every node another one does (``covers``): what a drain of the old generation must never
do to the new one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# What a label that is not there "holds": no label value can be this.
ABSENT = "\0"

_NAME = r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_PREFIX = r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*"
_KEY = re.compile(rf"(?:(?P<prefix>{_PREFIX})/)?{_NAME}")
_VALUE = re.compile(rf"(?:{_NAME})?")
_SET_OPERATORS = {"in": True, "notin": False}
_ABSENT_FORM = re.compile(r"!\s*(?P<key>\S+)")
_SET_FORM = re.compile(r"(?P<key>[^\s=!<>()]+)\s+(?P<op>in|notin)\s*\((?P<values>[^()]*)\)")
_VALUE_FORM = re.compile(r"(?P<key>[^\s=!<>()]+)\s*(?P<op>==|=|!=|<|>)\s*(?P<value>[^\s()]*)")
_EXISTS_FORM = re.compile(r"(?P<key>[^\s=!<>()]+)")


@dataclass(frozen=True)
class Requirement:
    """One requirement: the label ``key``'s value (``ABSENT`` when it is not there) is
    one of ``values`` (``inside``) or anything but them."""

    key: str
    values: frozenset[str]
    inside: bool

    def implies(self, other: Requirement) -> bool:
        """Every label that meets this requirement meets ``other`` (same key)."""
        if self.key != other.key:
            return False
        if self.inside and other.inside:
            return self.values <= other.values
        if self.inside:
            return not self.values & other.values
        if other.inside:
            return False  # infinitely many values meet this one
        return other.values <= self.values


Selector = tuple[Requirement, ...]


def parse(text: str) -> Selector:
    """The requirements of ``text``; ``ValueError`` saying what is wrong."""
    if not text.strip():
        return ()
    return tuple(_requirement(part.strip()) for part in _parts(text))


def _parts(text: str) -> list[str]:
    """``text`` split at the commas outside parentheses."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth not in (0, 1):
            raise ValueError("its parentheses do not pair up")
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    if depth:
        raise ValueError("its parentheses do not pair up")
    parts.append(current)
    if any(not part.strip() for part in parts):
        raise ValueError("it has an empty requirement (two commas, or one at an end)")
    return parts


def _requirement(text: str) -> Requirement:
    if found := _ABSENT_FORM.fullmatch(text):
        return Requirement(_key(found["key"]), frozenset({ABSENT}), True)
    if found := _SET_FORM.fullmatch(text):
        key, op = _key(found["key"]), found["op"]
        # "()" is the empty value alone, as apimachinery's parser reads it
        values = [v.strip() for v in found["values"].split(",")]
        return Requirement(key, frozenset(map(_value, values)), _SET_OPERATORS[op])
    if found := _VALUE_FORM.fullmatch(text):
        key, op, value = _key(found["key"]), found["op"], _value(found["value"])
        if op in ("<", ">"):
            if not re.fullmatch(r"-?\d+", value):
                raise ValueError(f"'{op}' for {key} needs a whole number, not {value!r}")
            return Requirement(key, frozenset({ABSENT}), False)  # at least: the label is there
        return Requirement(key, frozenset({value}), op != "!=")
    if found := _EXISTS_FORM.fullmatch(text):
        return Requirement(_key(found["key"]), frozenset({ABSENT}), False)
    raise ValueError(f"cannot read the requirement {text!r}")


def _key(key: str) -> str:
    found = _KEY.fullmatch(key)
    if found is None or len(found["prefix"] or "") > 253:
        raise ValueError(f"{key!r} is not a label key (an optional DNS prefix/ and a name)")
    return key


def _value(value: str) -> str:
    if not _VALUE.fullmatch(value):
        raise ValueError(f"{value!r} is not a label value (63 letters, digits, '-', '_', '.')")
    return value


def check(text: str) -> str:
    """``text`` unchanged when it is a label selector (a pydantic validator)."""
    try:
        parse(text)
    except ValueError as exc:
        raise ValueError(f"not a label selector: {exc}") from None
    return text


def covers(broad: Selector, narrow: Selector) -> bool:
    """Sure that every node ``narrow`` selects is selected by ``broad`` too: each of
    ``broad``'s requirements follows from one of ``narrow``'s. (Two selectors may still
    overlap when this is False; only the nodes themselves tell.)"""
    return all(any(n.implies(b) for n in narrow) for b in broad)
