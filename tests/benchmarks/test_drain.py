"""``benchmarks/drain.py``: its smoke run as a user starts it, and each check able to fail.

The benchmark's figures are only worth something if every contender is timed to the
same end point (the last replacement Ready), if a refused pod delete stops it instead
of being counted as done, and if its correctness checks (everything moved, the fleet
replaced, no Service emptied by a budget-respecting contender, the probe able to see
an outage) really run. The smoke run proves the last on a real control plane; the fast
tests below feed each piece what it must catch.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from kubernetes.client import V1Eviction
from kubernetes.client.exceptions import ApiException

from automation.kube.probe import ProbeReport, ServiceAvailability, ZeroInterval
from automation.sandbox.binaries import Binaries
from benchmarks.deletes import DeleteRefused, delete_at_once, delete_pod
from benchmarks.drain import (
    CEILING,
    FLOOR,
    KUBECTL,
    KUBESHIFT,
    ROUNDS,
    EndPoint,
    EndPointMissed,
    EvictionRefused,
    FleetState,
    Outcome,
    _round_victims,
    check_outcome,
    check_probe,
    check_replaced,
    contenders,
    figures_row,
    medians,
    order,
    parse_args,
    print_figures,
    ratios,
    run_floor,
)
from benchmarks.example_at_scale import Ceiling, CeilingFit, Sample, drain_against_ceiling

REPO = Path(__file__).resolve().parents[2]
PYTHON = REPO / ".venv" / "bin" / "python"  # as scripts/test-pipeline runs the tools
SMOKE_DEADLINE = 240.0  # about a minute on 2 busy cores; a hung run fails, not hangs
OLD, NEW = "old-node", "new-node"
SERVICES = ["bench-a/app000", "bench-b/app001"]

# What each contender's smoke run must have checked (and passed).
EXPECTED_CHECKS = {
    KUBESHIFT: {
        "every pod moved once", "end point after the contender returned", "fleet replaced",
        "drain complete", "requests counted", "probe covered every Service",
        "no zero-endpoint interval", "teardown finished",
    },
    KUBECTL: {
        "every pod moved once", "end point after the contender returned", "fleet replaced",
        "drain complete", "requests counted", "probe covered every Service",
        "no zero-endpoint interval", "teardown finished",
    },
    FLOOR: {
        "every pod moved once", "end point after the contender returned", "fleet replaced",
        "drain complete", "requests counted", "probe covered every Service",
        "no zero-endpoint interval", "teardown finished",
    },
    CEILING: {
        "every pod moved once", "end point after the contender returned", "fleet replaced",
        "probe covered every Service", "probe saw the ceiling's outage", "teardown finished",
    },
    ROUNDS: {
        "every pod moved once", "end point after the contender returned", "fleet replaced",
        "probe covered every Service", "no zero-endpoint interval", "teardown finished",
    },
}  # fmt: skip


def pod(name: str, node: str | None, *, ready: bool, leaving: bool = False) -> dict[str, Any]:
    """A pod as the API serves it, with just what the end point reads."""
    metadata: dict[str, Any] = {
        "uid": f"uid-{name}", "name": name, "namespace": "ns", "labels": {"app": "app000"},
    }  # fmt: skip
    if leaving:
        metadata["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {
        "metadata": metadata,
        "spec": {"nodeName": node},
        "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


# --- the smoke run ------------------------------------------------------------------------


@pytest.mark.controlplane
def test_smoke_run_passes_every_check_of_every_contender(testbin: Binaries, tmp_path: Path) -> None:
    """``.venv/bin/python benchmarks/drain.py --smoke``, as a user runs it: exit 0, and
    its JSON shows every contender ran once with all its checks, each passed."""
    figures = tmp_path / "smoke.json"
    began = time.monotonic()
    proc = subprocess.run(
        [str(PYTHON), "benchmarks/drain.py", "--smoke", "--json", str(figures)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=SMOKE_DEADLINE,
        check=False,
    )
    took = time.monotonic() - began
    assert proc.returncode == 0, f"exit {proc.returncode} after {took:.0f}s:\n{proc.stdout[-4000:]}"
    report = json.loads(figures.read_text())
    ran = {o["name"]: o for o in report["outcomes"]}
    assert sorted(ran) == sorted(EXPECTED_CHECKS)
    assert len(report["outcomes"]) == len(EXPECTED_CHECKS), "one repeat in smoke mode"
    for name, expected in EXPECTED_CHECKS.items():
        checks = {c["name"]: c for c in ran[name]["checks"]}
        assert set(checks) == expected, name
        assert [c for c in checks.values() if not c["passed"]] == [], name
    assert report["checks_failed"] == []
    assert "no timing figures" in proc.stdout
    assert "median of" not in proc.stdout, "smoke mode claims no timings"


def test_smoke_mode_is_small_and_turns_every_contender_on() -> None:
    args = parse_args(["--smoke", "--pods", "5000", "--skip-kubectl"])
    assert (args.pods, args.old_nodes, args.repeats) == (4, 2, 1)
    assert args.rounds and args.timeline and not args.skip_kubectl and not args.skip_ceiling
    assert not args.skip_floor
    assert contenders(args) == [KUBESHIFT, KUBECTL, FLOOR, CEILING, ROUNDS]


def test_the_floor_runs_by_default_and_can_be_skipped() -> None:
    assert FLOOR in contenders(parse_args([]))
    assert FLOOR not in contenders(parse_args(["--skip-floor"]))


# --- deletes ------------------------------------------------------------------------------


class FakeCore:
    """``delete_namespaced_pod`` answering each pod by name: an HTTP status to raise,
    or success."""

    def __init__(self, answers: dict[str, int]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    def delete_namespaced_pod(self, name: str, namespace: str, **_: Any) -> None:
        self.asked.append(name)
        status = self.answers.get(name)
        if status is not None:
            raise ApiException(status=status, reason="refused")


@pytest.mark.parametrize("status", [500, 403, 429, 409])
def test_delete_pod_raises_every_error_but_gone(status: int) -> None:
    with pytest.raises(DeleteRefused, match=rf"ns/web-1 failed: {status}"):
        delete_pod(FakeCore({"web-1": status}), ("ns", "web-1"))  # type: ignore[arg-type]


def test_delete_pod_passes_over_a_pod_already_gone() -> None:
    core = FakeCore({"web-1": 404})
    assert delete_pod(core, ("ns", "web-1")) is False  # type: ignore[arg-type]
    assert delete_pod(core, ("ns", "web-2")) is True  # type: ignore[arg-type]


def test_delete_at_once_counts_gone_pods_apart_and_raises_a_refusal() -> None:
    core = FakeCore({"b": 404})
    deleted = delete_at_once(core, [("ns", "a"), ("ns", "b"), ("ns", "c")])  # type: ignore[arg-type]
    assert (deleted.deleted, deleted.gone) == (2, 1)

    core = FakeCore({"b": 500})
    with pytest.raises(DeleteRefused, match="ns/b"):
        delete_at_once(core, [("ns", "a"), ("ns", "b"), ("ns", "c")])  # type: ignore[arg-type]
    assert sorted(core.asked) == ["a", "b", "c"], "every request sent was answered first"


# --- the eviction floor -------------------------------------------------------------------


class FakeEvictions:
    """``create_namespaced_pod_eviction`` answering each pod by name from a list of HTTP
    statuses (201: evicted), the last one repeated."""

    def __init__(self, answers: dict[str, list[int]]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    def create_namespaced_pod_eviction(
        self, name: str, namespace: str, body: V1Eviction, **_: Any
    ) -> None:
        assert isinstance(body, V1Eviction) and body.metadata is not None
        assert (body.metadata.name, body.metadata.namespace) == (name, namespace)
        self.asked.append(name)
        script = self.answers[name]
        status = script.pop(0) if len(script) > 1 else script[0]
        if status != 201:
            raise ApiException(status=status, reason="refused")


def _floor(core: FakeEvictions, *names: str, timeout: float = 10.0) -> Outcome:
    """Run the floor on a fleet of ``names`` on the old node and one pod on a new one."""
    pods = [pod(name, OLD, ready=True) for name in names] + [pod("new", NEW, ready=True)]
    fleet = SimpleNamespace(old=SimpleNamespace(node_names=[OLD]), pods=lambda: pods)
    kube = SimpleNamespace(core=core)
    return run_floor(kube, fleet, timeout, workers=4, pause=0.0)  # type: ignore[arg-type]


def test_the_floor_asks_again_for_a_pod_its_budget_refused() -> None:
    core = FakeEvictions({"a": [429, 429, 201], "b": [201]})
    outcome = _floor(core, "a", "b")
    assert (outcome.evicted, outcome.requests, outcome.complete) == (2, 4, True)
    assert sorted(core.asked) == ["a", "a", "a", "b"], "only old pods, 'a' until evicted"
    assert outcome.detail["sweeps"] == 3


def test_the_floor_counts_a_pod_already_gone_as_done_not_evicted() -> None:
    outcome = _floor(FakeEvictions({"a": [404], "b": [201]}), "a", "b")
    assert (outcome.evicted, outcome.requests, outcome.complete) == (1, 2, True)
    assert outcome.detail["gone"] == 1


@pytest.mark.parametrize("status", [500, 403, 409])
def test_the_floor_stops_on_any_other_answer(status: int) -> None:
    core = FakeEvictions({"a": [429], "b": [status]})
    with pytest.raises(EvictionRefused, match=rf"ns/b failed: {status}"):
        _floor(core, "a", "b")
    assert core.asked.count("a") == 1, "no sweep after the refusal"


def test_the_floor_gives_up_at_its_deadline_incomplete() -> None:
    core = FakeEvictions({"a": [429], "b": [201]})
    outcome = _floor(core, "a", "b", timeout=0.0)
    assert (outcome.evicted, outcome.requests, outcome.complete) == (1, 2, False)
    assert outcome.detail["refused"] == 1


# --- the end point ------------------------------------------------------------------------


def test_a_replacement_not_ready_is_not_the_end_point() -> None:
    state = FleetState([OLD], want=2)
    state.sync([pod("a", OLD, ready=True), pod("b", OLD, ready=True)])
    assert not state.emptied and not state.replaced
    state.apply("DELETED", pod("a", OLD, ready=True))
    state.apply("DELETED", pod("b", OLD, ready=True))
    state.apply("ADDED", pod("a2", NEW, ready=True))
    state.apply("ADDED", pod("b2", NEW, ready=False))
    assert state.emptied and not state.replaced
    state.apply("MODIFIED", pod("b2", NEW, ready=True))
    assert state.replaced


def test_a_terminating_old_pod_has_not_left() -> None:
    state = FleetState([OLD], want=1)
    state.sync([pod("a", OLD, ready=True), pod("a2", NEW, ready=True)])
    state.apply("MODIFIED", pod("a", OLD, ready=True, leaving=True))
    assert not state.emptied and not state.replaced
    state.apply("DELETED", pod("a", OLD, ready=True, leaving=True))
    assert state.replaced


def test_a_replacement_leaving_again_is_counted_out() -> None:
    state = FleetState([OLD], want=1)
    state.sync([pod("a2", NEW, ready=True)])
    assert state.replaced
    state.apply("MODIFIED", pod("a2", NEW, ready=True, leaving=True))
    assert not state.replaced


def _end_point(clock: list[float]) -> EndPoint:
    """An end point fed by hand (its watch never started), on a clock the test sets."""
    core = SimpleNamespace(list_pod_for_all_namespaces=None)
    return EndPoint(core, [OLD], 1, clock=lambda: clock[0], label_selector="g=x")  # type: ignore[arg-type]


def test_every_contender_is_timed_to_the_last_replacement_ready() -> None:
    """The old nodes empty at 1 s, the replacement Ready at 3 s: the end point is 3 s
    (a drain's own clock, which stops when the old pod is gone, would say 1 s)."""
    clock = [0.0]
    end = _end_point(clock)
    end._sync([pod("a", OLD, ready=True)])
    clock[0] = 1.0
    end._event("DELETED", pod("a", OLD, ready=True))
    end._event("ADDED", pod("a2", NEW, ready=False))
    clock[0] = 3.0
    end._event("MODIFIED", pod("a2", NEW, ready=True))
    assert (end.emptied_at, end.replaced_at) == (1.0, 3.0)
    assert end.wait(deadline=10.0) == 3.0


def test_the_end_point_wait_has_a_deadline() -> None:
    clock = [0.0]
    end = _end_point(clock)
    end._sync([pod("a2", NEW, ready=False)])
    clock[0] = 11.0
    with pytest.raises(EndPointMissed, match="0/1 Ready"):
        end.wait(deadline=10.0)


# --- checks -------------------------------------------------------------------------------


def test_the_fresh_listing_catches_a_replacement_not_ready_or_an_old_pod_left() -> None:
    ready = [pod("a2", NEW, ready=True), pod("b2", NEW, ready=True)]
    assert check_replaced(ready, [OLD], [NEW], 2).passed
    assert not check_replaced([ready[0], pod("b2", NEW, ready=False)], [OLD], [NEW], 2).passed
    assert not check_replaced([*ready, pod("c", OLD, ready=True)], [OLD], [NEW], 2).passed


def _checks(outcome: Outcome) -> dict[str, bool]:
    return {c.name: c.passed for c in check_outcome(outcome, want=4)}


def test_outcome_checks_fail_on_a_pod_not_moved_an_incomplete_drain_or_no_requests() -> None:
    good = Outcome(KUBESHIFT, seconds=5, own_seconds=4, evicted=4, requests=9, complete=True)
    assert all(_checks(good).values()) and len(_checks(good)) == 4
    assert not _checks(Outcome(KUBESHIFT, seconds=5, evicted=3, requests=9, complete=True))[
        "every pod moved once"
    ]
    assert not _checks(Outcome(KUBECTL, seconds=5, evicted=4, requests=9))["drain complete"]
    assert not _checks(Outcome(KUBECTL, seconds=5, evicted=4, complete=True))["requests counted"]
    early = Outcome(CEILING, seconds=1, own_seconds=2, evicted=4, complete=True)
    assert not _checks(early)["end point after the contender returned"]
    assert not _checks(Outcome(FLOOR, seconds=5, evicted=4, requests=9))["drain complete"]
    assert not _checks(Outcome(FLOOR, seconds=5, evicted=4, complete=True))["requests counted"]


def _report(down: set[str], services: list[str] = SERVICES) -> ProbeReport:
    return ProbeReport(
        started_at="2026-01-01T00:00:00Z",
        seconds=5.0,
        services={
            s: ServiceAvailability(
                s, ready=2, min_ready=0 if s in down else 1,
                zero_intervals=[ZeroInterval(1.0, 2.0)] if s in down else [],
            )
            for s in services
        },
    )  # fmt: skip


def test_probe_checks_fail_on_an_emptied_service_a_blind_probe_or_one_missed() -> None:
    def passed(name: str, report: ProbeReport) -> dict[str, bool]:
        return {c.name: c.passed for c in check_probe(name, report, SERVICES)}

    assert passed(KUBESHIFT, _report(set())) == {
        "probe covered every Service": True,
        "no zero-endpoint interval": True,
    }
    assert not passed(ROUNDS, _report({SERVICES[0]}))["no zero-endpoint interval"]
    assert not passed(FLOOR, _report({SERVICES[0]}))["no zero-endpoint interval"]
    assert passed(CEILING, _report({SERVICES[1]}))["probe saw the ceiling's outage"]
    assert not passed(CEILING, _report(set()))["probe saw the ceiling's outage"]
    assert not passed(KUBECTL, _report(set(), SERVICES[:1]))["probe covered every Service"]


# --- order, medians, budget rounds --------------------------------------------------------


def test_rotated_order_puts_every_contender_in_every_position_once() -> None:
    names = [KUBESHIFT, KUBECTL, FLOOR, CEILING, ROUNDS]
    runs = [order(names, r) for r in range(len(names))]
    assert [sorted(run) for run in runs] == [sorted(names)] * len(names)
    for position in range(len(names)):
        assert sorted(run[position] for run in runs) == sorted(names)


def test_medians_are_taken_per_contender() -> None:
    runs = [Outcome(KUBESHIFT, seconds=s, evicted=1, requests=2) for s in (30.0, 10.0, 20.0)]
    runs.append(Outcome(KUBECTL, seconds=99.0, evicted=1, requests=5))
    runs.append(Outcome(FLOOR, seconds=15.0, evicted=2, requests=12))
    middle = medians(runs)
    assert (middle[KUBESHIFT]["seconds"], middle[KUBESHIFT]["runs"]) == (20.0, 3)
    assert middle[KUBECTL]["seconds"] == 99.0
    assert (middle[FLOOR]["seconds"], middle[FLOOR]["requests_per_pod"]) == (15.0, 6.0)


def _middle(**seconds: float) -> dict[str, dict[str, float]]:
    return {name: {"seconds": s, "requests_per_pod": 2.0, "runs": 1} for name, s in seconds.items()}


def test_kubeshift_and_kubectl_are_reported_over_the_floor() -> None:
    middle = _middle(kubeshift=60.0, kubectl=150.0, floor=50.0, ceiling=10.0)
    found = ratios(middle, bound=40.0)
    assert found["kubeshift_over_floor"] == pytest.approx(1.2)
    assert found["kubectl_over_floor"] == pytest.approx(3.0)
    assert found["kubeshift_over_best_possible"] == pytest.approx(1.5), "max(bound, ceiling)"
    assert "kubeshift_over_floor" not in ratios(_middle(kubeshift=60.0), bound=40.0)


def test_the_figures_row_puts_the_floor_beside_bound_and_ceiling() -> None:
    args = parse_args(["--old-nodes", "10", "--new-nodes", "10", "--pods", "250"])
    middle = _middle(kubeshift=60.0, kubectl=150.0, floor=50.0, ceiling=10.0)
    row = figures_row(args, middle, ratios(middle, 40.0), bound=40.0, per_node=2.5)
    assert list(row) == [
        "old+new, pods / deploys", "per node", "bound", "ceiling", "floor", "kubeshift",
        "kubectl", "k/ks", "ks/best", "ks/floor", "req/pod",
    ]  # fmt: skip
    assert (row["bound"], row["ceiling"], row["floor"]) == ("40 s", "10.0 s", "50.0 s")
    assert (row["k/ks"], row["ks/floor"]) == ("2.50x", "1.20x")
    assert row["req/pod"] == "2.00 / 2.00 / 2.00"
    alone = figures_row(args, _middle(kubeshift=60.0), {}, bound=40.0, per_node=2.5)
    assert (alone["floor"], alone["ks/floor"], alone["req/pod"]) == ("-", "-", "2.00 / - / -")


def test_the_printed_figures_and_their_json_carry_the_floor(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = parse_args(["--pods", "4"])
    runs = [
        Outcome(KUBESHIFT, seconds=6.0, evicted=4, requests=8, detail={"per_node": 2.0}),
        Outcome(FLOOR, seconds=5.0, evicted=4, requests=40, detail={"per_node": 2.0}),
    ]
    figures = print_figures(args, runs, bound=4.0)
    printed = capsys.readouterr().out
    assert figures["ratios"]["kubeshift_over_floor"] == pytest.approx(1.2)
    assert figures["medians"][FLOOR]["requests_per_pod"] == 10.0
    assert "kubeshift over floor (medians): 1.20x" in printed
    header, row = printed.splitlines()[-2:]
    assert "floor" in header.split() and "ks/floor" in header.split()
    assert "5.0 s" in row and "2.00 / - / 10.00" in row


def test_budget_rounds_delete_only_what_each_budget_allows() -> None:
    pods = {
        "a": pod("a", OLD, ready=True),
        "b": pod("b", OLD, ready=True),
        "c": pod("c", NEW, ready=False),
    }
    # 3 replicas, maxUnavailable 1: two Ready, one on its way: nothing more may go
    assert _round_victims(pods, set(), {OLD}, [3], 1) == []
    pods["c"] = pod("c", NEW, ready=True)
    assert len(_round_victims(pods, set(), {OLD}, [3], 1)) == 1
    assert _round_victims(pods, {"a"}, {OLD}, [3], 1) == []


# --- benchmarks/example_at_scale.py's ceiling ---------------------------------------------


def _ceiling(small_seconds: float, large_seconds: float) -> Ceiling:
    return Ceiling(
        small=Sample(nodes=20, pods=300, seconds=small_seconds),
        large=Sample(nodes=40, pods=600, seconds=large_seconds),
        old_nodes=("w1", "w2"),
        rest_pods=1200,
        bound_after=100.0,
    )


def test_the_scale_ceiling_counts_its_fixed_cost_once() -> None:
    """20 s fixed + 50 ms a pod: 35 s for 300 pods, 50 s for 600. For the 1200 left that
    is 80 s; scaling the first sample's rate (300 pods / 35 s) would say 140 s."""
    fit = _ceiling(35.0, 50.0).fit
    assert fit.fixed == pytest.approx(20.0)
    assert fit.per_pod == pytest.approx(0.05)
    assert fit.seconds(1200) == pytest.approx(80.0)
    assert fit.problem() == ""


def test_the_scale_ceiling_refuses_a_fit_noise_made() -> None:
    assert "not slower" in _ceiling(50.0, 45.0).fit.problem()
    same = CeilingFit.through(Sample(10, 300, 30.0), Sample(10, 300, 31.0))
    assert same.problem() != ""


def test_the_scale_ratio_needs_the_drain_s_last_replacement_ready() -> None:
    drain = {"started": 1000.0, "finished": 1150.0}
    lines, compared = drain_against_ceiling(_ceiling(35.0, 50.0), drain, replaced_at=1160.0)
    assert compared
    assert "= 160 / 100s = 1.60x" in lines[-1], lines
    lines, compared = drain_against_ceiling(_ceiling(35.0, 50.0), drain, replaced_at=None)
    assert not compared and "not seen" in lines[-1]
    lines, compared = drain_against_ceiling(_ceiling(50.0, 45.0), drain, replaced_at=1160.0)
    assert not compared and "not extrapolated" in lines[-1]
