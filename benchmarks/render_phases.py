"""Time the offline render of every phase of a stack (default: vpc-move-example).

Run on demand: ``.venv/bin/python benchmarks/render_phases.py [STACK] [--runs N]``.
Prints one row per phase: resources, worker ASGs (source/target), the median and the
range of ``--runs`` renders in this process, the median and range of ``--runs`` whole
``kubeshift render`` commands with an empty cache (interpreter, imports, config, render,
storing the entry: what a user waits for, and what the 3 s goal is about), and the same
phase served by the render cache (``automation.render_cache``) as ``kubeshift render``
and ``diff`` reuse it. The first
render also pays for importing the provider SDK modules, so one warm-up render runs
first. Then the largest phase is profiled once, and its time is split by whose code ran
(``tottime`` per file, grouped): kubeshift's program and components, the Pulumi SDK's
runtime, asyncio, protobuf, and builtins (called almost only by the SDK).
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KUBESHIFT = str(Path(sys.executable).with_name("kubeshift"))
sys.path.insert(0, str(ROOT))

from automation.render import render_program  # noqa: E402
from automation.render_cache import cached_render  # noqa: E402
from components.config import load_config, load_stack_file  # noqa: E402

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


def command_seconds(stack: str, phase: str, state: Path) -> float:
    """One whole ``kubeshift render`` as a user runs it (interpreter, imports, render)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PULUMI_", "KUBESHIFT_"))}
    env["KUBESHIFT_STATE_DIR"] = str(state)
    began = time.perf_counter()
    subprocess.run(
        [KUBESHIFT, "--stack", stack, "render", "--phase", phase],
        env=env, cwd=ROOT, check=True, capture_output=True,
    )  # fmt: skip
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("stack", nargs="?", default="vpc-move-example")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    values = load_stack_file(ROOT / "stacks" / f"Pulumi.{args.stack}.yaml")
    phases = load_config(values).phase_ids
    warm = time.perf_counter()
    render_program(values, phases[0])
    print(f"warm-up render: {time.perf_counter() - warm:.2f}s (load avg {os.getloadavg()[0]:.1f})")
    print(
        "| phase | resources | worker ASGs source/target | render median s | min-max s "
        "| whole command median s | min-max s | cached s |"
    )
    print("|---|---|---|---|---|---|---|---|")
    largest = (0, phases[0])
    medians = []
    commands = []
    with tempfile.TemporaryDirectory() as cache_dir, tempfile.TemporaryDirectory() as state:
        for phase in phases:
            runs = [render_program(values, phase) for _ in range(args.runs)]
            rendering = runs[-1]
            seconds = sorted(r.seconds for r in runs)
            medians.append(statistics.median(seconds))
            largest = max(largest, (len(rendering.resources), phase))
            cached_render(values, phase, Path(cache_dir))  # renders once more, and stores
            began = time.perf_counter()
            _, hit = cached_render(values, phase, Path(cache_dir))
            cached = time.perf_counter() - began
            assert hit, f"{phase}: the second render was not served by the cache"
            whole = sorted(
                command_seconds(args.stack, phase, Path(state) / f"{phase}-{run}")
                for run in range(args.runs)
            )
            commands.append(statistics.median(whole))
            asgs = [
                {t["key"]: t["value"] for t in r.inputs["tags"]}
                for r in rendering.resources
                if r.type == "aws:autoscaling/group:Group"
            ]
            source = sum(
                t.get("kubeshift.io/network") == "source" and "kubeshift.io/pool" in t for t in asgs
            )
            target = sum(
                t.get("kubeshift.io/network") == "target" and "kubeshift.io/pool" in t for t in asgs
            )
            print(
                f"| {phase} | {len(rendering.resources)} | {source}/{target} | "
                f"{statistics.median(seconds):.2f} | {seconds[0]:.2f}-{seconds[-1]:.2f} | "
                f"{statistics.median(whole):.2f} | {whole[0]:.2f}-{whole[-1]:.2f} | "
                f"{cached:.3f} |"
            )
        warm = command_seconds(args.stack, largest[1], Path(state) / f"{largest[1]}-0")
    print(
        f"render in this process: slowest phase median {max(medians):.2f}s, "
        f"median of medians {statistics.median(medians):.2f}s"
    )
    print(
        f"whole command with an empty cache: slowest phase median {max(commands):.2f}s, "
        f"median of medians {statistics.median(commands):.2f}s; "
        f"`kubeshift render --phase {largest[1]}` served by the cache {warm:.2f}s"
    )
    shares = profile(values, largest[1])
    total = sum(shares.values())
    print(f"profile of {largest[1]} ({largest[0]} resources), tottime {total:.2f}s under cProfile:")
    for name, spent in sorted(shares.items(), key=lambda item: -item[1]):
        print(f"  {name:<20} {spent:6.2f}s  {spent / total:6.1%}")


if __name__ == "__main__":
    main()
