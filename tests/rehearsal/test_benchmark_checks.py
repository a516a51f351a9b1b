"""The sandbox benchmarks' correctness checks, run on the shared rehearsal's finished world.

``benchmarks/faults.py``, ``by_hand.py`` and ``rehearsal.py`` each start two sandboxes,
too much for CI; what they conclude rests on functions that read a sandbox (the world,
the stack's outputs, the journal, the probe's reports, the trials). Those run here on
the session's rehearsal — adopted, hurt by its fault trials, partly run by hand, run to
the end — without a sandbox of their own, so a benchmark whose reading rots fails CI.
That each check can fail is shown without a sandbox in ``tests/benchmarks/``. (Here
rather than under ``tests/benchmarks/``: the session's ``rehearsal`` fixture belongs to
this directory's conftest, and a second definition elsewhere would start a second
sandbox.)
"""

from __future__ import annotations

import pytest

from benchmarks.by_hand import by_hand_checks
from benchmarks.faults import (
    WorldUnreadable,
    _world,
    availability_problems,
    probe_services,
    pulumi,
    stack_outputs,
    unstruck,
    world_differences,
)
from benchmarks.rehearsal import PhaseFigures, journal_problems, phase_figures
from tests.rehearsal.conftest import STACK, Rehearsal
from tests.support.faults import table

pytestmark = pytest.mark.rehearsal

PARTS = (
    "vpcs", "subnets", "asgs", "load balancers", "target groups", "records",
    "security groups", "security group rules", "launch templates", "iam roles",
    "iam instance profiles", "iam role policies", "network interfaces", "volumes",
    "route tables", "deployments ready", "outputs",
)  # fmt: skip
"""What the finished vpc-move world has of each kind (its peering, NAT gateway and
addresses may be gone with the old VPC)."""
HAND_RUN = {"drain-workers", "retire-old-workers"}  # updated by `pulumi up` by hand


def test_the_finished_world_is_read_whole_and_alike_twice(rehearsal: Rehearsal) -> None:
    """Nothing random of one reading (an id, a time) is left unmasked: two readings of
    one world are equal, so a difference between two sandboxes' is a real one."""
    first = _world(rehearsal.env, STACK)
    second = _world(rehearsal.env, STACK)
    assert world_differences(first, second) == []
    assert [part for part in PARTS if not first[part]] == []
    assert first["nodes"] > 0
    assert first["running instances"] > 0


def test_a_failed_pulumi_stack_output_is_not_read_as_no_outputs(rehearsal: Rehearsal) -> None:
    failed = pulumi(rehearsal.env, STACK, "stack output --stack no-such-stack --json")
    assert failed.returncode != 0
    with pytest.raises(WorldUnreadable, match=f"exited {failed.returncode}"):
        stack_outputs(failed)


def test_the_probes_reports_show_every_configured_service_kept_an_endpoint(
    rehearsal: Rehearsal,
) -> None:
    records = rehearsal.kubeshift("--stack", STACK, "status", "--json").json()
    services = probe_services(rehearsal.env, STACK)
    assert services, "the stack file configures no probed Service"
    probed = [r for r in records if "availability" in r["details"]]
    assert {f"{r['phase']}/{r['step']}" for r in probed} >= {"drain-workers/before:drain-old-nodes"}
    assert availability_problems(records, services) == []


def test_every_trial_of_the_rehearsal_counts_as_struck(rehearsal: Rehearsal) -> None:
    assert rehearsal.faults.trials
    assert unstruck(rehearsal.faults.trials) == [], table(rehearsal.faults.trials)


def test_the_by_hand_benchmarks_checks_pass_on_the_hand_run_phases(
    rehearsal: Rehearsal,
) -> None:
    world = _world(rehearsal.env, STACK)
    checks = by_hand_checks(rehearsal.by_hand, rehearsal.faults.final_code == 0, world, world)
    assert [name for name, ok in checks.items() if not ok] == []


def test_the_rehearsal_benchmarks_journal_checks_and_figures(rehearsal: Rehearsal) -> None:
    records = rehearsal.kubeshift("--stack", STACK, "status", "--json").json()
    plan = rehearsal.kubeshift("--stack", STACK, "plan", "--json").json()
    phases = [p["id"] for p in plan["phases"]]
    updated = [p for p in phases[1:] if p not in HAND_RUN]  # the first: adopted
    assert journal_problems(records, updated) == []
    assert journal_problems(records, phases[1:]) == [
        f"{p}: no update succeeded" for p in phases if p in HAND_RUN
    ]
    figures: dict[str, PhaseFigures] = {}
    phase_figures(records, figures)
    timed = {p for p, row in figures.items() if row.engine > 0 and row.wall > 0}
    assert set(updated) <= timed, figures
