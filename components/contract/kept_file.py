"""``kubeshift:kept``: the settings adoption keeps from a large live cluster, in a file
beside the stack file.

Pulumi hands a stack's whole config to its program in one environment variable,
``PULUMI_CONFIG`` (the Python SDK reads it there: ``pulumi/runtime/config.py``), and
Linux refuses to start a process with any one environment string longer than
``MAX_ARG_STRLEN``, 128 KiB: the engine's start of the program then fails with
``argument list too long`` (pulumi/pulumi#20402 is the same limit met by the policy
plugin). A cluster another tool built with many groups keeps far more than that
(kops's boot script is kilobytes per launch template), so ``adopt --write-config``
moves the kept sections (:data:`SECTIONS`) to ``Pulumi.<stack>.kept.yaml`` and names
that file in ``kubeshift:kept``; every reader of the stack merges it back
(:func:`merge`), so the program and kubeshift see one cluster block either way.

A file name is relative to the stack file's directory; :func:`resolve` makes it
absolute where the stack file is read, so values that travel on (the sandbox's
workspace, the offline renderer) still find it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from components.contract.model_base import ConfigError
from components.contract.user_files import load_yaml_document

KEPT_KEY = "kubeshift:kept"
SECTIONS = ("names", "descriptions", "user_data", "kept_tags", "kept_inputs")
"""The cluster block's sections adoption keeps from what runs and may keep aside
(``adopt --keep-live`` writes ``kept_inputs`` to the kept file when the stack names one)."""

ENV_LIMIT = 128 * 1024
"""Linux's ``MAX_ARG_STRLEN`` (32 pages): the longest one environment string may be,
``PULUMI_CONFIG=`` and its closing NUL included."""
ENV_NAME = "PULUMI_CONFIG="
SPLIT_AT = ENV_LIMIT // 2
"""A proposal whose config passes this many bytes keeps its sections aside, leaving
room for what ``--keep-live`` and later edits add."""


class KeptFileError(ValueError):
    """One sentence on a kept file that cannot be read or does not fit the stack."""


def kept_file_name(stack: str) -> str:
    """The kept file ``adopt --write-config`` writes beside ``stack``'s proposal."""
    return f"Pulumi.{stack}.kept.yaml"


def config_env_value(values: Mapping[str, Any]) -> str:
    """The ``PULUMI_CONFIG`` the engine gives the program for ``values``: a JSON object
    of key to string, an object value as its JSON text, both written by Go's
    ``encoding/json`` (``<``, ``>`` and ``&`` as six-byte escapes, non-ASCII as UTF-8)."""
    as_strings = {
        key: value if isinstance(value, str) else _go_json(value) for key, value in values.items()
    }
    return _go_json(as_strings)


def config_env_bytes(values: Mapping[str, Any]) -> int:
    """The length of the ``PULUMI_CONFIG=…`` string, its closing NUL included."""
    return len(ENV_NAME) + len(config_env_value(values).encode()) + 1


_GO_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def _go_json(value: Any) -> str:
    """``value`` as Go's ``json.Marshal`` writes it (compact, HTML-safe escapes)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    for character, escape in _GO_ESCAPES.items():
        text = text.replace(character, escape)
    return text


def largest_sections(values: Mapping[str, Any], cluster_key: str, count: int = 3) -> str:
    """``kubeshift:cluster.user_data (72 KiB), …``: what fills the config most."""
    sizes = {
        key: len(json.dumps(value).encode()) for key, value in values.items() if key != cluster_key
    }
    cluster = values.get(cluster_key)
    if isinstance(cluster, Mapping):
        sizes |= {
            f"{cluster_key}.{name}": len(json.dumps(value).encode())
            for name, value in cluster.items()
        }
    top = sorted(sizes.items(), key=lambda kv: -kv[1])[:count]
    return ", ".join(f"{key} ({size / 1024:.0f} KiB)" for key, size in top)


def resolve(values: dict[str, Any], stack_dir: Path) -> dict[str, Any]:
    """``values`` with a relative ``kubeshift:kept`` made absolute against ``stack_dir``."""
    name = values.get(KEPT_KEY)
    if not isinstance(name, str) or not name or Path(name).is_absolute():
        return values
    return {**values, KEPT_KEY: os.path.abspath(stack_dir / name)}  # its name, not a link's


def merge(values: Mapping[str, Any], cluster_key: str) -> dict[str, Any]:
    """``values`` with the kept file's sections in the cluster block and no
    ``kubeshift:kept``; unchanged when it names none."""
    if KEPT_KEY not in values:
        return dict(values)
    name = values[KEPT_KEY]
    if not isinstance(name, str) or not name:
        raise KeptFileError(f"{KEPT_KEY} must name a file beside the stack file.")
    path = Path(name)
    sections = _read(path)
    cluster = values.get(cluster_key)
    if isinstance(cluster, str):  # as the engine passes an object: its JSON text
        try:
            cluster = json.loads(cluster)
        except json.JSONDecodeError:
            raise KeptFileError(f"{cluster_key} is not a JSON object.") from None
    if not isinstance(cluster, Mapping):
        raise KeptFileError(f"{KEPT_KEY} names {path.name}, but the stack has no {cluster_key}.")
    twice = sorted(set(sections) & set(cluster))
    if twice:
        raise KeptFileError(
            f"{cluster_key}.{twice[0]} is given both in the stack file and in {path.name}; "
            "keep it in one of them."
        )
    merged = {k: v for k, v in values.items() if k != KEPT_KEY}
    merged[cluster_key] = {**cluster, **sections}
    return merged


def split(values: Mapping[str, Any], cluster_key: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The stack's values without the kept sections, and those sections."""
    cluster = dict(values[cluster_key])
    kept = {name: cluster.pop(name) for name in SECTIONS if name in cluster}
    return {**values, cluster_key: cluster}, kept


def _read(path: Path) -> dict[str, Any]:
    if not path.is_absolute():
        raise KeptFileError(
            f"{KEPT_KEY} {path} was not resolved against the stack file's directory."
        )
    try:
        document = load_yaml_document(path, what="Kept file")
    except ConfigError as exc:
        raise KeptFileError(str(exc)) from None
    if not isinstance(document, dict):
        raise KeptFileError(f"Kept file {path} is not a mapping of {', '.join(SECTIONS)}.")
    unknown = sorted(set(document) - set(SECTIONS))
    if unknown:
        raise KeptFileError(
            f"Kept file {path} holds {unknown[0]!r}; it may hold only {', '.join(SECTIONS)}."
        )
    for section, value in document.items():
        if not isinstance(value, dict):
            raise KeptFileError(f"Kept file {path}: {section} must be a mapping.")
    return document
