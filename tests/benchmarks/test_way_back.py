"""``benchmarks/way_back.py``'s verdict and figures, each check shown able to fail, with
no sandbox (the world it compares is read as the shared rehearsal reads it, which
``tests/rehearsal/test_vpc_move.py`` compares after its own way back)."""

from __future__ import annotations

import pytest

from benchmarks.way_back import Round, Timed, medians, way_back_checks

PHASES = ("target-network", "shared-resources")


def _round(forward: float = 10.0, back: float = 5.0) -> Round:
    return Round(
        forward={p: Timed(0, forward) for p in PHASES}, back={p: Timed(0, back) for p in PHASES}
    )


def _failed(rounds: list[Round]) -> list[str]:
    return [name for name, ok in way_back_checks(rounds).items() if not ok]


def test_two_clean_rounds_pass_every_check() -> None:
    rounds = [_round(), _round()]
    assert _failed(rounds) == [] and all(r.complete for r in rounds)


@pytest.mark.parametrize(
    ("spoil", "failed"),
    [
        (lambda r: r.forward.update({"target-network": Timed(3, 1.0)}), "every run --to succeeded"),
        (lambda r: r.back.update({"target-network": Timed(5, 1.0)}), "every back --to succeeded"),
        (lambda r: r.back.pop("target-network"), "every phase gone through went back"),
        (
            lambda r: r.differences.append(
                "vpcs: ['10.0.0.0/16'] != ['10.0.0.0/16', '10.1.0.0/16']"
            ),
            "the world after each way back is the adopted one",
        ),
    ],
)
def test_each_check_fails_alone(spoil: object, failed: str) -> None:
    rounds = [_round(), _round()]
    spoil(rounds[1])  # type: ignore[operator]
    assert _failed(rounds) == [failed]
    assert not rounds[1].complete


def test_one_round_is_not_enough_and_no_round_is_nothing() -> None:
    assert _failed([_round()]) == ["at least two rounds (forward again after a way back)"]
    assert "every phase gone through went back" in _failed([Round(), Round()])


def test_medians_are_per_phase_over_the_rounds() -> None:
    rounds = [_round(10, 4), _round(12, 6), _round(30, 5)]
    assert medians(rounds) == dict.fromkeys(PHASES, (12.0, 5.0))
