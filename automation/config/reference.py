"""The stack-file reference, ``docs/reference.md``, generated from the models.

Every key a stack file (``stacks/Pulumi.<stack>.yaml``) may hold under ``config:`` is a
field of :class:`~components.contract.models.StackConfig` or of
:class:`~automation.config.settings.RuntimeSettings`, or of a model they nest. This module
walks them and writes one row per key, spelt as a user writes it
(``kubeshift:cluster.worker_pools[].instance_types``): its type, its default (or
"required"), what it means (each field's ``Field(description=...)``) and an example,
the first value the repository's stack files give it (else the field's own
``examples``). ``scripts/reference`` rewrites the page; ``tests/automation/
test_reference.py`` fails when a field has no description or the page drifts.

The models are imported below, one line per family, and nowhere else.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import sys
import types
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import yaml
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from automation.config.settings import RuntimeSettings
from components.contract.keys import (
    CLUSTER_KEY,
    KNOWN_KEYS,
    MIGRATION_KEY,
    PHASE_KEY,
    REGION_KEY,
    RUNTIME_KEY,
    SCENARIO_KEY,
    SKIP_PROGRESS_KEY,
)
from components.contract.models import StackConfig

PAGE = Path("docs") / "reference.md"
"""Where ``scripts/reference`` writes the page, relative to the project."""

STACK_KEYS = {
    "region": REGION_KEY,
    "scenario": SCENARIO_KEY,
    "phase": PHASE_KEY,
    "cluster": CLUSTER_KEY,
    "migration": MIGRATION_KEY,
    "skip_progress_check": SKIP_PROGRESS_KEY,
}
"""The stack file's key for each field of :class:`StackConfig` (``load_config`` reads
them): every other field nests under its parent's key."""

KEPT_KEY = next(key for key in KNOWN_KEYS if key not in (*STACK_KEYS.values(), RUNTIME_KEY))
KEPT_DESCRIPTION = (
    "A file beside the stack file, named relative to the stack file's directory, that "
    "holds the cluster block's kept sections (names, descriptions, user_data, kept_tags, "
    "kept_inputs); every reader merges it into kubeshift:cluster (a section in both is "
    "refused). adopt --write-config writes Pulumi.<stack>.kept.yaml and names it here when "
    "the proposal's config would pass half of the 128 KiB Pulumi hands its program."
)
RUNTIME_DESCRIPTION = (
    "How kubeshift reaches the clusters, AWS and etcd, and how its hooks and gates behave; "
    "the Pulumi program ignores it. Every key is optional, an unknown one is refused with "
    "the nearest valid name, and none may be a secret (kubeshift reads them without the "
    "stack's key): leave credentials to kubeconfigs and AWS profiles."
)

KEY_NAMES = {
    f"{RUNTIME_KEY}.clusters": ("<role>",),
    f"{CLUSTER_KEY}.kept_inputs": ("<resource>", "<attribute>"),
}
"""What a map's keys are, where ``<name>`` would say too little."""

EXAMPLE_WIDTH = 60
"""An example longer than this is taken only when no stack file has a shorter one."""


@dataclass(frozen=True)
class Row:
    """One key of the reference."""

    key: str
    type: str
    default: str
    description: str
    example: str = ""


# --- walking the models ----------------------------------------------------------------


def _unwrap(annotation: Any) -> Any:
    """``annotation`` without ``Annotated`` and ``None``."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _unwrap(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        options = [a for a in get_args(annotation) if a is not type(None)]
        return _unwrap(options[0]) if len(options) == 1 else annotation
    return annotation


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _children(annotation: Any, key: str) -> Iterator[tuple[str, type[BaseModel]]]:
    """The models nested in a field's ``annotation``, each with the key its fields go under."""
    shape = _unwrap(annotation)
    origin = get_origin(shape)
    if _is_model(shape):
        yield key, shape
    elif origin in (list, tuple):
        yield from _children(get_args(shape)[0], f"{key}[]")
    elif origin is dict:
        names = KEY_NAMES.get(key, ())
        placeholder = names[0] if names else "<name>"
        inner = _children(get_args(shape)[1], f"{key}.{placeholder}")
        for child_key, model in inner:
            if len(names) > 1:  # a map of maps: name the inner keys too
                child_key = child_key.replace(".<name>", f".{names[1]}", 1)
            yield child_key, model
    elif origin in (Union, types.UnionType):
        for option in get_args(shape):
            yield from _children(option, key)


