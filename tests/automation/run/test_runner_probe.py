"""A phase's probe: running from its first step to its last, journalled, judged after
the phase, carried across a resume."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from automation.core.errors import PreconditionFailed
from automation.core.results import ProbeOutcome
from automation.model.context import HookContext
from automation.model.phase import PhaseProbe, Scenario
from automation.run.journal import Journal, StepStatus
from tests.automation.fakes import Counter, FakeEngine, Killed, small_scenario
from tests.automation.run.test_runner import make_runner


@dataclasses.dataclass
class FakeProbing:
    """Counts what ran while it was open; fails its verdict when told to."""

    counter: Counter
    failure: str | None = None
    open: bool = False
    seen_runs: int = 0
    earlier: list[Mapping[str, Any] | None] = dataclasses.field(default_factory=list)

    def __enter__(self) -> FakeProbing:
        self.open = True
        self.at_start = sum(self.counter.runs.values())
        return self

    def __exit__(self, *exc: object) -> None:
        self.open = False
        self.seen_runs += sum(self.counter.runs.values()) - self.at_start

    def outcome(self, earlier: Mapping[str, Any] | None) -> ProbeOutcome:
        self.earlier.append(earlier)
        total = self.seen_runs + int((earlier or {}).get("runs", 0))
        return ProbeOutcome(f"saw {total} hook run(s)", {"runs": total}, self.failure)


def _probed(counter: Counter, probing: list[FakeProbing], failure: str | None = None) -> Scenario:
    def start(_ctx: HookContext) -> FakeProbing:
        probing.append(FakeProbing(counter, failure))
        return probing[-1]

    probe = PhaseProbe(name="watch", summary="watch the phase", start=start)
    scenario = small_scenario(counter)
    phases = tuple(
        dataclasses.replace(p, probe=probe) if p.id == "drain" else p for p in scenario.phases
    )
    return dataclasses.replace(scenario, phases=phases)


def test_the_probe_spans_the_phase_and_its_outcome_is_journalled(tmp_path: Path) -> None:
    counter, probing = Counter(), []
    scenario = _probed(counter, probing)
    journal = Journal(tmp_path / "j.json", "s")
    make_runner(FakeEngine(), journal).run(scenario.phases)

    assert len(probing) == 1 and probing[0].seen_runs == 1  # the drain hook, inside it
    record = journal.get("drain", "probe:watch")
    assert record is not None and record.status is StepStatus.SUCCEEDED
    assert record.message == "saw 1 hook run(s)" and record.details == {"runs": 1}


def test_a_failed_verdict_stops_after_the_phase_and_the_next_run_goes_on(tmp_path: Path) -> None:
    counter, probing = Counter(), []
    scenario = _probed(counter, probing, failure="the API went unanswered for 40s.")
    journal = Journal(tmp_path / "j.json", "s")
    with pytest.raises(PreconditionFailed, match=r"^drain finished, but the API went"):
        make_runner(FakeEngine(), journal).run(scenario.phases)
    record = journal.get("drain", "probe:watch")
    assert record is not None and record.status is StepStatus.FAILED
    assert record.details == {"runs": 1}
    assert journal.is_done("drain", "after:no-pods-left")

    make_runner(FakeEngine(), journal).run(scenario.phases)  # nothing left: no new probe
    assert len(probing) == 1 and counter.runs["drain"] == 1


def test_a_probe_cut_short_keeps_what_it_saw_and_a_resume_adds_to_it(tmp_path: Path) -> None:
    counter, probing = Counter(kill_in="drain"), []
    scenario = _probed(counter, probing)
    journal = Journal(tmp_path / "j.json", "s")
    with pytest.raises(Killed):
        make_runner(FakeEngine(), journal).run(scenario.phases)
    cut = journal.get("drain", "probe:watch")
    assert cut is not None and cut.status is StepStatus.INTERRUPTED
    assert cut.details == {"runs": 1}

    make_runner(FakeEngine(), journal).run(scenario.phases)
    assert probing[1].earlier == [{"runs": 1}]
    done = journal.get("drain", "probe:watch")
    assert done is not None and done.status is StepStatus.SUCCEEDED
    assert done.details == {"runs": 2}  # the killed run's and the resumed run's


def test_a_probe_whose_process_died_after_the_last_step_is_closed_on_the_next_run(
    tmp_path: Path,
) -> None:
    counter, probing = Counter(), []
    scenario = _probed(counter, probing)
    journal = Journal(tmp_path / "j.json", "s")
    make_runner(FakeEngine(), journal).run(scenario.phases)
    journal.start("drain", "probe:watch")  # as a run killed right after the last step leaves it

    make_runner(FakeEngine(), journal).run(scenario.phases)
    record = journal.get("drain", "probe:watch")
    assert record is not None and record.status is StepStatus.INTERRUPTED
    assert record.message == "its process ended before the probe reported"
    assert len(probing) == 1  # nothing left to probe
