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
