"""The program entry's plumbing: read Pulumi config into the typed model, pick the builder.

``__main__.py`` stays thin and calls :func:`main`; the offline renderer runs that same
``__main__.py``. Components never read config: only this module does.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pulumi
import yaml

from components import collector, imports, kept_inputs, kept_tags, own_tags, sdk_debug
from components.contract import etcd_volumes, kept_file, registry
from components.contract.engine_vars import RECORD_ONLY_VAR, RECORD_VAR, RUN_VAR
from components.contract.keys import (
    CLUSTER_KEY,
    MIGRATION_KEY,
    PHASE_KEY,
    REGION_KEY,
    SCENARIO_KEY,
    SKIP_PROGRESS_KEY,
)
from components.contract.loading import load_config
from components.contract.model_base import ConfigError
from components.contract.models import StackConfig
from components.contract.progress import (
    BY_HAND,
    PROGRESS_OUTPUT,
    ProgressError,
    outputs_progress,
    parse_record,
    settle,
)
from components.contract.run_marker import competing_run, state_dir

PHASE_OUTPUT = "phase"  # every scenario exports the phase it built


def read_config() -> StackConfig:
    """The stack's ``kubeshift:*`` and ``aws:region`` values, validated."""
    values: dict[str, Any] = {}
    keys = (SCENARIO_KEY, PHASE_KEY, CLUSTER_KEY, MIGRATION_KEY, REGION_KEY, SKIP_PROGRESS_KEY)
    for key in (*keys, kept_file.KEPT_KEY):
        namespace, name = key.split(":", 1)
        value = pulumi.Config(namespace).get(name)
        if value is not None:
            values[key] = value
    if kept_file.KEPT_KEY in values:
        values = kept_file.resolve(values, stack_config_dir())
    return load_config(values)


def stack_config_dir() -> Path:
    """Where the project keeps its stack files (``stackConfigDir`` in ``Pulumi.yaml``),
    against which a kept file's name (``kubeshift:kept``) is read."""
    root = Path(pulumi.runtime.get_root_directory() or ".")
    try:
        project = yaml.safe_load((root / "Pulumi.yaml").read_text()) or {}
    except (OSError, yaml.YAMLError):
        project = {}
    configured = project.get("stackConfigDir") if isinstance(project, dict) else None
    return root / configured if isinstance(configured, str) else root


def build(config: StackConfig) -> dict[str, Any]:
    """Declare the scenario's infrastructure for the configured phase; its outputs.

    The keys are checked against the scenario's outputs model, which the steps read:
    an output the model does not declare would never reach them.
    """
    spec = registry.spec(config.scenario)
    outputs = registry.builder(spec)(config)
    undeclared = sorted(set(outputs) - set(spec.outputs.model_fields))
    if undeclared:
        raise pulumi.RunError(
            f"The {spec.id} program exports {', '.join(undeclared)}, which "
            f"{spec.outputs.__name__} does not declare; add them to the model."
        )
    return outputs


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


READ_STACK_OUTPUTS = "pulumi:pulumi:readStackOutputs"


READ_ATTEMPTS = 8
TORN_READ = "failed to load checkpoint"
"""A file backend's checkpoint read while the engine rewrites it: gocloud's fileblob
rewrites the ``.attrs`` sidecar in place (truncate, then write), so a concurrent read
decodes an empty file (``EOF``). The engine writes a checkpoint as an update starts,
which is exactly when the program reads its outputs; reading again a moment later
sees the whole file."""


def read_own_outputs() -> dict[str, Any] | None:
    """This stack's outputs as its last update left them; None when rendered offline.

    A synchronous invoke of the engine's builtin provider, so the check below runs
    before the program declares any resource. The offline renderer's mocks answer
    with no stack name: there is no stack to read, and nothing to check. A torn read
    of a file backend's checkpoint (:data:`TORN_READ`) is read again.
    """
    name = f"{pulumi.get_organization()}/{pulumi.get_project()}/{pulumi.get_stack()}"
    for attempt in range(1, READ_ATTEMPTS + 1):
        try:
            result = pulumi.runtime.invoke(READ_STACK_OUTPUTS, {"name": name})
            break
        except Exception as exc:  # the SDK raises a bare Exception with the engine's text
            if TORN_READ not in str(exc) or attempt == READ_ATTEMPTS:
                raise
            time.sleep(0.1 * attempt)
    value = result.value or {}
    if "name" not in value:
        return None
    return dict(value.get("outputs") or {})


def check_progress(
    config: StackConfig, outputs: dict[str, Any] | None
) -> tuple[StackConfig | None, dict[str, Any] | None]:
    """The config to build (None: build nothing) and the ``progress`` output (None offline).

    A record-only update builds the phase the stack last deployed, whatever
    ``kubeshift:phase`` says now, or nothing on a stack never deployed; any other
    update of a phase whose earlier phases are not recorded as finished stops here,
    before a single resource is declared. ``outputs``: the stack's (None offline).
    """
    if outputs is None:
        return config, None
    by = f"kubeshift run {os.environ[RUN_VAR]}" if os.environ.get(RUN_VAR) else BY_HAND
    try:
        progress = outputs_progress(outputs)
        added = parse_record(os.environ.get(RECORD_VAR))
        if os.environ.get(RECORD_ONLY_VAR) == "1":
            # The ``phase`` output is what the last successful update deployed (a stack
            # from before the progress record has it too); none: never deployed.
            deployed = outputs.get(PHASE_OUTPUT)
            built = config.model_copy(update={"phase": deployed}) if deployed else None
            return built, progress.with_record(added).as_output()
        settled, skipped = settle(
            progress,
            config.phase_ids,
            config.phase,
            stack=pulumi.get_stack(),
            added=added,
            by=by,
            skip_for=config.skip_progress_check,
        )
    except ProgressError as exc:
        raise pulumi.RunError(str(exc)) from None
    if skipped:
        pulumi.log.warn(
            f"{SKIP_PROGRESS_KEY} lets phase '{config.phase}' go ahead without: "
            f"{', '.join(skipped)}; the stack records this override."
        )
    return config, settled.as_output()


def main() -> None:
    """Build the scenario's top component for the configured phase and export outputs."""
    sdk_debug.quiet_sdk_debug()
    collector.collect_rarely()
    refuse_update_during_a_run()
    try:
        config = read_config()
    except ConfigError as exc:
        # RunError: the engine prints the one-sentence message without a traceback.
        raise pulumi.RunError(str(exc)) from None
    adopting = imports.apply(config.phase, config.phase_ids[0])
    cluster = config.cluster
    own_tags.apply(  # before the kept ones, which it keeps
        own=cluster.own_tags, legacy=cluster.legacy_tags, autoscaler=cluster.autoscaler_tags
    )
    kept_tags.apply(config.cluster.kept_tags)
    kept_inputs.apply(
        kept_inputs.merged(config.cluster.kept_inputs, adopting.kept_inputs if adopting else {})
    )
    own = read_own_outputs()
    built, progress = check_progress(config, own)
    if built is None:
        outputs: dict[str, Any] = {}
    else:
        volumes = etcd_volumes.declared(built)
        lost = etcd_volumes.refusal(etcd_volumes.recorded(own or {}), volumes)
        if lost:
            raise pulumi.RunError(lost)
        outputs = build(built)
        outputs[etcd_volumes.ETCD_VOLUMES_OUTPUT] = {k: v.model_dump() for k, v in volumes.items()}
    if progress is not None:
        outputs[PROGRESS_OUTPUT] = progress
    for key, value in outputs.items():
        pulumi.export(key, value)
