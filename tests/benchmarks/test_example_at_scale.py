"""``benchmarks/example_at_scale.py``'s arithmetic and file handling, shown able to fail
without its 35-minute sandbox: the ceiling's two-size fit, the drain set against it,
the per-phase figures, and the proposal taken as the stack file with its kept file."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.example_at_scale import (
    Ceiling,
    CeilingFit,
    Sample,
    drain_against_ceiling,
    engine_breakdown,
    phase_figures,
    split_ceiling_nodes,
    with_drain_limits,
)
from benchmarks.faults import take_proposal


def test_the_fit_separates_the_fixed_part_from_the_part_per_pod() -> None:
    fit = CeilingFit.through(Sample(nodes=2, pods=100, seconds=30.0), Sample(4, 300, 50.0))
    assert (fit.fixed, fit.per_pod) == (20.0, 0.1)
    assert fit.seconds(1000) == 120.0  # not 300 s, as scaling one sample's rate would say
    assert fit.problem() == ""


@pytest.mark.parametrize("larger_took", [30.0, 25.0])
def test_a_larger_sample_that_was_not_slower_gives_no_ceiling(larger_took: float) -> None:
    fit = CeilingFit.through(Sample(2, 100, 30.0), Sample(4, 300, larger_took))
    assert fit.problem().startswith("the larger sample was not slower")


def test_one_size_gives_no_fit() -> None:
    fit = CeilingFit.through(Sample(2, 100, 30.0), Sample(2, 100, 31.0))
    assert math.isnan(fit.fixed) and math.isnan(fit.per_pod)
    assert fit.problem() != ""


def test_the_ceilings_workers_split_a_third_and_two_thirds() -> None:
    assert split_ceiling_nodes([f"n{i}" for i in range(9)]) == (
        ["n0", "n1", "n2"],
        ["n3", "n4", "n5", "n6", "n7", "n8"],
    )
    with pytest.raises(SystemExit):
        split_ceiling_nodes(["n0", "n1"])


def _ceiling(larger_took: float = 50.0, bound: float = 40.0) -> Ceiling:
    return Ceiling(Sample(2, 100, 30.0), Sample(4, 300, larger_took), ("n0",), 1000, bound)


def test_the_drain_is_set_against_the_larger_of_bound_and_ceiling() -> None:
    lines, compared = drain_against_ceiling(_ceiling(), {"started": 0.0, "finished": 200.0}, 240.0)
    assert compared
    assert lines[-1].endswith("kubeshift / max(bound, ceiling) = 240 / 120s = 2.00x")
    lines, _ = drain_against_ceiling(
        _ceiling(bound=480.0), {"started": 0.0, "finished": 200.0}, 240.0
    )
    assert lines[-1].endswith("= 240 / 480s = 0.50x")


def test_no_ratio_without_the_last_replacement_or_a_fit() -> None:
    drain = {"started": 0.0, "finished": 200.0}
    assert drain_against_ceiling(_ceiling(), drain, None)[1] is False
    lines, compared = drain_against_ceiling(_ceiling(larger_took=20.0), drain, 240.0)
    assert not compared
    assert lines[-1].endswith("no ratio")


def _record(phase: str, step: str, began: float, took: float) -> dict[str, Any]:
    return {"phase": phase, "step": step, "started": began, "finished": began + took}


def test_each_phase_counts_engine_hooks_and_gates_apart() -> None:
    records = [
        _record("drain-workers", "config", 0.0, 1.0),
        _record("drain-workers", "before:drain", 1.0, 30.0),
        _record("drain-workers", "preview", 31.0, 5.0),
        _record("drain-workers", "update", 36.0, 10.0),
        _record("drain-workers", "after:nodes-gone", 46.0, 4.0),
        {"phase": "cleanup", "step": "preview", "started": None, "finished": None},
    ]
    [(phase, row)] = phase_figures(records, {"nodes-gone"}).items()
    assert phase == "drain-workers"
    assert (row.wall, row.engine, row.hooks, row.gates) == (50.0, 15.0, 30.0, 4.0)


def test_the_engine_breakdown_shows_each_phases_judgement_and_stretches() -> None:
    stretches = {"start": 1.0, "program": 2.0, "steps": 3.0, "finish": 0.5, "total": 6.5}
    records = [
        {"phase": "ingress-move", "step": "config", "details": {}},
        {
            "phase": "ingress-move",
            "step": "preview",
            "details": {"judging": 2.25, "previewed": "skipped"},
        },
        {"phase": "ingress-move", "step": "update", "details": {"seconds": stretches}},
        {"phase": "cleanup", "step": "before:volumes", "details": None},
    ]

    [_header, _rule, row] = engine_breakdown(records)

    assert row == "| ingress-move | 2.2 | skipped | - | 6.5 (1.0/2.0/3.0/0.5/-) |"


def test_the_drain_limit_is_written_into_the_stack_file(tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.s.yaml"
    stack.write_text(yaml.safe_dump({"config": {"kubeshift:runtime": {"probe_services": ["a"]}}}))
    with_drain_limits(stack, 4)
    runtime = yaml.safe_load(stack.read_text())["config"]["kubeshift:runtime"]
    assert runtime == {"probe_services": ["a"], "drain_limits": {"max_nodes_in_flight": 4}}


def test_the_proposal_is_taken_with_the_kept_file_it_names(tmp_path: Path) -> None:
    proposals, stacks = tmp_path / "proposals", tmp_path / "stacks"
    proposals.mkdir()
    stacks.mkdir()
    (proposals / "proposed.yaml").write_text("config: {kubeshift:kept: Pulumi.s.kept.yaml}\n")
    (proposals / "Pulumi.s.kept.yaml").write_text("names: {}\n")
    take_proposal(proposals / "proposed.yaml", stacks / "Pulumi.s.yaml", "s")
    assert sorted(p.name for p in stacks.iterdir()) == ["Pulumi.s.kept.yaml", "Pulumi.s.yaml"]
    (proposals / "Pulumi.s.kept.yaml").unlink()  # a small cluster's proposal: one file
    take_proposal(proposals / "proposed.yaml", tmp_path / "Pulumi.t.yaml", "s")
    assert not (tmp_path / "Pulumi.s.kept.yaml").exists()
