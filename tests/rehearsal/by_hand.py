"""The drain-workers phase done by hand in the middle of the rehearsal (issue: by-hand safety).

An engineer with the sandbox's exports runs ``pulumi`` himself and ``kubeshift hooks``
around it, as docs/by-hand.md shows; a second operator, in a checkout with
no state directory of its own, reads what the stack records (``status --recorded``).
Every command is a subprocess.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SKIP_KEY = "kubeshift:skipProgressCheck"


@dataclass(frozen=True)
class Shell:
    """A command run after ``eval "$(kubeshift sandbox env)"``."""

    code: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def output(self) -> str:
        """Both streams, for a failure's message."""
        return self.stdout + self.stderr

    @property
    def ok(self) -> bool:
        return self.code == 0


@dataclass(frozen=True)
class ByHand:
    refused: Shell  # pulumi up at retire-old-workers before the drain
    world_before_refusal: frozenset[tuple[str, str]]
    world_after_refusal: frozenset[tuple[str, str]]
    hooks_before: Shell
    drain_up: Shell
    hooks_after: Shell
    retire_hooks: Shell  # the old ingress load balancer's DNS drain, before it goes
    retire_up: Shell
    override_up: Shell
    second_operator_status: Shell

    def recorded(self) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = json.loads(self.second_operator_status.stdout)
        return rows


def shell_in_sandbox(exports: str, env: dict[str, str]) -> Callable[[str], Shell]:
    def run(script: str) -> Shell:
        began = time.monotonic()
        proc = subprocess.run(
            ["bash", "-euc", f"{exports}\n{script}"],
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        return Shell(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - began)

    return run


def drain_by_hand(
    kubeshift: str, stack: str, exports: str, env: dict[str, str], scratch: Path
) -> ByHand:
    """Refused skip-ahead, then the safe sequence, an override, and a second operator's view."""
    sh = shell_in_sandbox(exports, env)
    up = f"pulumi up --stack {stack} --yes --skip-preview --non-interactive"
    phase = f"pulumi config set --stack {stack} kubeshift:phase"
    hooks = f"{kubeshift} --stack {stack} hooks"

    def world() -> frozenset[tuple[str, str]]:
        exported = sh(f"pulumi stack export --stack {stack}")
        resources = json.loads(exported.stdout)["deployment"]["resources"]
        return frozenset((r["urn"], r.get("id", "")) for r in resources)

    before = world()
    refused = sh(f"{phase} retire-old-workers\n{up}")
    after = world()
    hooks_before = sh(f"{hooks} drain-workers --before --yes")
    drain_up = sh(f"{phase} drain-workers\n{up}")
    hooks_after = sh(f"{hooks} drain-workers --after --yes")
    retire_hooks = sh(f"{hooks} retire-old-workers --before --yes")
    retire_up = sh(f"{phase} retire-old-workers\n{up}")
    # control-plane-1 without its before-gate: the operator who knows better, recorded.
    override_up = sh(
        f"{phase} control-plane-1\npulumi config set --stack {stack} {SKIP_KEY} control-plane-1\n"
        f"{up}\npulumi config rm --stack {stack} {SKIP_KEY}"
    )
    fresh = scratch / "second-operator"
    fresh.mkdir(parents=True, exist_ok=True)
    status = sh(
        f"export KUBESHIFT_STATE_DIR={fresh}\n{kubeshift} --stack {stack} status --recorded --json"
    )
    return ByHand(
        refused,
        before,
        after,
        hooks_before,
        drain_up,
        hooks_after,
        retire_hooks,
        retire_up,
        override_up,
        status,
    )
