"""A migration that mixes hand-run phases with ``kubeshift run`` ends in the same world.

Usage: .venv/bin/python -m benchmarks.by_hand [--stack local]

Two rehearsals on fresh sandboxes, in the same run:

1. the reference: ``kubeshift run --yes`` from baseline to cleanup;
2. the mixed one: ``run --to ingress-move``; then, as an engineer with the sandbox's
   exports would (``tests.rehearsal.by_hand``): ``pulumi up`` at retire-old-workers
   (refused), ``kubeshift hooks drain-workers --before``, ``pulumi up`` at
   drain-workers, ``hooks drain-workers --after``, ``pulumi up`` at
   retire-old-workers, control-plane-1 with ``kubeshift:skipProgressCheck``; then
   ``run --yes`` to the end.

Printed: each by-hand command's exit code and seconds, whether the final world
(moto's inventory, nodes, workloads, outputs; ids masked, the progress record left
out) equals the reference's, and the two wall times.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import fields
from pathlib import Path

from benchmarks.faults import KUBESHIFT, _kubeshift, _run, _sandbox, _world
from tests.rehearsal.by_hand import Shell, drain_by_hand


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", default="local")
    stack = parser.parse_args().stack
    with _sandbox(stack) as env:
        began = time.monotonic()
        if _run(env, stack).returncode != 0:
            print("the reference run failed")
            return 1
        reference_seconds = time.monotonic() - began
        expected = _world(env, stack)
    with _sandbox(stack) as env:
        began = time.monotonic()
        first = _kubeshift(env, "--stack", stack, "run", "--yes", "--to", "ingress-move")
        exports = _kubeshift(env, "--stack", stack, "sandbox", "env").stdout
        by_hand = drain_by_hand(KUBESHIFT, stack, exports, env, Path(env["KUBESHIFT_STATE_DIR"]))
        rest = _run(env, stack)
        mixed_seconds = time.monotonic() - began
        actual = _world(env, stack) if first.returncode == rest.returncode == 0 else {}
    for field in fields(by_hand):
        value = getattr(by_hand, field.name)
        if isinstance(value, Shell):
            print(f"  {field.name:<24} exit {value.code}  {value.seconds:5.1f}s")
    checks = {
        "skip-ahead refused, nothing changed": not by_hand.refused.ok
        and by_hand.world_before_refusal == by_hand.world_after_refusal,
        "hooks and hand-run updates succeeded": all(
            s.ok
            for s in (
                by_hand.hooks_before,
                by_hand.drain_up,
                by_hand.hooks_after,
                by_hand.retire_up,
            )
        ),
        "the runs around them succeeded": first.returncode == rest.returncode == 0,
        "world equals the pure run's": actual == expected,
    }
    for name, ok in checks.items():
        print(f"{'ok ' if ok else 'FAIL'} {name}")
    for key in sorted(set(expected) | set(actual)):
        if expected.get(key) != actual.get(key):
            print(f"  differs: {key}: {expected.get(key)!r} != {actual.get(key)!r}")
    print(
        f"wall {mixed_seconds:.0f}s mixed (by hand + run) vs {reference_seconds:.0f}s by run "
        f"({mixed_seconds / reference_seconds:.2f}x)"
    )
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
