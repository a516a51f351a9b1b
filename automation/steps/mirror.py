"""cni-swap steps (seed 000): the mirror's settings, which every ``mirror_*`` step reads.

What to copy, how to rewrite images and which DaemonSets are the old and new CNI are
runtime settings (:class:`MirrorSettings`, read from ``kubeshift:runtime.mirror``); the
mirror's DNS zone and dependency security groups come from the stack config
(``kubeshift:migration.mirror``). The steps are thin adapters from a ``HookContext``,
one module per concern: ``mirror_copy`` (to ``automation.kube.copy``), ``mirror_dns``
(to ``automation.steps.service_dns`` and ``automation.aws.dns``), ``mirror_cronjobs``,
``mirror_cni`` (to ``automation.kube.cni``, and the primary's new generation),
``mirror_grants`` (to ``automation.aws.grants``) and ``mirror_addresses``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from automation.config.mirror_settings import MirrorSettings
from automation.core.errors import ConfigError, UserError
from automation.kube.copy.options import CopyOptions
from automation.model.context import HookContext

PRIMARY = "primary"
MIRROR = "mirror"
SETTINGS_KEY = "kubeshift:runtime.mirror"


def mirror_settings(ctx: HookContext) -> MirrorSettings:
    """The mirror settings of this run (defaults when the stack sets none)."""
    return ctx.settings.mirror


def parse_settings(raw: Mapping[str, Any] | None) -> MirrorSettings:
    """Validate a raw ``kubeshift:runtime.mirror`` mapping; one-sentence ``ConfigError``."""
    try:
        return MirrorSettings.model_validate(raw or {})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"{SETTINGS_KEY}.{where}: {first['msg']}.") from exc


def copy_options(ctx: HookContext) -> CopyOptions:
    settings = mirror_settings(ctx)
    if not settings.namespaces:
        raise UserError(
            f"{SETTINGS_KEY}.namespaces is empty; list the namespaces to copy to the mirror."
        )
    try:
        return CopyOptions(
            namespaces=settings.namespaces,
            kinds=settings.kinds,
            registry_rewrites=settings.registry_rewrites,
            label_selector=settings.label_selector,
            stateful=settings.stateful,
        )
    except ValidationError as exc:
        raise ConfigError(f"{SETTINGS_KEY}: {exc.errors()[0]['msg']}.") from exc


def expected_workers(ctx: HookContext) -> int:
    """Workers one generation of the cluster's pools starts (mirror and new generation alike)."""
    cluster = ctx.stack_config.cluster
    return sum(pool.starting_nodes(cluster.network.azs) for pool in cluster.worker_pools)