def _field_keys(model: type[BaseModel], name: str, field: FieldInfo) -> list[str]:
    """How a user may spell ``name`` in the stack file: its name, its alias, or both."""
    alias = field.alias
    if not alias or alias == name:
        return [name]
    by_name = model.model_config.get("populate_by_name") or model.model_config.get(
        "validate_by_name"
    )
    return [name, alias] if by_name else [alias]


def walk(model: type[BaseModel], prefix: str) -> Iterator[tuple[str, FieldInfo, list[str]]]:
    """Every field under ``model`` (recursively): its key, its field and its spellings."""
    for name, field in model.model_fields.items():
        spellings = _field_keys(model, name, field)
        key = f"{prefix}.{spellings[0]}"
        yield key, field, spellings
        for child_key, child in _children(field.annotation, key):
            yield from walk(child, child_key)


def _stack_fields() -> Iterator[tuple[str, FieldInfo, list[str], bool]]:
    """Every stack-file key: the top-level ones from :data:`STACK_KEYS`, then nested."""
    for name, field in StackConfig.model_fields.items():
        key = STACK_KEYS[name]
        yield key, field, [key], True
        for child_key, child in _children(field.annotation, key):
            for nested in walk(child, child_key):
                yield (*nested, False)


def undescribed() -> list[str]:
    """The keys whose field has no description: each must say what it means."""
    keys = [key for key, field, _, _ in _stack_fields() if not field.description]
    keys += [key for key, field, _ in walk(RuntimeSettings, RUNTIME_KEY) if not field.description]
    return keys


# --- rendering -------------------------------------------------------------------------


def _flow(value: Any) -> str:
    """``value`` as YAML in one line, as a stack file could write it."""
    text = yaml.safe_dump(value, default_flow_style=True, width=sys.maxsize, sort_keys=False)
    return text.removesuffix("\n...\n").strip()


