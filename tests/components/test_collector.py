"""The program collects cyclic garbage rarely while it declares resources."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pulumi_aws as aws
import pytest

from automation.review.render import record
from components import collector


@pytest.fixture
def default_thresholds() -> Iterator[tuple[int, int, int]]:
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield gc.get_threshold()
    gc.set_threshold(*saved)


def _youngest_collections_during_record(resources: int) -> int:
    started: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    def program() -> None:
        for index in range(resources):
            aws.ec2.SecurityGroup(f"group-{index}", description=f"group {index}")

    gc.callbacks.append(count)
    try:
        record(program)
    finally:
        gc.callbacks.remove(count)
    return len(started)


def test_thresholds_are_restored_after_the_block(default_thresholds: tuple) -> None:
    with collector.collecting_rarely():
        assert gc.get_threshold() == (collector.YOUNGEST_THRESHOLD, 10, 10)
    assert gc.get_threshold() == default_thresholds


def test_thresholds_are_restored_when_the_block_raises(default_thresholds: tuple) -> None:
    with pytest.raises(RuntimeError), collector.collecting_rarely():
        raise RuntimeError("the program failed")
    assert gc.get_threshold() == default_thresholds


def test_a_render_collects_far_less_often_than_at_the_default(
    default_thresholds: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    rarely = _youngest_collections_during_record(150)
    monkeypatch.setattr(collector, "YOUNGEST_THRESHOLD", default_thresholds[0])
    by_default = _youngest_collections_during_record(150)
    assert by_default > 10 * max(rarely, 1)
    assert gc.get_threshold() == default_thresholds
