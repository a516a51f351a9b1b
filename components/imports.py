"""Adoption's door into the program: import live resources instead of creating them.

``kubeshift adopt`` finds the live resource behind each resource the program declares
at the first phase, writes the ids to a file and points :data:`IMPORTS_VAR` at it for
the engine commands it runs. :func:`apply` then gives each listed resource Pulumi's
``import`` option, so the engine reads it from the cloud and takes it into the state —
or, when its live attributes differ from the declared ones, refuses it (the preview
shows each difference) — instead of creating a second one. Without the variable the
program is unchanged; a by-hand ``pulumi preview`` with it set shows the same plan.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pulumi
from pydantic import BaseModel, ConfigDict, ValidationError

from components.contract.cluster_models import KeptInput
from components.contract.engine_vars import IMPORTS_VAR


def key(type_: str, name: str) -> str:
    """How a resource is named in an import file: ``<type token>::<logical name>``."""
    return f"{type_}::{name}"


class ImportFile(BaseModel):
    """The ids to import, for one stack at one phase."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = 1
    phase: str
    imports: dict[str, str]
    """:func:`key` -> the id pulumi-aws's importer takes."""
    ignore_changes: dict[str, list[str]] = {}
    """:func:`key` -> properties whose difference the user accepted as an in-place
    update (and attributes only the provider keeps, which AWS cannot report)."""
    kept_inputs: dict[str, dict[str, KeptInput]] = {}
    """Live values to declare while the imports are previewed, as the stack file's
    ``kubeshift:cluster.kept_inputs`` will once adoption writes them there."""


def load(path: str | Path) -> ImportFile:
    """The import file at ``path``; one sentence when it cannot be used."""
    try:
        return ImportFile.model_validate(json.loads(Path(path).read_text()))
    except (OSError, ValueError, ValidationError) as exc:
        raise pulumi.RunError(
            f"{IMPORTS_VAR} names {path}, which is not a kubeshift import file ({exc})."
        ) from None


def apply(phase: str, first_phase: str) -> ImportFile | None:
    """Give every resource the import file lists the ``import`` option (and its
    accepted ``ignore_changes``); None when :data:`IMPORTS_VAR` is not set.

    Adoption is of the first phase: a file for another phase, or a stack at another
    phase, is refused before any resource is declared.
    """
    path = os.environ.get(IMPORTS_VAR)
    if not path:
        return None
    plan = load(path)
    if plan.phase != first_phase or phase != first_phase:
        raise pulumi.RunError(
            f"Adoption imports resources at the first phase, {first_phase!r}; the stack is "
            f"at {phase!r} and the import file is for {plan.phase!r}."
        )

    def transform(
        args: pulumi.ResourceTransformationArgs,
    ) -> pulumi.ResourceTransformationResult | None:
        name = key(args.type_, args.name)
        found = plan.imports.get(name)
        ignored = plan.ignore_changes.get(name)
        if found is None and not ignored:
            return None
        extra = pulumi.ResourceOptions(import_=found, ignore_changes=ignored)
        return pulumi.ResourceTransformationResult(
            args.props, pulumi.ResourceOptions.merge(args.opts, extra)
        )

    pulumi.runtime.register_stack_transformation(transform)
    return plan
