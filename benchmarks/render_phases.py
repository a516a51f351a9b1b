"""Time the offline render of every phase of a stack (default: vpc-move-example).

Run on demand: ``.venv/bin/python benchmarks/render_phases.py [STACK] [--runs N] [--smoke]``.
Prints one row per phase: resources, worker ASGs (source/target), the median and the
range of ``--runs`` renders in this process, the median and range of ``--runs`` whole
``kubeshift render`` commands with an empty cache (interpreter, imports, config, render,
storing the entry: what a user waits for, and what the 3 s goal is about), and the same
phase served by the render cache (``automation.review.render_cache``) as ``kubeshift render``
and ``diff`` reuse it. The first
render also pays for importing the provider SDK modules, so one warm-up render runs
first. Then the largest phase is profiled once, and its time is split by whose code ran
(``tottime`` per file, grouped): kubeshift's program and components, the Pulumi SDK's
runtime, asyncio, protobuf, and builtins (called almost only by the SDK). Checked first
(``ok``/``FAIL`` lines, exit 1 on a failure): every phase rendered resources and worker
groups, the cache served the second render, every command exited 0. ``--smoke`` makes
those checks on the first phase with one run each, and prints no figures.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KUBESHIFT = str(Path(sys.executable).with_name("kubeshift"))
sys.path.insert(0, str(ROOT))

from automation.review.render import Rendering, render_program  # noqa: E402
from automation.review.render_cache import cached_render  # noqa: E402
from components.contract.loading import load_config, load_stack_file  # noqa: E402

OWNERS = (
    ("kubeshift", (str(ROOT / "components"), str(ROOT / "automation"), str(ROOT / "__main__"))),
    ("pulumi_aws", ("/pulumi_aws/",)),
    ("pulumi SDK", ("/pulumi/",)),
    ("asyncio", ("/asyncio/",)),
    ("protobuf", ("/google/",)),
)


def owner(filename: str) -> str:
    for name, marks in OWNERS:
        if any(mark in filename for mark in marks):
            return name
    return "builtins and other" if filename == "~" or "<" in filename else "stdlib and other"


def profile(values: dict, phase: str) -> dict[str, float]:
    profiler = cProfile.Profile()
    profiler.enable()
    render_program(values, phase)
    profiler.disable()
    shares: dict[str, float] = {}
    for (filename, _, _), (_, _, tottime, _, _) in pstats.Stats(profiler).stats.items():  # type: ignore[attr-defined]
        shares[owner(filename)] = shares.get(owner(filename), 0.0) + tottime
    return shares


def command_seconds(stack: str, phase: str, state: Path) -> tuple[float, int]:
    """One whole ``kubeshift render`` as a user runs it (interpreter, imports, render):
    its seconds and exit status."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PULUMI_", "KUBESHIFT_"))}
    env["KUBESHIFT_STATE_DIR"] = str(state)
    began = time.perf_counter()
    done = subprocess.run(
        [KUBESHIFT, "--stack", stack, "render", "--phase", phase],
        env=env, cwd=ROOT, capture_output=True,
    )  # fmt: skip
    return time.perf_counter() - began, done.returncode


@dataclass
class PhaseRun:
    """One phase's renders: in this process, through the cache, as whole commands."""

    phase: str
    resources: int
    worker_groups: tuple[int, int]  # source, target
    renders: list[float]
    cached: float
    hit: bool
    commands: list[float]
    exits: list[int]


def measure(values: dict, stack: str, phase: str, runs: int, cache: Path, state: Path) -> PhaseRun:
    renders = [render_program(values, phase) for _ in range(runs)]
    cached_render(values, phase, cache)  # renders once more, and stores
    began = time.perf_counter()
    _, hit = cached_render(values, phase, cache)
    cached = time.perf_counter() - began
    commands = [command_seconds(stack, phase, state / f"{phase}-{run}") for run in range(runs)]
    return PhaseRun(
        phase, len(renders[-1].resources), worker_groups(renders[-1]),
        sorted(r.seconds for r in renders), cached, hit,
        sorted(c[0] for c in commands), [c[1] for c in commands],
    )  # fmt: skip


def worker_groups(rendering: Rendering) -> tuple[int, int]:
    """The worker ASGs the phase declares in the source VPC and in the target VPC."""
    tags = [
        {t["key"]: t["value"] for t in r.inputs["tags"]}
        for r in rendering.resources
        if r.type == "aws:autoscaling/group:Group"
    ]
    pools = [t.get("kubeshift.io/network") for t in tags if "kubeshift.io/pool" in t]
    return pools.count("source"), pools.count("target")


