"""Loading a stack file: raw ``kubeshift:*``/``aws:*`` values to a checked :class:`StackConfig`.

Secure values stay masked (:data:`SECRET`); each problem is one :class:`ConfigError`
sentence naming its key."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from components.contract import kept_file, registry
from components.contract.checks import check
from components.contract.cluster_models import ClusterConfig
from components.contract.keys import (
    CLUSTER_KEY,
    KNOWN_KEYS,
    MIGRATION_KEY,
    PHASE_KEY,
    PREFIX,
    REGION_KEY,
    SCENARIO_KEY,
    SKIP_PROGRESS_KEY,
)
from components.contract.model_base import ConfigError
from components.contract.models import MigrationConfig, StackConfig
from components.contract.user_files import (
    load_yaml_document,
)
from components.contract.validation import join, sentence, show

_REGION = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d$")
_M = TypeVar("_M", bound=BaseModel)


def load_config(values: Mapping[str, Any]) -> StackConfig:
    """Validate raw config values (``{"kubeshift:cluster": {...}, "aws:region": ...}``).

    Object values may be dicts or JSON strings (as ``pulumi.Config`` stores them).
    Raises :class:`ConfigError` with a one-sentence message naming the key. A kept
    file (``kubeshift:kept``, made absolute by :func:`load_stack_file`) is merged into
    the cluster block first.
    """
    _check_known_keys(values)
    try:
        values = kept_file.merge(values, CLUSTER_KEY)
    except kept_file.KeptFileError as exc:
        raise ConfigError(kept_file.KEPT_KEY, str(exc)) from None
    scenario = _require_str(values, SCENARIO_KEY)
    if scenario not in registry.ids():
        raise ConfigError(
            SCENARIO_KEY,
            f"{SCENARIO_KEY} {scenario!r} is not a known scenario "
            f"(choose one of {', '.join(registry.ids())}).",
        )
    phase = _require_str(values, PHASE_KEY)
    region = _require_str(values, REGION_KEY)
    if not _REGION.fullmatch(region):
        raise ConfigError(REGION_KEY, f"{REGION_KEY} {region!r} is not an AWS region name.")
    cluster = _parse(ClusterConfig, _require_object(values, CLUSTER_KEY), CLUSTER_KEY)
    migration = _parse(MigrationConfig, _require_object(values, MIGRATION_KEY), MIGRATION_KEY)
    skip = values.get(SKIP_PROGRESS_KEY)
    if skip is not None and not isinstance(skip, str):
        raise ConfigError(SKIP_PROGRESS_KEY, f"{SKIP_PROGRESS_KEY} must be a phase id.")
    phase_ids = registry.spec(scenario).phase_ids(cluster.control_plane.members)
    config = StackConfig.with_phases(
        phase_ids,
        scenario=scenario,
        phase=phase,
        region=region,
        cluster=cluster,
        migration=migration,
        skip_progress_check=skip,
    )
    check(config)
    return config


def load_stack_file(path: str | Path) -> dict[str, Any]:
    """Read ``stacks/Pulumi.<name>.yaml`` into the raw dict :func:`load_config` takes.

    Secure values (``{secure: ...}``) are kept as they are; they never reach a name.
    Unreadable bytes, broken YAML and keys given twice are one sentence naming the file.
    A kept file it names (``kubeshift:kept``) is made absolute, for :func:`load_config`.
    """
    file = Path(path)
    document = load_yaml_document(file, what="Stack file")
    section = (document or {}).get("config") if isinstance(document, dict) else None
    if not isinstance(section, dict):
        raise ConfigError("config", f"Stack file {file} has no 'config:' mapping.")
    return kept_file.resolve(dict(section), file.parent)


def stack_file(stacks_dir: str | Path, stack: str) -> Path:
    """Path of the stack file for ``stack`` under ``stacks_dir``."""
    return Path(stacks_dir) / f"Pulumi.{stack}.yaml"


SECRET = "[secret]"
"""What a ``secure:`` value reads as offline: its ciphertext never reaches a name or a
message, and only the engine (which holds the key) decrypts it."""


def _is_secret(value: Any) -> bool:
    return isinstance(value, Mapping) and set(value) == {"secure"}


def mask_secrets(value: Any) -> Any:
    """``{secure: v1:…}`` anywhere inside ``value`` becomes :data:`SECRET`."""
    if _is_secret(value):
        return SECRET
    if isinstance(value, Mapping):
        return {k: mask_secrets(v) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_secrets(v) for v in value]
    return value


def _refuse_whole_secret(values: Mapping[str, Any], key: str) -> None:
    if _is_secret(values.get(key)):
        _refuse(
            key,
            f"{key} is stored as one secret; keep it plain and make only the sensitive "
            f"fields secret (`pulumi config set --secret --path '{key}.<field>' ...`).",
        )


def _require_str(values: Mapping[str, Any], key: str) -> str:
    _refuse_whole_secret(values, key)
    value = values.get(key)
    if value is None or value == "":
        raise ConfigError(key, f"{key} is required; set it with `pulumi config set {key} ...`.")
    if not isinstance(value, str):
        raise ConfigError(key, f"{key} must be a string (got {show(value)}).")
    return value


def _require_object(values: Mapping[str, Any], key: str) -> dict[str, Any]:
    _refuse_whole_secret(values, key)
    value = values.get(key)
    if value is None:
        raise ConfigError(key, f"{key} is required; set it with `pulumi config set --path`.")
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ConfigError(key, f"{key} is not a valid JSON object ({exc.msg}).") from exc
    if not isinstance(value, dict):
        raise ConfigError(key, f"{key} must be an object (got {show(value)}).")
    return dict(mask_secrets(value))


def _parse(model: type[_M], data: dict[str, Any], key: str) -> _M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise ConfigError(join(key, error["loc"]), sentence(model, key, error)) from None


def _check_known_keys(values: Mapping[str, Any]) -> None:
    """Every ``kubeshift:`` key is one kubeshift reads: a misspelt block is not ignored."""
    for key in values:
        if key.startswith(PREFIX) and key not in KNOWN_KEYS:
            guess = difflib.get_close_matches(key, KNOWN_KEYS, n=1, cutoff=0.6)
            hint = f"did you mean {guess[0]!r}?" if guess else f"known: {', '.join(KNOWN_KEYS)}."
            _refuse(key, f"{key} is not a kubeshift setting; {hint}")


def _refuse(key: str, message: str) -> None:
    raise ConfigError(key, message)
