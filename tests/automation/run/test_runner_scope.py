"""The runner's preview scope: judged against the checkpoint, checked by the engine, or whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from automation.core.errors import StepFailedError
from automation.engine.adapter import PreviewOutcome
from automation.model.phase import Phase
from automation.review.checkpoint import Verdict
from automation.run.journal import Journal, StepStatus
from automation.run.runner import Runner
from automation.run.scope import PreviewScope
from tests.automation.fakes import Counter, FakeEngine, small_scenario
from tests.automation.run.test_runner import make_context

ROOT = "urn:pulumi:s::p::pulumi:pulumi:Stack::p-s"
NET = "urn:pulumi:s::p::aws:ec2/vpc:Vpc::net"
SUBNET = "urn:pulumi:s::p::aws:ec2/subnet:Subnet::net-a"
UNCHANGED = Verdict((), 12, ROOT, whole=False)
WHOLE = Verdict(("aws:ec2/vpc:Vpc::net: the aws provider's configuration",), 12, ROOT)
CHANGED = Verdict(
    ("aws:ec2/vpc:Vpc::net: inputs cidrBlock",),
    12,
    ROOT,
    differing=(NET,),
    whole=False,
    dependents={NET: frozenset({SUBNET}), ROOT: frozenset({NET})},
)


def runner(
    engine: FakeEngine, journal: Journal, verdicts: dict[str, Verdict], mode: PreviewScope
) -> tuple[Runner, list[str]]:
    judged: list[str] = []

    def judge(phase: Phase) -> Verdict:
        judged.append(phase.id)
        return verdicts.get(phase.id, WHOLE)

    made = Runner(
        engine,
        journal,
        make_context,
        confirm=lambda _q: True,
        sleep=lambda _s: None,
        judge=judge,
        preview_scope=mode,
    )
    return made, judged


def engine_calls(engine: FakeEngine, name: str) -> dict[str, tuple[str, ...]]:
    return {args[0]: args[1] for call, args in engine.calls if call == name}


def test_judged_targets_what_differs_and_the_stack_alone_when_nothing_does(
    tmp_path: Path,
) -> None:
    engine = FakeEngine()
    journal = Journal(tmp_path / "s.journal.json", "s")
    phases = small_scenario(Counter()).phases
    made, judged = runner(engine, journal, {"workers": UNCHANGED, "drain": CHANGED}, "judged")

    made.run(phases)

    assert judged == ["network", "workers", "drain"]
    # nothing differs: no preview, and the update reaches the stack resource alone
    assert "workers" not in engine_calls(engine, "preview")
    assert engine_calls(engine, "up")["workers"] == (ROOT,)
    # what differs and what depends on it, never the stack resource's children at large
    assert engine_calls(engine, "preview")["drain"] == (ROOT, SUBNET, NET)
    assert engine_calls(engine, "up")["drain"] == (ROOT, SUBNET, NET)
    assert engine_calls(engine, "preview")["network"] == ()  # a provider's change: everything
    # workers' and drain's previews and updates: the engine adds no dependents itself
    assert engine.dependents[2:] == [False, False, False]
    preview = journal.get("workers", "preview")
    assert preview is not None
    assert "no preview; the update reaches the stack resource alone" in preview.message
    assert preview.details["checkpoint"] == UNCHANGED.summary()
    assert preview.details["previewed"] == "skipped"
    assert preview.details["guard"] == "accepted" and preview.details["changes"] == []
    drain = journal.get("drain", "preview")
    assert drain is not None and "2 resources the checkpoint says differ" in drain.message
    network = journal.get("network", "preview")
    assert network is not None and network.details["previewed"] == "every resource"
    assert "differ from the checkpoint" in network.details["checkpoint"]


def test_full_never_judges(tmp_path: Path) -> None:
    engine = FakeEngine()
    journal = Journal(tmp_path / "s.journal.json", "s")
    made, judged = runner(engine, journal, {"workers": UNCHANGED}, "full")

    made.run(small_scenario(Counter()).phases)

    assert judged == []
    assert set(engine_calls(engine, "preview").values()) == {()}
    assert set(engine_calls(engine, "up").values()) == {()}


def test_verify_previews_everything_and_stops_where_the_engine_disagrees(tmp_path: Path) -> None:
    engine = FakeEngine(plans={"workers": [("create", "aws:ec2/instance:Instance", "w-1")]})
    journal = Journal(tmp_path / "s.journal.json", "s")
    made, _ = runner(engine, journal, {"network": UNCHANGED, "workers": CHANGED}, "verify")

    with pytest.raises(StepFailedError, match=r"workers: the engine's preview changes create w-1"):
        made.run(small_scenario(Counter()).phases)

    # network agreed with its preview of every resource, and was updated as any phase
    assert engine_calls(engine, "up")["network"] == ()
    assert engine_calls(engine, "preview")["workers"] == ()
    assert "workers" not in engine_calls(engine, "up")
    record = journal.get("workers", "preview")
    assert record is not None and record.status is StepStatus.FAILED


def test_verify_accepts_what_the_judgement_placed(tmp_path: Path) -> None:
    # the fake's URNs are urn:pulumi:s::p::<type>::<name>: SUBNET depends on NET
    engine = FakeEngine(plans={"workers": [("create", "aws:ec2/subnet:Subnet", "net-a")]})
    journal = Journal(tmp_path / "s.journal.json", "s")
    made, _ = runner(engine, journal, {"workers": CHANGED}, "verify")
    seen: list[PreviewOutcome] = []
    original = engine.preview

    def preview(*args: Any, **kwargs: Any) -> PreviewOutcome:
        seen.append(original(*args, **kwargs))
        return seen[-1]

    engine.preview = preview  # type: ignore[method-assign]
    made.run(small_scenario(Counter()).phases)

    assert [c.urn for o in seen for c in o.changed()] == [SUBNET]
    assert engine_calls(engine, "up")["workers"] == ()  # updated whole, as previewed


def test_a_resumed_phase_is_judged_again(tmp_path: Path) -> None:
    """The preview runs again on resume, and with it the judgement: what the stack
    holds now decides, not what an earlier process saw."""
    engine = FakeEngine(kill_on="up:workers")
    journal = Journal(tmp_path / "s.journal.json", "s")
    phases = small_scenario(Counter()).phases
    made, _ = runner(engine, journal, {"workers": UNCHANGED}, "judged")
    with pytest.raises(BaseException, match="up:workers"):
        made.run(phases)

    again, judged = runner(engine, Journal(tmp_path / "s.journal.json", "s"), {}, "judged")
    again.run(phases)

    assert judged[0] == "workers"
    workers_ups = [args[1] for call, args in engine.calls if call == "up" and args[0] == "workers"]
    assert workers_ups == [(ROOT,), ()]


def test_a_phase_with_its_own_target_patterns_keeps_them_judged(tmp_path: Path) -> None:
    """A phase that names its targets (``Phase.targets``) is narrowed to those and what
    depends on them, never widened to what else the checkpoint says differs."""
    engine = FakeEngine(urns=[ROOT, NET, SUBNET, "urn:pulumi:s::p::aws:ec2/eip:Eip::other"])
    journal = Journal(tmp_path / "s.journal.json", "s")
    phase = Phase(id="network", summary="the network only", targets=("net",))
    differs_elsewhere = Verdict(
        ("aws:ec2/eip:Eip::other: inputs tags",),
        12,
        ROOT,
        differing=("urn:pulumi:s::p::aws:ec2/eip:Eip::other",),
        whole=False,
        dependents=CHANGED.dependents,
    )
    made, _ = runner(engine, journal, {"network": differs_elsewhere}, "judged")

    made.run([phase])

    assert engine_calls(engine, "preview")["network"] == (ROOT, SUBNET, NET)
    assert engine_calls(engine, "up")["network"] == (ROOT, SUBNET, NET)
    assert engine.dependents == [False, False]
