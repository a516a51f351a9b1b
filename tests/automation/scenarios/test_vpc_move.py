"""vpc-move's phases as the seed ordered them: what each control-plane move waits for."""

from __future__ import annotations

from pathlib import Path

import pytest

from automation.model.phase import Gate, Scenario
from automation.scenarios import build_scenario
from components.contract.loading import load_config, load_stack_file
from components.contract.scenarios import vpc_move as ids

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def plan() -> Scenario:
    return build_scenario(load_config(load_stack_file(REPO / "stacks" / "Pulumi.local.yaml")))


def _gates(steps: tuple[object, ...]) -> list[str]:
    return [s.name for s in steps if isinstance(s, Gate)]


def test_each_member_moves_only_while_the_others_keep_quorum(plan: Scenario) -> None:
    moves = [p for p in plan.phases if p.id.startswith(ids.CONTROL_PLANE_PREFIX)]
    assert [p.id for p in moves] == [ids.control_plane_phase(m) for m in (1, 2, 3)]
    for phase in moves:
        assert "control-plane-ready" in _gates(phase.before), phase.id
        assert "member-back" in _gates(phase.after), phase.id


def test_the_api_record_goes_back_to_the_new_load_balancer_only_once_it_serves(
    plan: Scenario,
) -> None:
    by_id = {p.id: p for p in plan.phases}
    # member 1: the record is an A record to that member; no new API LB to wait for yet
    assert "api-targets-healthy" not in _gates(by_id[ids.control_plane_phase(1)].before)
    for member in (2, 3):
        phase = by_id[ids.control_plane_phase(member)]
        assert "api-targets-healthy" in _gates(phase.before), phase.id
        assert "api-record-in-route53" in _gates(phase.after), phase.id