def _plain(value: Any) -> Any:
    """``value`` as the stack file would hold it (models without their defaults)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_defaults=True)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, ipaddress.IPv4Network | ipaddress.IPv4Address | Path | dt.timedelta):
        return str(value)
    if isinstance(value, Mapping):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        value = field.default_factory()  # type: ignore[call-arg]
    elif field.default is PydanticUndefined:
        return "required"
    else:
        value = field.default
    if value is None:
        return "unset"
    plain = _plain(value)
    if isinstance(value, BaseModel) and plain == {}:
        return "each key's default"
    return f"`{_flow(plain)}`"


_TYPES: dict[Any, str] = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    Path: "path",
    ipaddress.IPv4Network: "IPv4 CIDR",
    ipaddress.IPv4Address: "IPv4 address",
}


def _type_name(annotation: Any) -> str:
    shape = _unwrap(annotation)
    origin = get_origin(shape)
    if shape in _TYPES:
        return _TYPES[shape]
    if _is_model(shape):
        return "object"
    if origin is Literal:
        return "one of " + ", ".join(f"`{v}`" for v in get_args(shape))
    if origin in (list, tuple):
        item = _type_name(get_args(shape)[0])
        return f"list, each {item}" if item.startswith("one of") else f"list of {item}"
    if origin is dict:
        key, value = get_args(shape)
        of = _type_name(value)
        return f"map of {of}" if key is str else f"map of {_type_name(key)} to {of}"
    if origin in (Union, types.UnionType):
        return " or ".join(_type_name(a) for a in get_args(shape) if a is not type(None))
    if getattr(shape, "__name__", "") == "JsonValue":
        return "any value"
    return getattr(shape, "__name__", str(shape))


_BOUNDS = (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<"))


def _constraints(field: FieldInfo) -> list[str]:
    said = []
    for item in field.metadata:
        for attribute, sign in _BOUNDS:
            bound = getattr(item, attribute, None)
            if bound is not None:
                said.append(f"{sign} {bound}")
        if getattr(item, "min_length", None):
            said.append(f"at least {item.min_length}")
        if getattr(item, "max_length", None):
            said.append(f"at most {item.max_length}")
        if getattr(item, "pattern", None):
            said.append(f"matching `{item.pattern}`")
    return said


def _type(field: FieldInfo) -> str:
    name = _type_name(field.annotation)
    bounds = _constraints(field)
    return f"{name}, {', '.join(bounds)}" if bounds else name


_CODE_MARKS = ("_", "*", "<", ">", "=", ":", "--")
_NOT_CODE = {"e.g", "i.e", "etc", "vs"}


def _code(core: str) -> bool:
    """A technical token: a dotted name, a path, a key, a flag, a selector..."""
    if "`" in core or not any(c.isalnum() for c in core):
        return False
    dotted = "." in core.strip(".") and core.lower() not in _NOT_CODE
    return dotted or any(mark in core for mark in _CODE_MARKS)


def _prose(text: str) -> str:
    """A description for a table cell: technical tokens as code, nothing read as markup."""
    words = []
    for word in text.split():
        start = len(word) - len(word.lstrip("(\"'"))
        end = len(word.rstrip(",.;)\"'"))
        lead, core, tail = word[:start], word[start:end], word[end:]
        if core.endswith(":") and not core.endswith("::"):
            core, tail = core[:-1], ":" + tail
        if _code(core):
            words.append(f"{lead}`{core}`{tail}")
        else:
            words.append(word.replace("<", "&lt;").replace(">", "&gt;").replace("*", "\\*"))
    return " ".join(words)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


# --- examples from the stack files -----------------------------------------------------


def _values(config: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """Each value of a stack file's config, keyed as the reference keys it."""

    def under(model: type[BaseModel], prefix: str, data: Any) -> Iterator[tuple[str, Any]]:
        if not isinstance(data, Mapping):
            return
        for name, field in model.model_fields.items():
            spellings = _field_keys(model, name, field)
            given = [s for s in spellings if s in data]
            if not given:
                continue
            key, value = f"{prefix}.{spellings[0]}", data[given[0]]
            yield key, value
            yield from nested(field.annotation, key, value)

    def nested(annotation: Any, key: str, value: Any) -> Iterator[tuple[str, Any]]:
        for child_key, child in _children(annotation, key):
            depth = child_key.count("[]") - key.count("[]")
            names = child_key[len(key) :].count(".<")
            for item in _items(value, depth, names):
                yield from under(child, child_key, item)

    for name, field in StackConfig.model_fields.items():
        key = STACK_KEYS[name]
        if key in config:
            yield key, config[key]
            yield from nested(field.annotation, key, config[key])
    if isinstance(config.get(RUNTIME_KEY), Mapping):
        yield from under(RuntimeSettings, RUNTIME_KEY, config[RUNTIME_KEY])
    if KEPT_KEY in config:
        yield KEPT_KEY, config[KEPT_KEY]


def _items(value: Any, lists: int, maps: int) -> Iterator[Any]:
    """The objects ``lists`` list levels and ``maps`` map levels below ``value``."""
    if lists:
        for item in value if isinstance(value, list) else []:
            yield from _items(item, lists - 1, maps)
    elif maps:
        for item in value.values() if isinstance(value, Mapping) else []:
            yield from _items(item, 0, maps - 1)
    else:
        yield value


def _scalar_like(value: Any) -> bool:
    """A value worth showing whole: not an object whose keys have rows of their own."""
    if isinstance(value, Mapping):
        return all(not isinstance(v, Mapping | list) for v in value.values())
    if isinstance(value, list):
        return all(not isinstance(v, Mapping | list) for v in value)
    return True


