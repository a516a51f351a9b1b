"""Where the project and its stacks are, and how a stack's configuration is loaded.

Every command that reads a stack goes through ``load_stack``: it finds
``stacks/Pulumi.<name>.yaml`` (or an explicit ``--config`` file), validates it with
the Pulumi program's own models (``components.config``) and returns the scenario the
runner will walk. Bad input ends here as a one-sentence ``UserError``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from automation.errors import ConfigError, UserError

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
    return Path(__file__).resolve().parent.parent


def known_stacks(project: Path) -> list[str]:
    prefix, suffix = "Pulumi.", ".yaml"
    return sorted(
        p.name[len(prefix) : -len(suffix)] for p in (project / "stacks").glob("Pulumi.*.yaml")
    )


def stack_path(project: Path, stack: str) -> Path:
    path = project / "stacks" / f"Pulumi.{stack}.yaml"
    if not path.is_file():
        known = ", ".join(known_stacks(project)) or "none"
        raise UserError(f"Stack '{stack}' has no file {path}; known stacks: {known}.")
    return path


@dataclass(frozen=True)
class StackInfo:
    """A validated stack: its name, file, raw config values and typed configuration."""

    name: str
    path: Path
    values: dict[str, Any]
    config: Any

    @property
    def scenario(self) -> str:
        return str(self.config.scenario)

    @property
    def phase(self) -> str:
        return str(self.config.phase)


def load_stack(project: Path, stack: str, config_file: Path | None = None) -> StackInfo:
    """Load and validate a stack file; every problem becomes one-sentence ``UserError``."""
    from components import config as stack_config

    path = config_file if config_file is not None else stack_path(project, stack)
    if not path.is_file():
        raise UserError(f"Config file {path} does not exist.")
    try:
        values = stack_config.load_stack_file(path)
        typed = stack_config.load_config(values)
    except stack_config.ConfigError as exc:
        raise ConfigError(f"{path.name}: {exc}") from exc
    return StackInfo(name=stack, path=path, values=values, config=typed)
