"""The scenarios kubeshift runs, each an ordered tuple of phases (see ``automation.phase``).

``build_scenario`` turns a validated stack into its scenario; the phase ids always
come from ``components.phases`` so the runner and the Pulumi program agree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from automation.phase import Scenario
from components import phases


@dataclass(frozen=True)
class ScenarioEntry:
    id: str
    summary: str
    build: Callable[[Any], Scenario]

    @property
    def phase_ids(self) -> tuple[str, ...]:
        return phases.scenario_phases(self.id)


def _vpc_move(config: Any) -> Scenario:
    from automation.scenarios.vpc_move import scenario

    return scenario(config.cluster.control_plane.members)


def _cni_swap(config: Any) -> Scenario:
    from automation.scenarios.cni_swap import scenario

    return scenario()


def _overlay_switch(config: Any) -> Scenario:
    from automation.scenarios.overlay_switch import scenario

    return scenario()


SCENARIOS: dict[str, ScenarioEntry] = {
    phases.VPC_MOVE: ScenarioEntry(
        phases.VPC_MOVE,
        "Move a live cluster to a new VPC over peering (seed 001).",
        _vpc_move,
    ),
    phases.CNI_SWAP: ScenarioEntry(
        phases.CNI_SWAP,
        "Swap the CNI behind a mirror cluster, moving traffic by DNS (seed 000).",
        _cni_swap,
    ),
    phases.OVERLAY_SWITCH: ScenarioEntry(
        phases.OVERLAY_SWITCH,
        "Switch Calico from IPIP to native routing once every route exists (seed 002).",
        _overlay_switch,
    ),
}


def build_scenario(info: Any) -> Scenario:
    """The scenario of a loaded stack (``automation.project.StackInfo``)."""
    entry = SCENARIOS[info.config.scenario]
    built = entry.build(info.config)
    expected = phases.scenario_phases(entry.id, info.config.cluster.control_plane.members)
    assert built.ids() == expected, f"{entry.id} phases drifted from components.phases"
    return built
