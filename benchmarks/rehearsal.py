"""The whole rehearsal timed, and kubeshift's cost against running `pulumi up` by hand.

Run on demand: ``.venv/bin/python benchmarks/rehearsal.py [STACK] [--smoke]`` (default
``local``). Needs the testbin cache (``scripts/testbin``). Two sandboxes are started one
after the other, each from nothing, through the console script as a user runs it; each
builds the cluster as kops would have (no Pulumi state), so each is adopted first as the
shared rehearsal and the demo adopt it (``adopt --write-config``, the proposal taken as
the stack file, ``adopt --yes --keep-live``):

1. ``kubeshift sandbox up``, adoption, then ``kubeshift run --yes``: the whole scenario
   with its hooks and gates. The journal gives each phase's wall time, engine time
   (preview + update) and hook/gate time.
2. ``kubeshift sandbox up`` again, adoption, then what an infra engineer would otherwise
   type per phase the run updated, in the shell ``kubeshift sandbox env`` prepares:
   ``pulumi config set kubeshift:phase <id>`` and ``pulumi up --yes`` — no hooks, no
   gates, no journal (``kubeshift:skipProgressCheck`` set to the phase, since the stack
   refuses a hand-run update whose phase's hooks did not run).

kubeshift's overhead per phase is its wall time minus the engine's preview and update
time minus the time inside hooks and gates: config step, journal writes, guard. The
last column compares with the hand-run: wall minus hooks/gates minus ``pulumi up``.
Checked before any figure is printed: every journal step succeeded and every phase after
the adopted baseline ran its update. ``--smoke`` stops both at the first phase after
baseline: the checks, no timing claim. ``--preview-scope`` (default ``judged``, what a
user's stack runs with) sets ``kubeshift:runtime.preview_scope`` of the kubeshift leg;
the sandbox alone would map ``verify``, which previews every resource.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.faults import adopt, preview_scope, sandbox_env, stack_file  # noqa: E402

KUBESHIFT = str(Path(sys.executable).with_name("kubeshift"))
ENGINE_STEPS = {"preview", "update", "config"}
SKIP_KEY = "kubeshift:skipProgressCheck"
PROBE_PREFIX = "probe:"  # a phase's probe record (``probe:api``) spans its steps


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


def journal_problems(records: Iterable[Mapping[str, Any]], updated: Sequence[str]) -> list[str]:
    """Why the journal does not show the run the figures claim (empty when it does):
    a step that did not succeed, or a phase of ``updated`` without a succeeded update.
    Figures of a run that stopped half-way would compare half a migration with the
    whole hand-run."""
    problems = []
    done = set()
    for r in records:
        if r["status"] != "succeeded":
            problems.append(f"{r['phase']}/{r['step']} {r['status']}: {r['message'][:200]}")
        elif r["step"] == "update":
            done.add(r["phase"])
    problems += [f"{phase}: no update succeeded" for phase in updated if phase not in done]
    return problems


def phase_figures(records: Sequence[Mapping[str, Any]], figures: dict[str, PhaseFigures]) -> None:
    """Fill wall/engine/hooks per phase from the journal's records."""
    for record in records:
        row = figures.setdefault(record["phase"], PhaseFigures(record["phase"]))
        spent = (record["finished"] or 0.0) - (record["started"] or 0.0)
        if record["step"] in ("preview", "update"):
            row.engine += spent
        elif record["step"] != "config" and not record["step"].startswith(PROBE_PREFIX):
            row.hooks += spent  # a probe spans the phase's other steps: not a step's time
    for phase, row in figures.items():
        mine = [
            r
            for r in records
            if r["phase"] == phase and r["started"] is not None and r["finished"] is not None
        ]
        if mine:
            row.wall = max(r["finished"] for r in mine) - min(r["started"] for r in mine)


def planned(env: dict[str, str], stack: str, to: str | None) -> list[str]:
    """The scenario's phases up to ``to``."""
    _, text = _run([KUBESHIFT, "--stack", stack, "plan", "--json"], env)
    phases = [p["id"] for p in json.loads(text)["phases"]]
    return phases[: phases.index(to) + 1] if to else phases


