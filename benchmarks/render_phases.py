"""Time the offline render of every phase of a stack (default: vpc-move-example).

Run on demand: ``.venv/bin/python benchmarks/render_phases.py [STACK]``. Prints one
row per phase: resources, worker ASGs (source/target), seconds. The first render also
pays for importing the provider SDK modules, so one warm-up render runs first.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from automation.render import render_program  # noqa: E402
from components.config import load_config, load_stack_file  # noqa: E402


def main(stack: str = "vpc-move-example") -> None:
    values = load_stack_file(ROOT / "stacks" / f"Pulumi.{stack}.yaml")
    phases = load_config(values).phase_ids
    warm = time.perf_counter()
    render_program(values, phases[0])
    print(f"warm-up render: {time.perf_counter() - warm:.2f}s (load avg {os.getloadavg()[0]:.1f})")
    print("| phase | resources | worker ASGs source/target | seconds |")
    print("|---|---|---|---|")
    for phase in phases:
        rendering = render_program(values, phase)
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
            f"{rendering.seconds:.2f} |"
        )


if __name__ == "__main__":
    main(*sys.argv[1:])
