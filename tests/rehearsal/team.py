"""A migration two operators share through the stack's S3 backend, from the outside.

Operator A runs the first phases; while A's run holds the stack (A's process paused
right after its lock shows in the bucket, so the moment cannot pass), operator B — a
checkout of its own, a state directory of its own, its own user name, the same backend
— is refused naming A. Once A's run is done, B's ``status`` shows A's journal; a lock
left past its lease by a run on another machine refuses B until B's ``recover`` clears
it; then B runs the remaining phases to the end.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from automation.sandbox.workspace import STATE_BUCKET
from tests.support.run_locks import foreign_lock

SECOND_OPERATOR = "operator-b"
PROJECT = "kubeshift"  # the sandbox workspace's Pulumi project
LOCK_DEADLINE = 300.0


@dataclass(frozen=True)
class Handover:
    """What each operator's commands answered, and what the bucket held."""

    first_run: Any
    lock_while_held: dict[str, Any]
    refused_while_held: Any
    status_after_first: list[dict[str, Any]]
    refused_stale: Any
    recovered: Any
    second_run: Any
    keys_at_end: list[str]


def lock_key(stack: str) -> str:
    return f".kubeshift/{PROJECT}/{stack}/lock.json"


def second_operators_env(env: dict[str, str], state: Path) -> dict[str, str]:
    """Operator B: a copy of the workspace (its stack file), a state directory of its
    own and another user name; the backend is the one A's environment names."""
    workspace = Path(env["KUBESHIFT_PROJECT_DIR"])
    copy = workspace.with_name(workspace.name + "-" + SECOND_OPERATOR)
    copy.mkdir(exist_ok=True)
    shutil.copy(workspace / "Pulumi.yaml", copy / "Pulumi.yaml")
    shutil.copytree(workspace / "stacks", copy / "stacks", dirs_exist_ok=True)
    return {
        **env,
        "KUBESHIFT_PROJECT_DIR": str(copy),
        "KUBESHIFT_STATE_DIR": str(state / SECOND_OPERATOR),
        "USER": SECOND_OPERATOR,
        "LOGNAME": SECOND_OPERATOR,
    }


def _stale_lock(s3: Any, stack: str) -> None:
    """The lock a run on another machine left when it died, its lease long over."""
    body = foreign_lock("carol@ci-runner-9", renewed=time.time() - 3600)
    s3.put_object(Bucket=STATE_BUCKET, Key=lock_key(stack), Body=body)


def _read_lock(s3: Any, stack: str) -> dict[str, Any] | None:
    try:
        body = s3.get_object(Bucket=STATE_BUCKET, Key=lock_key(stack))["Body"].read()
    except s3.exceptions.NoSuchKey:
        return None
    return dict(json.loads(body))


def hand_over(
    env: dict[str, str],
    state: Path,
    stack: str,
    phase: str,
    s3: Any,
    kubeshift: Callable[..., Any],
    argv0: str,
    cwd: Path,
) -> Handover:
    """A runs to ``phase``; B is refused meanwhile, reads A's journal, clears a stale
    lock with ``recover`` and runs on to the end."""
    second = second_operators_env(env, state)
    first = subprocess.Popen(
        [argv0, "--stack", stack, "--json", "run", "--yes", "--to", phase],
        cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + LOCK_DEADLINE
        held = _read_lock(s3, stack)
        while held is None and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
            held = _read_lock(s3, stack)
        assert held is not None, "operator A's run never showed its lock in the bucket"
        os.kill(first.pid, signal.SIGSTOP)  # A holds the stack while B tries
        try:
            refused = kubeshift(second, "--stack", stack, "run", "--yes", timeout=300)
        finally:
            os.kill(first.pid, signal.SIGCONT)
        out, err = first.communicate(timeout=900)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    first_run = {"code": first.returncode, "stdout": out, "stderr": err}
    status = kubeshift(second, "--stack", stack, "status", "--json").json()
    _stale_lock(s3, stack)
    stale = kubeshift(second, "--stack", stack, "run", "--yes", timeout=300)
    recovered = kubeshift(second, "--stack", stack, "--json", "recover", "--yes", timeout=900)
    finished = kubeshift(second, "--stack", stack, "--json", "run", "--yes")
    keys = [
        o["Key"]
        for o in s3.list_objects_v2(Bucket=STATE_BUCKET).get("Contents", [])
    ]  # fmt: skip
    return Handover(first_run, held, refused, status, stale, recovered, finished, sorted(keys))
