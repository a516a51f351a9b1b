"""The runner's side of each registered scenario: its phases with their hooks and gates.

Which scenarios exist, their phase ids and order come from ``components.contract.registry``;
each module here builds the phases of one scenario from those ids. ``build_scenario``
checks that the two agree, so a phase added on one side only is one clear error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from automation.core.errors import KubeshiftError
from automation.model.phase import Scenario
from components.contract import registry

if TYPE_CHECKING:
    from components.contract.models import StackConfig


class ScenarioDrift(KubeshiftError):
    """A scenario's automation does not have exactly the phases its spec lists."""


def build_scenario(config: StackConfig) -> Scenario:
    """The runner's scenario for a validated stack config."""
    spec = registry.spec(config.scenario)
    built: Scenario = registry.steps(spec)(config)
    expected = spec.phase_ids(config.cluster.control_plane.members)
    if built.ids() != expected or built.id != spec.id:
        raise ScenarioDrift(
            f"The automation of {spec.id} has phases {', '.join(built.ids())} but its spec "
            f"in components.contract.scenarios lists {', '.join(expected)}; make them agree."
        )
    return built
