"""``kubeshift hooks``: one side of one phase, refused when the stack says it is too early."""

from __future__ import annotations

from pathlib import Path

import pytest

from automation.config.clients import StaticClients
from automation.core.errors import UserError
from automation.session.hooks import HooksRequest, execute_hooks
from components.contract.progress import Mark, Progress
from tests.automation.fakes import FakeEngine

REPO = Path(__file__).resolve().parents[3]
STACK = "vpc-move-small"


@pytest.fixture(autouse=True)
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KUBESHIFT_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


def hooks(engine: FakeEngine, phase: str, side: str, *, dry_run: bool = False) -> None:
    request = HooksRequest(REPO, STACK, phase, side, yes=True, dry_run=dry_run)  # type: ignore[arg-type]
    execute_hooks(request, engine_factory=lambda *_: engine, clients=StaticClients())


def finished(*phases: str) -> Progress:
    return Progress(
        marks=tuple(
            Mark(phase=p, milestone=m, by="run")
            for p in phases
            for m in ("before", "update", "after")
        )
    )


def test_after_steps_wait_for_the_phases_update(state: Path) -> None:
    engine = FakeEngine(progress=finished("baseline"))
    with pytest.raises(UserError) as caught:
        hooks(engine, "target-network", "after")
    assert "no successful update recorded" in str(caught.value)
    assert "`pulumi up` at kubeshift:phase target-network" in str(caught.value)
    assert engine.calls == [] and not state.exists()


@pytest.mark.parametrize("dry_run", [False, True])
def test_before_steps_wait_for_every_earlier_phase(state: Path, dry_run: bool) -> None:
    engine = FakeEngine(progress=finished("baseline", "target-network"))
    with pytest.raises(UserError) as caught:
        hooks(engine, "drain-workers", "before", dry_run=dry_run)
    text = str(caught.value)
    assert "comes too early" in text and "after shared-resources" in text
    assert "run --to ingress-move" in text and "\n" not in text
    assert [name for name, _ in engine.calls if name in {"up", "record"}] == []


def test_a_phase_without_steps_on_that_side_is_recorded_at_once(state: Path) -> None:
    engine = FakeEngine(progress=finished("baseline"))
    hooks(engine, "target-network", "before")
    assert engine.progress.has("target-network", "before")
    assert engine.progress.steps is not None
    assert engine.progress.steps["drain-workers"] == ("before", "after")
    assert [args for name, args in engine.calls if name == "record"] == [("before target-network",)]


def test_unknown_phase_is_one_sentence(state: Path) -> None:
    with pytest.raises(UserError, match="Unknown phase 'drain'"):
        hooks(FakeEngine(), "drain", "before")


def undo(engine: FakeEngine, phase: str, side: str) -> None:
    request = HooksRequest(REPO, STACK, phase, side, undo=True, yes=True)  # type: ignore[arg-type]
    execute_hooks(request, engine_factory=lambda *_: engine, clients=StaticClients())


def test_a_phase_is_taken_back_by_hand_around_a_pulumi_up_at_the_phase_before(
    state: Path,
) -> None:
    """``hooks PHASE --undo --before``, ``pulumi up`` at the phase before by hand, then
    ``--after``: the stack's record drops the phase and keeps who took it back."""
    engine = FakeEngine(progress=finished("baseline", "target-network"))
    engine.phase = "target-network"
    undo(engine, "target-network", "before")
    with pytest.raises(UserError) as caught:
        undo(engine, "target-network", "after")
    assert "last deployed phase 'target-network', not 'baseline'" in str(caught.value)
    assert engine.progress.finished("target-network") is not None

    engine.phase = "baseline"  # the engineer's `pulumi up` at kubeshift:phase baseline
    undo(engine, "target-network", "after")
    assert engine.progress.finished("target-network") is None
    assert [u.phase for u in engine.progress.undone] == ["target-network"]
    assert engine.progress.finished("baseline") is not None


@pytest.mark.parametrize(
    ("phase", "said"),
    [
        ("target-network", "Phase 'shared-resources' ran after 'target-network'"),
        ("ingress-nodeport", "Phase 'ingress-nodeport' has not run on this stack"),
        ("baseline", "is the first phase"),
    ],
)
def test_taking_back_by_hand_is_refused_out_of_order(state: Path, phase: str, said: str) -> None:
    engine = FakeEngine(progress=finished("baseline", "target-network", "shared-resources"))
    engine.phase = "shared-resources"
    with pytest.raises(UserError) as caught:
        undo(engine, phase, "before")
    assert said in str(caught.value) and "\n" not in str(caught.value)
    assert [name for name, _ in engine.calls if name in {"up", "record"}] == []


def test_a_point_of_no_return_is_not_taken_back_by_hand(state: Path) -> None:
    from automation.scenarios import build_scenario
    from components.contract.loading import load_config, load_stack_file

    config = load_config(load_stack_file(REPO / "stacks" / f"Pulumi.{STACK}.yaml"))
    engine = FakeEngine(progress=finished(*build_scenario(config).ids()))
    engine.phase = "cleanup"
    with pytest.raises(UserError) as caught:
        undo(engine, "cleanup", "before")
    assert "Phase 'cleanup' is a point of no return" in str(caught.value)
