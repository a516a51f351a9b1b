"""The program entry's plumbing: read Pulumi config into the typed model, pick the builder.

``__main__.py`` stays thin and calls :func:`main`; the offline renderer runs that same
``__main__.py``. Components never read config: only this module does.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pulumi

from components import phases
from components.config import (
    CLUSTER_KEY,
    MIGRATION_KEY,
    PHASE_KEY,
    REGION_KEY,
    SCENARIO_KEY,
    ConfigError,
    StackConfig,
    load_config,
)
from components.run_marker import RUN_VAR, competing_run, state_dir

Builder = Callable[[StackConfig], dict[str, Any]]


def read_config() -> StackConfig:
    """The stack's ``kubeshift:*`` and ``aws:region`` values, validated."""
    values: dict[str, Any] = {}
    for key in (SCENARIO_KEY, PHASE_KEY, CLUSTER_KEY, MIGRATION_KEY, REGION_KEY):
        namespace, name = key.split(":", 1)
        value = pulumi.Config(namespace).get(name)
        if value is not None:
            values[key] = value
    return load_config(values)


def builders() -> dict[str, Builder]:
    """Scenario id -> function declaring that scenario's infrastructure for a phase."""
    from components import cni_swap, overlay_switch, vpc_move

    return {
        phases.VPC_MOVE: vpc_move.build,
        phases.CNI_SWAP: cni_swap.build,
        phases.OVERLAY_SWITCH: overlay_switch.build,
    }


def refuse_update_during_a_run() -> None:
    """A by-hand update while ``kubeshift run`` migrates this stack stops here, unwritten."""
    if pulumi.runtime.is_dry_run():
        return
    stack = pulumi.get_stack()
    mark = competing_run(state_dir(Path.cwd()), stack, os.environ.get(RUN_VAR))
    if mark is not None:
        raise pulumi.RunError(
            f"Stack '{stack}' is being migrated by `kubeshift run` (pid {mark.pid}); an "
            "update by hand now would race it, so nothing was changed — wait for the run "
            "to finish or stop it with Ctrl-C, then update."
        )


def main() -> None:
    """Build the scenario's top component for the configured phase and export outputs."""
    refuse_update_during_a_run()
    try:
        config = read_config()
    except ConfigError as exc:
        # RunError: the engine prints the one-sentence message without a traceback.
        raise pulumi.RunError(str(exc)) from None
    outputs = builders()[config.scenario](config)
    for key, value in outputs.items():
        pulumi.export(key, value)
