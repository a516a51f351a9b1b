"""The phase vocabulary shared by the Pulumi program and the runner.

A scenario is an ordered tuple of phase ids. The Pulumi program reads
``kubeshift:phase`` and builds exactly the infrastructure of that phase; the runner
(``automation``) walks the same ids and says what to do around each update. Keeping
the ids here, in plain data, lets both sides agree without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass

VPC_MOVE = "vpc-move"
CNI_SWAP = "cni-swap"
OVERLAY_SWITCH = "overlay-switch"

SCENARIOS: tuple[str, ...] = (VPC_MOVE, CNI_SWAP, OVERLAY_SWITCH)

CONTROL_PLANE_PREFIX = "control-plane-"

_VPC_MOVE_HEAD: tuple[str, ...] = (
    "baseline",
    "target-network",
    "shared-resources",
    "ingress-nodeport",
    "target-workers",
    "dns-cutover",
    "ingress-move",
    "drain-workers",
    "retire-old-workers",
)
_VPC_MOVE_TAIL: tuple[str, ...] = ("cleanup",)

CNI_SWAP_PHASES: tuple[str, ...] = (
    "baseline",
    "certificates",
    "mirror-cluster",
    "copy",
    "dns-to-mirror",
    "cni-swap",
    "dns-to-primary",
    "teardown-mirror",
)

OVERLAY_SWITCH_PHASES: tuple[str, ...] = (
    "baseline",
    "routes",
    "route-readiness",
    "native-routing",
    "verify",
)


def control_plane_phase(member: int) -> str:
    """Id of the phase that moves control-plane member ``member`` (1-based)."""
    return f"{CONTROL_PLANE_PREFIX}{member}"


def vpc_move_phases(control_plane_members: int) -> tuple[str, ...]:
    """The vpc-move phases for a control plane of ``control_plane_members`` members."""
    moves = tuple(control_plane_phase(i) for i in range(1, control_plane_members + 1))
    return _VPC_MOVE_HEAD + moves + _VPC_MOVE_TAIL


def scenario_phases(scenario: str, control_plane_members: int = 3) -> tuple[str, ...]:
    """Ordered phase ids of ``scenario``; raises ``KeyError`` for an unknown scenario."""
    if scenario == VPC_MOVE:
        return vpc_move_phases(control_plane_members)
    if scenario == CNI_SWAP:
        return CNI_SWAP_PHASES
    if scenario == OVERLAY_SWITCH:
        return OVERLAY_SWITCH_PHASES
    raise KeyError(scenario)


@dataclass(frozen=True)
class PhaseCursor:
    """Where a stack stands in its scenario; answers "has phase X been reached?"."""

    phases: tuple[str, ...]
    current: str

    def __post_init__(self) -> None:
        if self.current not in self.phases:
            raise ValueError(f"unknown phase {self.current!r}")

    @property
    def index(self) -> int:
        return self.phases.index(self.current)

    def reached(self, phase: str) -> bool:
        """True when ``phase`` is the current phase or an earlier one."""
        return self.phases.index(phase) <= self.index

    def before(self, phase: str) -> bool:
        """True when the current phase comes strictly before ``phase``."""
        return not self.reached(phase)

    def control_plane_members_moved(self) -> int:
        """How many control-plane members live in the target network at this phase."""
        moved = [p for p in self.phases if p.startswith(CONTROL_PLANE_PREFIX) and self.reached(p)]
        if self.reached("cleanup") and "cleanup" in self.phases:
            return len([p for p in self.phases if p.startswith(CONTROL_PLANE_PREFIX)])
        return len(moved)
