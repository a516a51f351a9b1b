"""Files a user names (stack and kept files, the journal, manifests, a kubeconfig), read
so that no file can hang or exhaust kubeshift: a regular file of bounded size, its YAML
aliases bounded in what they expand to; anything else is one sentence.

A FIFO would block a plain read until someone writes to it, a device such as
``/dev/zero`` never ends, and a YAML alias bomb ("billion laughs": nine anchors, each a
list of nine aliases of the one before) is a few hundred bytes that expand to 9**9
values once walked. The file is opened without blocking and checked on its open
descriptor, so it cannot be swapped between the check and the read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import yaml

from components.contract.model_base import ConfigError

MAX_BYTES = 32 * 1024 * 1024
"""Largest file kubeshift reads whole: far above any real stack file (a 72-group kops
cluster's kept file is about 120 kB) or journal."""
MAX_VALUES = 1_000_000
"""Most values a YAML document may expand to, aliases walked (an alias bomb passes it;
a real manifest, Calico's included, has tens of thousands)."""

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class UnreadableFile(ValueError):
    """One sentence on why a file cannot be read."""


def read_bounded(path: Path, what: str, limit: int = MAX_BYTES) -> bytes:
    """The bytes of the regular file at ``path``; ``what`` names it in the sentence of
    :class:`UnreadableFile` (missing, a directory, not a regular file, over ``limit``
    bytes, or unreadable, a symlink loop included). :class:`FileNotFoundError` is kept
    apart, for callers to whom a missing file means something."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise
    except IsADirectoryError:
        raise UnreadableFile(f"{what} {path} is a directory, not a file.") from None
    except OSError as exc:
        raise UnreadableFile(f"{what} {path} cannot be read ({exc.strerror}).") from None
    try:
        mode = os.fstat(descriptor).st_mode
        if stat.S_ISDIR(mode):
            raise UnreadableFile(f"{what} {path} is a directory, not a file.")
        for test, kind in _KINDS:
            if test(mode):
                raise UnreadableFile(f"{what} {path} is {kind}, not a regular file.")
        with os.fdopen(descriptor, "rb", closefd=False) as stream:
            data = stream.read(limit + 1)
    except OSError as exc:
        raise UnreadableFile(f"{what} {path} cannot be read ({exc.strerror}).") from None
    finally:
        os.close(descriptor)
    if len(data) > limit:
        raise UnreadableFile(
            f"{what} {path} is larger than {limit // (1024 * 1024)} MiB, more than kubeshift "
            "reads; is it the right file?"
        )
    return data


class AliasBomb(yaml.YAMLError):
    """A document whose aliases expand past :data:`MAX_VALUES`."""

    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


class BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a document that expands past :data:`MAX_VALUES`
    values, each alias counted as the values it stands for."""

    def compose_document(self) -> Any:
        node = super().compose_document()  # type: ignore[no-untyped-call]
        refuse_expansion(node)
        return node


def refuse_expansion(node: Any) -> None:
    """Raise :class:`AliasBomb` where a composed document expands past :data:`MAX_VALUES`
    values: every node counts once for each place it appears, an alias as the whole node
    it names; each node is weighed once (a node inside its own anchor counts as one)."""
    sizes: dict[int, int] = {}
    entered: set[int] = set()
    stack: list[tuple[Any, bool]] = [(node, False)] if node is not None else []
    while stack:
        current, children_weighed = stack.pop()
        if children_weighed:
            size = 1 + sum(sizes.get(id(c), 1) for c in _children(current))
            sizes[id(current)] = size
            if size > MAX_VALUES:
                raise AliasBomb(current.start_mark.line + 1)
        elif id(current) not in entered:
            entered.add(id(current))
            stack.append((current, True))
            stack.extend((c, False) for c in _children(current) if id(c) not in entered)


def _children(node: Any) -> list[Any]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def alias_bomb_sentence(what: str, path: Path, bomb: AliasBomb) -> str:
    return (
        f"{what} {path} expands past {MAX_VALUES:,} values through its aliases (line "
        f"{bomb.line}); write the values out instead of aliasing them."
    )


_PARSER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's parser where PyYAML was built with it (its wheels are): a 170 kB kept file
parses in 0.03 s instead of 0.26 s, in every command and every run of the program."""


class _UniqueKeyLoader(_PARSER):  # type: ignore[misc]
    """YAML that refuses a key given twice in one mapping (PyYAML keeps the last); what
    its aliases expand to is bounded by :func:`refuse_expansion` once composed."""


def _unique_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)  # type: ignore[no-untyped-call]
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"key {key!r} is given twice", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node)


_UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _unique_mapping,  # type: ignore[arg-type]
)


def load_yaml_document(file: Path, *, what: str) -> Any:
    """A YAML file read strictly: a regular file of bounded size, UTF-8, valid, no key
    given twice, aliases bounded; else one sentence."""
    try:
        data = read_bounded(file, what)
    except FileNotFoundError:
        raise ConfigError("stack", f"{what} {file} does not exist.") from None
    except UnreadableFile as exc:
        raise ConfigError("stack", str(exc)) from None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ConfigError("stack", f"{what} {file} is UTF-16; save it as UTF-8.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            "stack", f"{what} {file} is not UTF-8 text (byte {exc.start}); save it as UTF-8."
        ) from None
    try:
        return _strict_load(text)
    except AliasBomb as bomb:
        raise ConfigError("stack", alias_bomb_sentence(what, file, bomb)) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}" if mark else ""
        problem = exc.problem or exc.context or "invalid YAML"
        raise ConfigError("stack", f"{what} {file} is not valid YAML{where}: {problem}.") from None
    except yaml.YAMLError as exc:
        raise ConfigError("stack", f"{what} {file} is not valid YAML ({exc}).") from None


def _strict_load(text: str) -> Any:
    """One document composed, its expansion bounded, then built (unique keys)."""
    loader = _UniqueKeyLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        refuse_expansion(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()
