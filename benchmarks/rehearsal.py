"""The whole rehearsal timed, and kubeshift's cost against running `pulumi up` by hand.

Run on demand: ``.venv/bin/python benchmarks/rehearsal.py [STACK]`` (default ``local``).
Needs the testbin cache (``scripts/testbin``). Two sandboxes are started one after the
other, each from nothing, through the console script as a user runs it:

1. ``kubeshift sandbox up`` then ``kubeshift run --yes``: the whole scenario with its
   hooks and gates. The journal gives each phase's wall time, engine time (preview +
   update) and hook/gate time.
2. ``kubeshift sandbox up`` again, then what an infra engineer would otherwise type per
   phase, in the shell ``kubeshift sandbox env`` prepares: ``pulumi config set
   kubeshift:phase <id>`` and ``pulumi up --yes`` — no hooks, no gates, no journal.

kubeshift's overhead per phase is its wall time minus the engine's preview and update
time minus the time inside hooks and gates: config step, journal writes, guard. The
last column compares with the hand-run: wall minus hooks/gates minus ``pulumi up``.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KUBESHIFT = str(Path(sys.executable).with_name("kubeshift"))
ENGINE_STEPS = {"preview", "update", "config"}


@dataclass
class PhaseFigures:
    phase: str
    wall: float = 0.0
    engine: float = 0.0
    hooks: float = 0.0
    by_hand: float = 0.0

    @property
    def overhead(self) -> float:
        """kubeshift's own time: wall minus the engine's preview/update and hooks/gates."""
        return self.wall - self.engine - self.hooks

    @property
    def versus_hand(self) -> float:
        """Wall minus hooks/gates minus the same phase's `pulumi up` run by hand."""
        return self.wall - self.hooks - self.by_hand


def _run(argv: list[str], env: dict[str, str], cwd: Path = ROOT) -> tuple[float, str]:
    began = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - began
    if proc.returncode != 0:
        sys.exit(f"{shlex.join(argv)} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    return seconds, proc.stdout


def _base_env(state: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("AWS_", "PULUMI_", "KUBESHIFT_")) and k != "KUBECONFIG"
    }
    env["KUBESHIFT_STATE_DIR"] = str(state)
    return env


def _sandbox_env(env: dict[str, str], stack: str) -> tuple[dict[str, str], Path]:
    """Apply ``kubeshift sandbox env``'s exports; return them and the directory it cds to."""
    _, text = _run([KUBESHIFT, "--stack", stack, "sandbox", "env"], env)
    shell = dict(env)
    cwd = ROOT
    for line in text.splitlines():
        words = shlex.split(line)
        if words[:1] == ["export"]:
            key, _, value = words[1].partition("=")
            shell[key] = value
        elif words[:1] == ["unset"]:
            shell.pop(words[1], None)
        elif words[:1] == ["cd"]:
            cwd = Path(words[1])
    return shell, cwd


def with_kubeshift(stack: str, figures: dict[str, PhaseFigures]) -> tuple[float, float]:
    """Sandbox up + ``run --yes``; fill wall/engine/hooks per phase. Returns (up, run) s."""
    with tempfile.TemporaryDirectory(prefix="kubeshift-bench-") as state:
        env = _base_env(Path(state))
        try:
            up, _ = _run([KUBESHIFT, "--stack", stack, "sandbox", "up"], env)
            run, _ = _run([KUBESHIFT, "--stack", stack, "run", "--yes"], env)
            _, text = _run([KUBESHIFT, "--stack", stack, "--json", "status"], env)
        finally:
            subprocess.run([KUBESHIFT, "sandbox", "down"], env=env, capture_output=True)
    for record in json.loads(text):
        row = figures.setdefault(record["phase"], PhaseFigures(record["phase"]))
        spent = (record["finished"] or 0.0) - (record["started"] or 0.0)
        if record["step"] in ("preview", "update"):
            row.engine += spent
        elif record["step"] != "config":
            row.hooks += spent
    for phase, row in figures.items():
        mine = [r for r in json.loads(text) if r["phase"] == phase and r["started"]]
        row.wall = max(r["finished"] for r in mine) - min(r["started"] for r in mine)
    return up, run


def by_hand(stack: str, figures: dict[str, PhaseFigures]) -> float:
    """Sandbox up, then ``pulumi config set`` + ``pulumi up --yes`` per phase."""
    with tempfile.TemporaryDirectory(prefix="kubeshift-bench-") as state:
        env = _base_env(Path(state))
        try:
            up, _ = _run([KUBESHIFT, "--stack", stack, "sandbox", "up"], env)
            shell, cwd = _sandbox_env(env, stack)
            for phase, row in figures.items():
                began = time.perf_counter()
                _run(["pulumi", "config", "set", "--stack", stack, "kubeshift:phase", phase],
                     shell, cwd)  # fmt: skip
                _run(["pulumi", "up", "--yes", "--stack", stack], shell, cwd)
                row.by_hand = time.perf_counter() - began
        finally:
            subprocess.run([KUBESHIFT, "sandbox", "down"], env=env, capture_output=True)
    return up


def main(stack: str = "local") -> None:
    figures: dict[str, PhaseFigures] = {}
    print(f"stack {stack}, load avg {os.getloadavg()[0]:.1f}, {os.cpu_count()} cpus")
    up, run = with_kubeshift(stack, figures)
    up_again = by_hand(stack, figures)
    print(f"sandbox up: {up:.1f}s (second: {up_again:.1f}s); kubeshift run --yes: {run:.1f}s")
    print("| phase | kubeshift wall s | engine s | hooks+gates s | overhead s (% of engine) "
          "| pulumi up by hand s | vs hand s |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for row in figures.values():
        share = row.overhead / row.engine if row.engine else 0.0
        print(f"| {row.phase} | {row.wall:.1f} | {row.engine:.1f} | {row.hooks:.1f} | "
              f"{row.overhead:.1f} ({share:.1%}) | {row.by_hand:.1f} | "
              f"{row.versus_hand:+.1f} |")  # fmt: skip
    wall = sum(r.wall for r in figures.values())
    hooks = sum(r.hooks for r in figures.values())
    hand = sum(r.by_hand for r in figures.values())
    engine = sum(r.engine for r in figures.values())
    print(f"kubeshift overhead: {wall - engine - hooks:.1f}s = "
          f"{(wall - engine - hooks) / engine:.1%} of {engine:.0f}s engine time")  # fmt: skip
    print(f"total: kubeshift {wall:.0f}s (hooks and gates {hooks:.0f}s), by hand {hand:.0f}s; "
          f"kubeshift without hooks/gates = {(wall - hooks) / hand:.2f}x the hand-run "
          f"({(wall - hooks - hand) / hand:+.0%})")  # fmt: skip


if __name__ == "__main__":
    main(*sys.argv[1:])
