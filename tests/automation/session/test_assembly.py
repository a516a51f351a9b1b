"""What a session assembles for its runner: here, the checkpoint judge's phase."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from automation.model.phase import CHANGES_NOTHING, Phase
from automation.session.assembly import checkpoint_judge


def test_an_undo_phase_is_judged_with_the_program_at_the_phase_it_applies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Taking dns-cutover back applies target-workers: the judgement renders the program
    there (rendered at the undo's own id there would be no such phase)."""
    asked: list[str] = []

    def judge(config: Any, phase: str, deployment: Any, stack_config: Any) -> str:
        asked.append(phase)
        return "verdict"

    monkeypatch.setattr("automation.review.checkpoint.judge", judge)
    point = SimpleNamespace(deployment={"resources": []}, config={})
    engine: Any = SimpleNamespace(checkpoint=lambda: point)
    judged = checkpoint_judge({}, engine)
    forward = Phase(id="dns-cutover", summary="s", changes=CHANGES_NOTHING)
    undo = Phase(
        id="back-from-dns-cutover",
        summary="s",
        changes=CHANGES_NOTHING,
        program_phase="target-workers",
        undoes=("dns-cutover",),
    )
    assert (judged(forward), judged(undo)) == ("verdict", "verdict")
    assert asked == ["dns-cutover", "target-workers"]