def cached_command_seconds(stack: str, phase: str, state: Path) -> tuple[float, bool]:
    """A whole ``kubeshift render`` served by the render cache: a first command fills
    the cache, the second is timed; whether both exited 0 and the second left the one
    entry as the first wrote it (a miss rewrites it)."""
    cache = state / "render-cache"
    _, first = command_seconds(stack, phase, state)
    written = {p.name: p.stat().st_mtime_ns for p in cache.glob("*.json")}
    seconds, second = command_seconds(stack, phase, state)
    kept = {p.name: p.stat().st_mtime_ns for p in cache.glob("*.json")}
    return seconds, first == second == 0 and len(written) == 1 and kept == written


def checks(rows: list[PhaseRun], command_served: bool) -> dict[str, bool]:
    """What must hold for the times to mean anything: every phase rendered something
    with worker groups, the cache served the second render (in this process, and a
    whole command), every command succeeded."""
    return {
        "every phase rendered resources and worker groups": bool(rows)
        and all(r.resources and sum(r.worker_groups) for r in rows),
        "the second render was served by the cache": bool(rows) and all(r.hit for r in rows),
        "a whole kubeshift render was served by the cache": command_served,
        "every kubeshift render exited 0": bool(rows) and all(not any(r.exits) for r in rows),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("stack", nargs="?", default="vpc-move-example")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="one phase, one run: the checks")
    args = parser.parse_args()
    values = load_stack_file(ROOT / "stacks" / f"Pulumi.{args.stack}.yaml")
    phases = load_config(values).phase_ids
    runs = 1 if args.smoke else args.runs
    if args.smoke:
        phases = phases[:1]
    if not args.smoke:  # the first render also imports the provider SDK: not timed
        warm = time.perf_counter()
        render_program(values, phases[0])
        print(f"warm-up render: {time.perf_counter() - warm:.2f}s (load {os.getloadavg()[0]:.1f})")
    with tempfile.TemporaryDirectory() as cache_dir, tempfile.TemporaryDirectory() as state:
        rows = [
            measure(values, args.stack, phase, runs, Path(cache_dir), Path(state))
            for phase in phases
        ]
        largest = max(rows, key=lambda r: r.resources)
        warm_command, served = cached_command_seconds(
            args.stack, largest.phase, Path(state) / "warm"
        )
        verdict = checks(rows, served)
        for name, ok in verdict.items():
            print(f"{'ok ' if ok else 'FAIL'} {name}")
        if not args.smoke:
            _print_figures(rows, largest, warm_command)
            _print_profile(values, largest)
    return 0 if all(verdict.values()) else 1


def _print_figures(rows: list[PhaseRun], largest: PhaseRun, warm: float) -> None:
    print(
        "| phase | resources | worker ASGs source/target | render median s | min-max s "
        "| whole command median s | min-max s | cached s |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        source, target = r.worker_groups
        print(
            f"| {r.phase} | {r.resources} | {source}/{target} | "
            f"{statistics.median(r.renders):.2f} | {r.renders[0]:.2f}-{r.renders[-1]:.2f} | "
            f"{statistics.median(r.commands):.2f} | {r.commands[0]:.2f}-{r.commands[-1]:.2f} | "
            f"{r.cached:.3f} |"
        )
    medians = [statistics.median(r.renders) for r in rows]
    commands = [statistics.median(r.commands) for r in rows]
    print(
        f"render in this process: slowest phase median {max(medians):.2f}s, "
        f"median of medians {statistics.median(medians):.2f}s"
    )
    print(
        f"whole command with an empty cache: slowest phase median {max(commands):.2f}s, "
        f"median of medians {statistics.median(commands):.2f}s; "
        f"`kubeshift render --phase {largest.phase}` served by the cache {warm:.2f}s"
    )


def _print_profile(values: dict, largest: PhaseRun) -> None:
    shares = profile(values, largest.phase)
    total = sum(shares.values())
    print(
        f"profile of {largest.phase} ({largest.resources} resources), "
        f"tottime {total:.2f}s under cProfile:"
    )
    for name, spent in sorted(shares.items(), key=lambda item: -item[1]):
        print(f"  {name:<20} {spent:6.2f}s  {spent / total:6.1%}")


if __name__ == "__main__":
    sys.exit(main())
