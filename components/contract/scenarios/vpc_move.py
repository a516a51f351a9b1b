"""vpc-move (seed 001): move a live cluster to a new VPC over peering."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from components.contract.registry import NetworkSlot, ScenarioSpec, StackOutputs

if TYPE_CHECKING:
    from components.contract.models import StackConfig
    from components.contract.phases import PhaseCursor

ID = "vpc-move"

BASELINE = "baseline"
TARGET_NETWORK = "target-network"
SHARED_RESOURCES = "shared-resources"
INGRESS_NODEPORT = "ingress-nodeport"
TARGET_WORKERS = "target-workers"
DNS_CUTOVER = "dns-cutover"
INGRESS_MOVE = "ingress-move"
DRAIN_WORKERS = "drain-workers"
RETIRE_OLD_WORKERS = "retire-old-workers"
CONTROL_PLANE_PREFIX = "control-plane-"
CLEANUP = "cleanup"

_HEAD = (
    BASELINE,
    TARGET_NETWORK,
    SHARED_RESOURCES,
    INGRESS_NODEPORT,
    TARGET_WORKERS,
    DNS_CUTOVER,
    INGRESS_MOVE,
    DRAIN_WORKERS,
    RETIRE_OLD_WORKERS,
)


def control_plane_phase(member: int) -> str:
    """Id of the phase that moves control-plane member ``member`` (1-based)."""
    return f"{CONTROL_PLANE_PREFIX}{member}"


def member_of_phase(phase: str) -> int | None:
    """The control-plane member ``phase`` moves, or None for any other phase."""
    number = phase.removeprefix(CONTROL_PLANE_PREFIX)
    return int(number) if phase.startswith(CONTROL_PLANE_PREFIX) and number.isdigit() else None


def phases(members: int) -> tuple[str, ...]:
    """One move per control-plane member, each its own phase, between retire and cleanup."""
    return (*_HEAD, *(control_plane_phase(m) for m in range(1, members + 1)), CLEANUP)


Side = Literal["source", "target"]


class Record(BaseModel):
    """One DNS record as the phase declares it."""

    model_config = ConfigDict(frozen=True)

    name: str
    type: Literal["CNAME", "A"]
    values: list[str]
    alias_zone_id: str | None = None
    """Set: an A record aliased to the load balancer ``values[0]`` names, in this
    canonical hosted zone."""


class Member(BaseModel):
    """Where one control-plane member lives at this phase."""

    model_config = ConfigDict(frozen=True)

    side: Side
    az: str
    address: str
    asg_name: str


class VpcMoveOutputs(StackOutputs):
    """The stack outputs of a vpc-move phase."""

    node_security_group_ids_by_side: dict[Side, str | None] = {}
    peer_admitting_security_group_ids: dict[Side, list[str]] = {}
    """The groups of each side that admit the other VPC's: its shared group, or on an
    adopted side without one, its control-plane and node groups."""
    target_group_arns: dict[str, dict[str, str]] = {}
    """Load balancer key (e.g. ``ingress-target``) -> listener port -> target group ARN."""
    lb_dns_names: dict[str, str] = {}
    records: dict[str, Record] = {}
    """Record key (``api`` or an ingress name) -> the record as declared."""
    api_record_target: str | None = None
    worker_asg_names: dict[Side, list[str]] = {}
    control_plane_members: dict[str, Member] = {}


ApiRecordTarget = Literal["source-lb", "target-lb"]


@dataclass(frozen=True)
class PhasePlan:
    """What exists at one phase: plain booleans derived from the phase cursor.

    The vpc-move program builds exactly this; a phase that only changes what exists
    when is a change here and in the automation, not in the components.
    """

    target_network: bool
    target_common: bool
    target_workers: bool
    ingress_on_target: bool
    old_workers: bool
    old_workers_draining: bool
    members_moved: int
    members: int
    cleanup: bool
    retire_source_network: bool

    @property
    def source_network(self) -> bool:
        return not (self.cleanup and self.retire_source_network)

    @property
    def peering(self) -> bool:
        return self.target_network and self.source_network

    @property
    def source_control_plane(self) -> bool:
        """Any member still in the source VPC (its SGs and API LB must stay)."""
        return self.members_moved < self.members

    @property
    def source_common(self) -> bool:
        return not self.cleanup

    @property
    def source_api_lb(self) -> bool:
        return not self.cleanup

    @property
    def target_api_lb(self) -> bool:
        return self.members_moved >= 1

    @property
    def api_record(self) -> ApiRecordTarget:
        """Where the API record points: the source API load balancer while it still
        fronts all but one member (its other members serve while member 1 moves), then
        the target one, which fronts member 1 by then and is checked healthy first."""
        if self.members_moved <= 1 and not self.cleanup:
            return "source-lb"
        return "target-lb"


def plan_phase(config: StackConfig) -> PhasePlan:
    """The :class:`PhasePlan` of ``config``'s phase."""
    cursor = config.cursor
    return PhasePlan(
        target_network=cursor.reached(TARGET_NETWORK),
        target_common=cursor.reached(SHARED_RESOURCES),
        target_workers=cursor.reached(TARGET_WORKERS),
        ingress_on_target=cursor.reached(DNS_CUTOVER),
        old_workers=cursor.before(RETIRE_OLD_WORKERS),
        old_workers_draining=cursor.reached(DRAIN_WORKERS),
        members_moved=members_moved(cursor),
        members=config.cluster.control_plane.members,
        cleanup=cursor.reached(CLEANUP),
        retire_source_network=config.migration.retire_source_network,
    )


def check(config: StackConfig) -> list[NetworkSlot]:
    """A target network is required, in the region, and apart from the source VPC."""
    from components.contract.keys import MIGRATION_KEY
    from components.contract.model_base import ConfigError
    from components.contract.network_checks import check_network

    key = f"{MIGRATION_KEY}.target_network"
    target = config.migration.target_network
    if target is None:
        raise ConfigError(key, f"{key} is required for the vpc-move scenario.")
    source = config.cluster.network.cidr
    if target.cidr.overlaps(source):
        raise ConfigError(
            f"{key}.cidr", f"{key}.cidr {target.cidr} overlaps the source VPC {source}."
        )
    check_network(target, key, config.region)
    return [(key, target)]


SPEC = ScenarioSpec(
    id=ID,
    summary="Move a live cluster to a new VPC over peering (seed 001).",
    phases=phases,
    outputs=VpcMoveOutputs,
    builder="components.vpc_move:build",
    steps="automation.scenarios.vpc_move:scenario",
    check=check,
)


def members_moved(cursor: PhaseCursor) -> int:
    """How many control-plane members live in the target network at ``cursor``'s phase."""
    moves = [p for p in cursor.phases if p.startswith(CONTROL_PLANE_PREFIX)]
    if cursor.reached(CLEANUP):
        return len(moves)
    return len([p for p in moves if cursor.reached(p)])
