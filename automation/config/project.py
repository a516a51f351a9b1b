"""Where the project and its stacks are, and how a stack's configuration is loaded.

Every command that reads a stack goes through ``load_stack``: it finds
``stacks/Pulumi.<name>.yaml`` (or an explicit ``--config`` file), validates it with
the Pulumi program's own models (``components.contract.loading``) and returns the scenario the
runner will walk. Bad input ends here as a one-sentence ``UserError``.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from automation.core.errors import ConfigError, UserError

if TYPE_CHECKING:
    from components.contract.models import StackConfig

DEFAULT_STACK = "local"


def project_dir() -> Path:
    """The directory holding ``Pulumi.yaml``: ``$KUBESHIFT_PROJECT_DIR``, cwd upward, or ours."""
    override = os.environ.get("KUBESHIFT_PROJECT_DIR")
    if override:
        return Path(override).resolve()
    here = Path.cwd().resolve()
    for candidate in (here, *here.parents):
        if (candidate / "Pulumi.yaml").is_file() and (candidate / "stacks").is_dir():
            return candidate
    return Path(__file__).resolve().parents[2]


def project_name(project: Path) -> str:
    """The Pulumi project's name (``Pulumi.yaml``'s ``name``): where a ``file://``
    backend keeps its stacks."""
    import yaml

    try:
        name = yaml.safe_load((project / "Pulumi.yaml").read_text()).get("name")
    except (OSError, yaml.YAMLError, AttributeError) as exc:
        raise ConfigError(f"{project / 'Pulumi.yaml'} names no project ({exc}).") from None
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{project / 'Pulumi.yaml'} names no project.")
    return name


def known_stacks(project: Path) -> list[str]:
    prefix, suffix = "Pulumi.", ".yaml"
    return sorted(
        p.name[len(prefix) : -len(suffix)] for p in (project / "stacks").glob("Pulumi.*.yaml")
    )


# Pulumi's own rule for stack names: letters, digits, '-', '_' and '.'.
_STACK_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$")


def check_stack_name(stack: str) -> str:
    """A stack name names a file under stacks/ and nothing outside it."""
    if not _STACK_NAME.fullmatch(stack) or stack in (".", ".."):
        raise UserError(
            f"{stack!r} is not a stack name (letters, digits, '-', '_' and '.'); "
            "see `ls stacks/` for the known stacks."
        )
    return stack


def stack_path(project: Path, stack: str) -> Path:
    check_stack_name(stack)
    path = project / "stacks" / f"Pulumi.{stack}.yaml"
    if path.is_dir():
        raise UserError(f"Stack file {path} is a directory, not a file.")
    if not path.exists() and not path.is_symlink():
        known = ", ".join(known_stacks(project)) or "none"
        raise UserError(f"Stack '{stack}' has no file {path}; known stacks: {known}.")
    return path


@dataclass(frozen=True)
class StackInfo:
    """A validated stack: its name, file, raw config values and typed configuration."""

    name: str
    path: Path
    values: dict[str, Any]
    config: StackConfig

    @property
    def scenario(self) -> str:
        return str(self.config.scenario)

    @property
    def phase(self) -> str:
        return str(self.config.phase)


def load_stack(project: Path, stack: str, config_file: Path | None = None) -> StackInfo:
    """Load and validate a stack file — the program's config and kubeshift's runtime
    settings alike; every problem becomes a one-sentence ``UserError``."""
    from automation.config.settings import load_runtime_settings
    from components.contract import checks as stack_checks
    from components.contract import loading as stack_loading
    from components.contract import model_base as stack_model_base
    path = config_file if config_file is not None else stack_path(project, stack)
    if not path.exists() and not path.is_symlink():  # a FIFO or a loop: the reader says
        raise UserError(f"Config file {path} does not exist.")
    try:
        values = stack_loading.load_stack_file(path)
        typed = stack_loading.load_config(values)
    except stack_model_base.ConfigError as exc:
        raise ConfigError(f"{path.name}: {exc}") from exc
    try:
        load_runtime_settings(values)
    except ConfigError as exc:
        raise ConfigError(f"{path.name}: {exc}") from None
    _check_config_fits(path, values)
    for warning in stack_checks.config_warnings(typed):
        _warn_once(f"{path.name}: {warning}")
    return StackInfo(name=stack, path=path, values=values, config=typed)


_warned: set[str] = set()


def _warn_once(text: str) -> None:
    """Say ``text`` on the log once per process (a command loads its stack more than once)."""
    if text not in _warned:
        _warned.add(text)
        logging.getLogger("kubeshift").warning("%s", text)


def _check_config_fits(path: Path, values: dict[str, Any]) -> None:
    """Refuse, before the engine starts, a config the engine could not hand its program."""
    from components.contract import kept_file
    from components.contract.keys import CLUSTER_KEY

    size = kept_file.config_env_bytes(values)
    if size > kept_file.ENV_LIMIT:
        raise ConfigError(
            f"{path.name}: the stack's config is {size / 1024:.0f} KiB, and Pulumi hands it "
            f"to the program in one environment variable of at most "
            f"{kept_file.ENV_LIMIT // 1024} KiB (largest: "
            f"{kept_file.largest_sections(values, CLUSTER_KEY)}); keep "
            f"{', '.join(kept_file.SECTIONS)} in a file named by {kept_file.KEPT_KEY} "
            "(`kubeshift adopt --write-config` writes one for a cluster this large)."
        )