def with_kubeshift(
    stack: str, figures: dict[str, PhaseFigures], to: str | None, scope: str = "judged"
) -> tuple[float, float, float, list[str]]:
    """Sandbox up, adoption, ``run --yes`` with ``scope`` as the preview scope; fill
    wall/engine/hooks per phase. Returns (up, adopt, run) seconds and the journal's
    problems."""
    until = ["--to", to] if to else []
    with tempfile.TemporaryDirectory(prefix="kubeshift-bench-") as state:
        env = sandbox_env(Path(state))
        try:
            up, _ = _run([KUBESHIFT, "--stack", stack, "sandbox", "up"], env)
            env, _ = _sandbox_env(env, stack)
            adopted = adopt(env, stack)
            preview_scope(stack_file(env, stack), scope)
            run, _ = _run([KUBESHIFT, "--stack", stack, "run", "--yes", *until], env)
            _, text = _run([KUBESHIFT, "--stack", stack, "--json", "status"], env)
            phases = planned(env, stack, to)
        finally:
            subprocess.run([KUBESHIFT, "sandbox", "down"], env=env, capture_output=True)
    records = json.loads(text)
    phase_figures(records, figures)
    return up, adopted, run, journal_problems(records, phases[1:])  # the first: adopted


def by_hand(stack: str, figures: dict[str, PhaseFigures]) -> float:
    """Sandbox up, adoption, then ``pulumi config set`` + ``pulumi up --yes`` per phase
    kubeshift's run updated."""
    with tempfile.TemporaryDirectory(prefix="kubeshift-bench-") as state:
        env = sandbox_env(Path(state))
        try:
            up, _ = _run([KUBESHIFT, "--stack", stack, "sandbox", "up"], env)
            shell, cwd = _sandbox_env(env, stack)
            env = shell
            adopt(env, stack)
            for phase, row in figures.items():
                if not row.engine:
                    continue  # the adopted baseline: the run skipped it too
                began = time.perf_counter()
                for key in ("kubeshift:phase", SKIP_KEY):
                    _run(["pulumi", "config", "set", "--stack", stack, key, phase], shell, cwd)
                _run(["pulumi", "up", "--yes", "--non-interactive", "--stack", stack], shell, cwd)
                row.by_hand = time.perf_counter() - began
        finally:
            subprocess.run([KUBESHIFT, "sandbox", "down"], env=env, capture_output=True)
    return up


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stack", nargs="?", default="local")
    parser.add_argument("--smoke", action="store_true", help="both legs to the first phase")
    parser.add_argument(
        "--preview-scope", choices=("judged", "verify", "full"), default="judged",
        help="kubeshift:runtime.preview_scope of the kubeshift leg",
    )  # fmt: skip
    args = parser.parse_args()
    stack = args.stack
    figures: dict[str, PhaseFigures] = {}
    print(f"stack {stack}, load avg {os.getloadavg()[0]:.1f}, {os.cpu_count()} cpus")
    to = planned(sandbox_env(Path(tempfile.gettempdir())), stack, None)[1] if args.smoke else None
    print(f"preview scope of the kubeshift leg: {args.preview_scope}")
    up, adopted, run, problems = with_kubeshift(stack, figures, to, args.preview_scope)
    print(f"{'ok ' if not problems else 'FAIL'} every step succeeded, every phase updated")
    for problem in problems:
        print(f"  {problem}")
    if problems:
        return 1
    up_again = by_hand(stack, figures)
    print("ok   every phase's pulumi up by hand succeeded")  # _run stops at a failure
    if args.smoke:
        return 0
    _print_figures(figures, up, up_again, adopted, run)
    return 0


def _print_figures(
    figures: Mapping[str, PhaseFigures], up: float, up_again: float, adopted: float, run: float
) -> None:
    print(
        f"sandbox up: {up:.1f}s (second: {up_again:.1f}s); adopt: {adopted:.1f}s; "
        f"kubeshift run --yes: {run:.1f}s"
    )
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
    sys.exit(main())
