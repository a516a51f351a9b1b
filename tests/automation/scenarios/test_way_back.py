"""Every phase of every scenario says how it goes back, or why it cannot: a point of no
return is destructive (so a run asks before crossing it) and shown by ``plan``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from automation.model.phase import Scenario
from automation.model.way_back import NoReturn, Reverse
from automation.run.steps import plan_steps
from automation.scenarios import build_scenario
from components.contract import registry
from components.contract.loading import load_config, load_stack_file

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = {
    "vpc-move": "local",
    "cni-swap": "cni-swap-example",
    "overlay-switch": "overlay-switch-example",
}
POINTS_OF_NO_RETURN = {
    "vpc-move": ["cleanup"],
    "cni-swap": ["teardown-mirror"],
    "overlay-switch": [],
}


def _kubeshift(state: Path, *args: str) -> str:
    """The console script as a user runs it; its output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PULUMI_", "KUBESHIFT_"))}
    done = subprocess.run(
        [str(Path(sys.executable).with_name("kubeshift")), *args],
        cwd=REPO, env={**env, "KUBESHIFT_STATE_DIR": str(state), "COLUMNS": "200"},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def _scenario(stack: str) -> Scenario:
    return build_scenario(load_config(load_stack_file(REPO / "stacks" / f"Pulumi.{stack}.yaml")))


def test_the_examples_cover_every_registered_scenario() -> None:
    assert sorted(EXAMPLES) == sorted(registry.ids())


@pytest.mark.parametrize("scenario", sorted(EXAMPLES))
def test_each_phase_declares_its_way_back_and_each_point_of_no_return_asks(
    scenario: str,
) -> None:
    plan = _scenario(EXAMPLES[scenario])

    undeclared = [p.id for p in plan.phases if not isinstance(p.way_back, Reverse | NoReturn)]
    assert undeclared == []
    assert [p.id for p in plan.phases if p.point_of_no_return] == POINTS_OF_NO_RETURN[scenario]
    for phase in plan.phases:
        assert phase.way_back is not None and phase.way_back.describe().strip(), phase.id
        if phase.point_of_no_return:
            assert any(s.destructive for s in plan_steps(phase)), phase.id


def test_plan_names_the_points_of_no_return_and_why(tmp_path: Path) -> None:
    shown = _kubeshift(tmp_path, "--stack", "cni-swap-example", "plan", "--json")
    rows = {row["id"]: row for row in json.loads(shown)["phases"]}
    assert rows["teardown-mirror"]["point_of_no_return"].startswith("the mirror")
    assert rows["teardown-mirror"]["way_back"].startswith("none, a point of no return: ")
    assert rows["dns-to-mirror"]["point_of_no_return"] is None
    assert "dns-to-primary" in rows["dns-to-mirror"]["way_back"]

    table = " ".join(_kubeshift(tmp_path, "--stack", "cni-swap-example", "plan").split())
    assert "Point of no return: cni-swap" not in table  # back with the old CNI's manifest
    assert "Point of no return: teardown-mirror:" in table
    assert "Point of no return: dns-to-mirror" not in table


def test_plan_says_which_ways_back_kubeshift_runs() -> None:
    """``back`` runs a phase's way back only where its reverse carries steps (or needs
    none); the others are described for an operator, and a walk over one is refused."""
    runs = {
        scenario: [p.id for p in _scenario(EXAMPLES[scenario]).phases
                   if isinstance(p.way_back, Reverse) and p.way_back.runs]
        for scenario in EXAMPLES
    }  # fmt: skip
    assert runs["overlay-switch"] == ["routes", "route-readiness", "native-routing", "verify"]
    assert runs["vpc-move"] == [
        "target-network", "shared-resources", "ingress-nodeport", "target-workers",
        "dns-cutover", "ingress-move", "drain-workers",
        "control-plane-1", "control-plane-2", "control-plane-3",
    ]  # fmt: skip
    assert runs["cni-swap"] == [
        "certificates", "mirror-cluster", "copy", "dns-to-mirror", "cni-swap",
        "dns-to-primary",
    ]  # fmt: skip


def test_back_to_an_unknown_phase_is_one_sentence_before_anything(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(Path(sys.executable).with_name("kubeshift")), "--stack", "overlay-switch-example",
         "back", "--to", "nowhere"],
        cwd=REPO, env={**os.environ, "KUBESHIFT_STATE_DIR": str(tmp_path)},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "Unknown phase 'nowhere'" in done.stderr and "Traceback" not in done.stderr
    assert not list(tmp_path.iterdir()), "nothing written"
