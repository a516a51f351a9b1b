"""Run a benchmark's ``--smoke`` as a user runs it, and read the checks it printed.

Each benchmark prints one line per correctness check, ``ok  <check>`` or ``FAIL <check>``,
and exits 1 when one failed. CI runs the smallest run that makes every check, so a
benchmark that rots (an import, a renamed API, a check that no longer holds) fails CI;
the timings are not looked at.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.user_env import user_environment

REPO = Path(__file__).resolve().parents[2]


def run_smoke(script: str, state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``.venv/bin/python benchmarks/<script> --smoke [args]`` from the repository, with
    no AWS, Pulumi or kubeshift settings of this session (the moto fixture's endpoint,
    say) but the test binaries' location, and its state under ``state``."""
    env = user_environment(state)
    return subprocess.run(
        [sys.executable, f"benchmarks/{script}", *args, "--smoke"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def checks_printed(done: subprocess.CompletedProcess[str]) -> dict[str, bool]:
    """Each check line the run printed: its name, and whether it held."""
    found = {}
    for line in done.stdout.splitlines():
        if line.startswith(("ok ", "FAIL ")):
            verdict, name = line.split(" ", 1)
            found[name.strip()] = verdict == "ok"
    return found


def report(done: subprocess.CompletedProcess[str]) -> str:
    return f"exit {done.returncode}\nstdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