def examples(stack_files: Iterable[Path]) -> dict[str, str]:
    """The first value each key has in ``stack_files`` (one no wider than
    :data:`EXAMPLE_WIDTH` when there is one), with the stack that sets it."""
    found: dict[str, list[str]] = {}
    for path in sorted(stack_files):
        document = yaml.safe_load(path.read_text()) or {}
        config = document.get("config") or {}
        stack = path.name.removeprefix("Pulumi.").removesuffix(".yaml")
        for key, value in _values(config):
            if value is not None and _scalar_like(value):
                found.setdefault(key, []).append(f"`{_flow(value)}` ({stack})")
    chosen = {}
    for key, shown in found.items():
        fitting = [s for s in shown if len(s.split("` (")[0]) <= EXAMPLE_WIDTH]
        chosen[key] = fitting[0] if fitting else min(shown, key=len)
    return chosen


# --- the page --------------------------------------------------------------------------


def _row(key: str, field: FieldInfo, spellings: list[str], seen: Mapping[str, str]) -> Row:
    shown = f"`{key}`"
    if len(spellings) > 1:
        shown += " (or " + ", ".join(f"`{s}`" for s in spellings[1:]) + ")"
    example = "" if _is_model(_unwrap(field.annotation)) else seen.get(key, "")
    if not example and field.examples:
        example = f"`{_flow(_plain(field.examples[0]))}`"
    return Row(shown, _type(field), _default(field), _prose(field.description or ""), example)


def rows(stack_files: Iterable[Path]) -> tuple[list[Row], list[Row]]:
    """The stack file's rows and the runtime settings' rows."""
    seen = examples(stack_files)
    stack = [_row(key, field, spellings, seen) for key, field, spellings, _ in _stack_fields()]
    stack.append(
        Row(f"`{KEPT_KEY}`", "path", "unset", _prose(KEPT_DESCRIPTION), seen.get(KEPT_KEY, ""))
    )
    runtime = [Row(f"`{RUNTIME_KEY}`", "object", "each key's default", _prose(RUNTIME_DESCRIPTION))]
    runtime += [_row(k, f, s, seen) for k, f, s in walk(RuntimeSettings, RUNTIME_KEY)]
    return stack, runtime


def _table(rows: Iterable[Row]) -> list[str]:
    lines = ["| key | type | default | description | example |", "|---|---|---|---|---|"]
    for row in rows:
        cells = (row.key, row.type, row.default, row.description, row.example)
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return lines


INTRO = """\
# Stack-file reference

<!-- Generated by scripts/reference from the models (automation/config/reference.py); edit the
Field(description=...) of the model, not this page. -->

Every key a stack file (`stacks/Pulumi.<stack>.yaml`) may hold under `config:`, as you
write it: `a.b` is key `b` inside the mapping `a`, `a[].b` is key `b` of each item of
the list `a`, and `<name>` is a key you choose. An example is the value a stack file in
`stacks/` gives the key (the stack in brackets). The rules between keys (subnets inside
their VPC, one subnet per AZ, an odd number of members...) are checked when the stack
is loaded, each refused in one sentence naming the key.
"""


def _group(rows: list[Row], key: str) -> list[Row]:
    return [r for r in rows if r.key.startswith((f"`{key}.", f"`{key}`"))]


def reference(stack_files: Iterable[Path]) -> str:
    """The whole page, with examples from ``stack_files``."""
    stack, runtime = rows(stack_files)
    nested = {CLUSTER_KEY, MIGRATION_KEY}
    top = [r for r in stack if not any(r.key.startswith(f"`{k}.") for k in nested)]
    lines = [INTRO, "## Stack file", ""]
    lines += _table(top)
    for key in (CLUSTER_KEY, MIGRATION_KEY):
        lines += ["", f"### `{key}`", ""]
        lines += _table([r for r in _group(stack, key) if r.key != f"`{key}`"])
    lines += ["", "## Runtime settings", ""]
    lines += _table(runtime)
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    """``scripts/reference``: write :data:`PAGE` under the project directory ``argv[0]``."""
    project = Path(argv[0]) if argv else Path.cwd()
    page = project / PAGE
    page.write_text(reference((project / "stacks").glob("Pulumi.*.yaml")))
    print(f"wrote {page}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
