"""A migration that mixes hand-run phases with ``kubeshift run`` ends in the same world.

Usage: .venv/bin/python -m benchmarks.by_hand [--stack local] [--smoke]

Two rehearsals on fresh sandboxes, in the same run, each on the cluster ``sandbox up``
builds as kops would have, adopted first as the shared rehearsal adopts it
(``adopt --write-config``, the proposal taken as the stack file, ``adopt --yes
--keep-live``):

1. the reference: ``kubeshift run --yes`` from baseline to cleanup;
2. the mixed one: ``run --to ingress-move``; then, as an engineer with the sandbox's
   exports would (``tests.rehearsal.by_hand``): ``pulumi up`` at retire-old-workers
   (refused), ``kubeshift hooks drain-workers --before``, ``pulumi up`` at
   drain-workers, ``hooks drain-workers --after``, ``pulumi up`` at
   retire-old-workers, control-plane-1 with ``kubeshift:skipProgressCheck``; then
   ``run --yes`` to the end.

Printed: each by-hand command's exit code and seconds, the checks (the skip-ahead
refused with nothing changed, every hook and hand-run update succeeded, the runs
around them succeeded, the final world — moto's inventory, nodes, workloads, outputs;
ids masked, the progress record left out — equals the reference's), and the two wall
times. ``--smoke`` stops both rehearsals after control-plane-1, the last phase done by
hand: every check, no timing claim.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.faults import (
    KUBESHIFT,
    _kubeshift,
    _print_checks,
    _run,
    _sandbox,
    _world,
    world_differences,
)
from tests.rehearsal.by_hand import ByHand, Shell, drain_by_hand

SMOKE_TO = "control-plane-1"  # the last phase the mixed rehearsal runs by hand


def by_hand_checks(
    by_hand: ByHand, runs_ok: bool, expected: Mapping[str, Any], actual: Mapping[str, Any]
) -> dict[str, bool]:
    """The benchmark's verdict: what the hand-run commands did, and the world after."""
    hand_run = (
        by_hand.hooks_before,
        by_hand.drain_up,
        by_hand.hooks_after,
        by_hand.retire_hooks,
        by_hand.retire_up,
    )
    return {
        "skip-ahead refused, nothing changed": not by_hand.refused.ok
        and by_hand.world_before_refusal == by_hand.world_after_refusal,
        "hooks and hand-run updates succeeded": all(s.ok for s in hand_run),
        "the override (skipProgressCheck) succeeded": by_hand.override_up.ok,
        "the runs around them succeeded": runs_ok,
        "world equals the pure run's": bool(expected) and actual == expected,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", default="local")
    parser.add_argument("--smoke", action="store_true", help=f"both runs to {SMOKE_TO}")
    args = parser.parse_args()
    stack, until = args.stack, ("--to", SMOKE_TO) if args.smoke else ()
    with _sandbox(stack) as env:
        began = time.monotonic()
        if _run(env, stack, *until).returncode != 0:
            print("the reference run failed")
            return 1
        reference_seconds = time.monotonic() - began
        expected = _world(env, stack)
    with _sandbox(stack) as env:
        began = time.monotonic()
        first = _run(env, stack, "--to", "ingress-move")
        exports = _kubeshift(env, "--stack", stack, "sandbox", "env").stdout
        by_hand = drain_by_hand(KUBESHIFT, stack, exports, env, Path(env["KUBESHIFT_SANDBOX"]))
        rest = _run(env, stack, *until)
        mixed_seconds = time.monotonic() - began
        runs_ok = first.returncode == rest.returncode == 0
        actual = _world(env, stack) if runs_ok else {}
    for field in fields(by_hand):
        value = getattr(by_hand, field.name)
        if isinstance(value, Shell):
            print(f"  {field.name:<24} exit {value.code}  {value.seconds:5.1f}s")
    checks = by_hand_checks(by_hand, runs_ok, expected, actual)
    _print_checks(checks)
    for line in world_differences(expected, actual):
        print(f"  differs: {line}")
    if not args.smoke:
        print(
            f"wall {mixed_seconds:.0f}s mixed (by hand + run) vs {reference_seconds:.0f}s by run "
            f"({mixed_seconds / reference_seconds:.2f}x)"
        )
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
