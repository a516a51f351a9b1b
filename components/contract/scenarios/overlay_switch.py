"""overlay-switch (seed 002): Calico from IPIP to native routing once every route exists."""

from __future__ import annotations

from typing import TYPE_CHECKING

from components.contract.registry import NetworkSlot, ScenarioSpec
from components.contract.scenarios.single_vpc import SingleVpcOutputs

if TYPE_CHECKING:
    from components.contract.models import StackConfig

ID = "overlay-switch"

BASELINE = "baseline"
ROUTES = "routes"
ROUTE_READINESS = "route-readiness"
NATIVE_ROUTING = "native-routing"
VERIFY = "verify"

PHASES = (BASELINE, ROUTES, ROUTE_READINESS, NATIVE_ROUTING, VERIFY)


class OverlaySwitchOutputs(SingleVpcOutputs):
    """The stack outputs of an overlay-switch phase."""

    native_routing: bool = False
    pod_cidr: str | None = None
    node_pod_prefix: int | None = None
    routes_per_table_quota: int | None = None


def check(config: StackConfig) -> list[NetworkSlot]:
    """The overlay block is required; its pod CIDR holds per-node blocks, apart from the VPC."""
    from components.contract.keys import MIGRATION_KEY
    from components.contract.model_base import ConfigError

    key = f"{MIGRATION_KEY}.overlay"
    overlay = config.migration.overlay
    if overlay is None:
        raise ConfigError(key, f"{key} is required for overlay-switch.")
    cidr = overlay.pod_cidr
    if cidr.prefixlen >= overlay.node_pod_prefix:
        raise ConfigError(
            f"{key}.pod_cidr",
            f"{key}.pod_cidr {cidr} has no room for per-node /{overlay.node_pod_prefix} "
            "blocks; widen it or raise node_pod_prefix.",
        )
    if cidr.overlaps(config.cluster.network.cidr):
        raise ConfigError(
            f"{key}.pod_cidr",
            f"{key}.pod_cidr {cidr} overlaps the VPC {config.cluster.network.cidr}.",
        )
    return []


SPEC = ScenarioSpec(
    id=ID,
    summary="Switch Calico from IPIP to native routing once every route exists (seed 002).",
    phases=lambda members: PHASES,
    outputs=OverlaySwitchOutputs,
    builder="components.overlay_switch:build",
    steps="automation.scenarios.overlay_switch:scenario",
    check=check,
)
