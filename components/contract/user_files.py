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

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._sizes: dict[int, int] = {}

    def compose_document(self) -> Any:
        self._sizes = {}
        return super().compose_document()  # type: ignore[no-untyped-call]

    def compose_node(self, parent: Any, index: Any) -> Any:
        node = super().compose_node(parent, index)  # type: ignore[no-untyped-call]
        if node is None:
            return node
        if id(node) not in self._sizes:  # an alias's node is already counted
            self._sizes[id(node)] = 1 + sum(self._sizes.get(id(c), 1) for c in _children(node))
        if self._sizes[id(node)] > MAX_VALUES:
            raise AliasBomb(node.start_mark.line + 1)
        return node


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


class _UniqueKeyLoader(BoundedLoader):
    """YAML that refuses a key given twice in one mapping (PyYAML keeps the last), and
    aliases that expand past what kubeshift reads."""


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
        return yaml.load(text, Loader=_UniqueKeyLoader)
    except AliasBomb as bomb:
        raise ConfigError("stack", alias_bomb_sentence(what, file, bomb)) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}" if mark else ""
        problem = exc.problem or exc.context or "invalid YAML"
        raise ConfigError("stack", f"{what} {file} is not valid YAML{where}: {problem}.") from None
    except yaml.YAMLError as exc:
        raise ConfigError("stack", f"{what} {file} is not valid YAML ({exc}).") from None
