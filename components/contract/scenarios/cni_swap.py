"""cni-swap (seed 000): swap the CNI behind a mirror cluster, moving traffic by DNS."""

from __future__ import annotations

from typing import TYPE_CHECKING

from components.contract.registry import NetworkSlot, ScenarioSpec
from components.contract.scenarios.single_vpc import ClusterOutputs, SingleVpcOutputs

if TYPE_CHECKING:
    from components.contract.models import StackConfig

ID = "cni-swap"

BASELINE = "baseline"
CERTIFICATES = "certificates"
MIRROR_CLUSTER = "mirror-cluster"
COPY = "copy"
DNS_TO_MIRROR = "dns-to-mirror"
CNI_SWAP = "cni-swap"
DNS_TO_PRIMARY = "dns-to-primary"
TEARDOWN_MIRROR = "teardown-mirror"

PHASES = (
    BASELINE,
    CERTIFICATES,
    MIRROR_CLUSTER,
    COPY,
    DNS_TO_MIRROR,
    CNI_SWAP,
    DNS_TO_PRIMARY,
    TEARDOWN_MIRROR,
)


class MirrorOutputs(ClusterOutputs):
    """The mirror cluster, while it lives, and its private zone."""

    zone_id: str | None = None


class CniSwapOutputs(SingleVpcOutputs):
    """The stack outputs of a cni-swap phase."""

    certificate_arns: dict[str, str] = {}
    """Certificate domain -> ARN (issued from the certificates phase on)."""
    mirror_node_security_group_ids: list[str] = []
    mirror: MirrorOutputs | None = None
    worker_generations: list[str] = []
    """The primary's worker generations at this phase, oldest first."""


def check(config: StackConfig) -> list[NetworkSlot]:
    """The mirror block is required: it names the mirror's zone."""
    from components.contract.keys import MIGRATION_KEY
    from components.contract.model_base import ConfigError

    if config.migration.mirror is None:
        key = f"{MIGRATION_KEY}.mirror"
        raise ConfigError(key, f"{key} is required for cni-swap.")
    return []


SPEC = ScenarioSpec(
    id=ID,
    summary="Swap the CNI behind a mirror cluster, moving traffic by DNS (seed 000).",
    phases=lambda members: PHASES,
    outputs=CniSwapOutputs,
    builder="components.cni_swap:build",
    steps="automation.scenarios.cni_swap:scenario",
    check=check,
    member_copies=2,
)
