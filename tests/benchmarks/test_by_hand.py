"""``benchmarks/by_hand.py``'s verdict, each check shown able to fail, with no sandbox.

The same checks pass on the shared rehearsal's hand-run phases
(``tests/rehearsal/test_benchmark_checks.py``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from benchmarks.by_hand import by_hand_checks
from tests.rehearsal.by_hand import ByHand, Shell

GROUPS = [("10.1.0.0/16", "nodes")]
WORLD: dict[str, Any] = {"vpcs": ["10.0.0.0/16", "10.1.0.0/16"], "security groups": GROUPS}
STATE = frozenset({("urn:pulumi:local::kubeshift::aws:ec2/vpc:Vpc::source", "vpc-0abc123")})


def _shell(code: int) -> Shell:
    return Shell(code=code, stdout="", stderr="", seconds=1.0)


def _by_hand() -> ByHand:
    """What an engineer's safe sequence gives: the skip-ahead refused, the rest done."""
    ok = _shell(0)
    return ByHand(
        refused=_shell(3), world_before_refusal=STATE, world_after_refusal=STATE,
        hooks_before=ok, drain_up=ok, hooks_after=ok, retire_hooks=ok, retire_up=ok,
        override_up=ok,
        second_operator_status=ok,
    )  # fmt: skip


def _failed(checks: dict[str, bool]) -> list[str]:
    return [name for name, ok in checks.items() if not ok]


def test_the_safe_sequence_passes_every_check() -> None:
    assert _failed(by_hand_checks(_by_hand(), True, WORLD, WORLD)) == []


def test_a_skip_ahead_that_went_through_or_changed_the_state_fails() -> None:
    accepted = replace(_by_hand(), refused=_shell(0))
    changed = replace(_by_hand(), world_after_refusal=frozenset())
    for by_hand in (accepted, changed):
        checks = by_hand_checks(by_hand, True, WORLD, WORLD)
        assert _failed(checks) == ["skip-ahead refused, nothing changed"]


def test_a_failed_hook_update_or_override_fails() -> None:
    hook = by_hand_checks(replace(_by_hand(), hooks_after=_shell(1)), True, WORLD, WORLD)
    assert _failed(hook) == ["hooks and hand-run updates succeeded"]
    override = by_hand_checks(replace(_by_hand(), override_up=_shell(255)), True, WORLD, WORLD)
    assert _failed(override) == ["the override (skipProgressCheck) succeeded"]


def test_a_failed_run_or_another_world_fails() -> None:
    assert _failed(by_hand_checks(_by_hand(), False, WORLD, {})) == [
        "the runs around them succeeded",
        "world equals the pure run's",
    ]
    leftover = {**WORLD, "security groups": [*GROUPS, ("10.1.0.0/16", "nodes-2")]}
    assert _failed(by_hand_checks(_by_hand(), True, WORLD, leftover)) == [
        "world equals the pure run's"
    ]
    assert _failed(by_hand_checks(_by_hand(), True, {}, {})) == ["world equals the pure run's"]
