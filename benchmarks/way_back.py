"""How long ``kubeshift back`` takes a phase back, against going forward through it.

Usage: .venv/bin/python -m benchmarks.way_back [--stack local] [--rounds 3]
    [--from PHASE] [--to PHASE] [--smoke]

One sandbox of the stack, its cluster built as kops would have and adopted as the
shared rehearsal adopts it. With ``--from`` (default baseline) the stack first goes to
that phase, untimed. Each round goes forward one phase per command (``run --yes --to P``
for each phase after ``--from`` up to ``--to``, default drain-workers), then back one
phase per command (``back --to`` the phase before, the latest first), each command
timed; the next round goes forward again from where the last went back. The world
(``benchmarks.faults._world``: moto's whole inventory, the nodes, the workloads, the
stack's outputs without its progress record) is read at ``--from`` and after each
round's way back. ``--from retire-old-workers --to control-plane-3`` times the
control-plane members' moves and their ways back.

Printed: per phase, the median seconds forward and back over the rounds and back's
share of forward; the checks — every command succeeded, every phase went back, the
world after each way back is the adopted one (what differs, if not). ``--smoke``: two
rounds to shared-resources, every check, no timing claim.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.faults import (
    _kubeshift,
    _print_checks,
    _sandbox,
    _world,
    world_differences,
)

SMOKE_TO = "shared-resources"


@dataclass(frozen=True)
class Timed:
    """One command: its exit code and wall seconds."""

    code: int
    seconds: float


@dataclass
class Round:
    """One way forward and back: per phase, the command that went through it each way,
    and what the world after the way back has otherwise than the adopted one's."""

    forward: dict[str, Timed] = field(default_factory=dict)
    back: dict[str, Timed] = field(default_factory=dict)
    differences: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Every command succeeded, every phase went back and the world is as adopted."""
        codes = [t.code for t in (*self.forward.values(), *self.back.values())]
        return (
            bool(self.forward)
            and self.back.keys() == self.forward.keys()
            and (not any(codes) and not self.differences)
        )


def way_back_checks(rounds: Sequence[Round]) -> dict[str, bool]:
    """The benchmark's verdict over its rounds."""
    return {
        "at least two rounds (forward again after a way back)": len(rounds) >= 2,
        "every run --to succeeded": all(t.code == 0 for r in rounds for t in r.forward.values()),
        "every back --to succeeded": all(t.code == 0 for r in rounds for t in r.back.values()),
        "every phase gone through went back": all(
            r.forward and sorted(r.back) == sorted(r.forward) for r in rounds
        ),
        "the world after each way back is the adopted one": all(not r.differences for r in rounds),
    }


def medians(rounds: Sequence[Round]) -> dict[str, tuple[float, float]]:
    """Per phase, in forward order: (median seconds forward, median seconds back)."""
    order = list(rounds[0].forward) if rounds else []
    return {
        phase: (
            statistics.median(r.forward[phase].seconds for r in rounds),
            statistics.median(r.back[phase].seconds for r in rounds if phase in r.back),
        )
        for phase in order
        if all(phase in r.back for r in rounds)
    }


def _timed(env: dict[str, str], stack: str, *args: str) -> Timed:
    began = time.monotonic()
    done = _kubeshift(env, "--stack", stack, *args, "--yes", timeout=3600)
    if done.returncode != 0:
        print(f"kubeshift {' '.join(args)} exited {done.returncode}: {done.stderr[-1500:]}")
    return Timed(done.returncode, time.monotonic() - began)


def one_round(
    env: dict[str, str], stack: str, phases: Sequence[str], start_world: Mapping[str, Any]
) -> Round:
    """Forward through ``phases[1:]`` a phase per command, then back to ``phases[0]``."""
    went = Round()
    for phase in phases[1:]:
        went.forward[phase] = _timed(env, stack, "run", "--to", phase)
        if went.forward[phase].code != 0:
            return went
    for before, phase in reversed(list(itertools.pairwise(phases))):
        went.back[phase] = _timed(env, stack, "back", "--to", before)
        if went.back[phase].code != 0:
            return went
    went.differences = world_differences(start_world, _world(env, stack))
    return went


def _phases(env: dict[str, str], stack: str, start: str, to: str) -> list[str]:
    """The plan's phases from ``start`` to ``to``, both included."""
    import json

    plan = json.loads(_kubeshift(env, "--stack", stack, "plan", "--json").stdout)
    ids = [p["id"] for p in plan["phases"]]
    return ids[ids.index(start) : ids.index(to) + 1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", default="local")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--from", dest="start", default="baseline", help="where rounds start")
    parser.add_argument("--to", default="drain-workers", help="the last phase of each round")
    parser.add_argument("--smoke", action="store_true", help=f"two rounds to {SMOKE_TO}")
    args = parser.parse_args()
    start, to, count = (
        ("baseline", SMOKE_TO, 2) if args.smoke else (args.start, args.to, args.rounds)
    )
    with _sandbox(args.stack) as env:
        phases = _phases(env, args.stack, start, to)
        if start != "baseline":
            reached = _timed(env, args.stack, "run", "--to", start)
            if reached.code != 0:
                return 1
            print(f"reached {start} in {reached.seconds:.0f}s (not counted)")
        start_world = _world(env, args.stack)  # as adopted, or at --from
        rounds = []
        for _ in range(count):
            rounds.append(one_round(env, args.stack, phases, start_world))
            if not rounds[-1].complete:
                break
    checks = way_back_checks(rounds)
    _print_checks(checks)
    for number, went in enumerate(rounds, 1):
        for line in went.differences:
            print(f"  round {number} differs: {line}")
    if not args.smoke:
        print(f"{'phase':<20} {'forward s':>10} {'back s':>8} {'back/forward':>13}")
        for phase, (forward, back) in medians(rounds).items():
            print(f"{phase:<20} {forward:>10.1f} {back:>8.1f} {back / forward:>12.2f}x")
        print(
            f"medians of {len(rounds)} rounds; each command's wall time, its process start included"
        )
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
