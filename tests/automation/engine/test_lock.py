"""Telling a stale Pulumi lock from a live one, from the engine's own refusal."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from automation.engine.lock import Liveness, LockHolder, locked_sentence, parse_holders

REFUSAL = (
    "error: the stack is currently locked by 1 lock(s). Either wait for the other "
    "process(es) to end or delete the lock file with `pulumi cancel`.\n"
    "  file:///state/.pulumi/locks/organization/kubeshift/local/0b5c.json: created by "
    "root@{host} (pid {pid}) at 2026-11-23T09:01:02Z\n"
)


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return int(done.stdout)


@pytest.fixture
def live_pulumi(tmp_path: Path):
    """A live process whose executable is named ``pulumi`` (a copy of ``sleep``)."""
    binary = tmp_path / "pulumi"
    binary.symlink_to("/bin/sleep")
    process = subprocess.Popen([str(binary), "60"])
    cmdline = Path(f"/proc/{process.pid}/cmdline")
    while not cmdline.read_bytes():  # Popen may return before the exec shows in /proc
        time.sleep(0.01)
    yield process.pid
    process.kill()
    process.wait()


def test_the_holder_is_read_from_the_backends_refusal() -> None:
    (holder,) = parse_holders(REFUSAL.format(host="ci-7", pid=4242))
    assert holder == LockHolder(4242, "root", "ci-7", "2026-11-23T09:01:02Z")


def test_a_dead_holder_is_stale_and_the_sentence_names_the_recovery() -> None:
    holders = parse_holders(REFUSAL.format(host=socket.gethostname(), pid=_dead_pid()))
    assert [h.liveness() for h in holders] == [Liveness.DEAD]
    sentence = locked_sentence("prod", holders, "update the stack")
    assert "stale" in sentence and "kubeshift --stack prod recover" in sentence
    assert "--force" not in sentence


def test_a_pid_reused_by_another_program_is_not_a_live_holder() -> None:
    import os

    (holder,) = parse_holders(REFUSAL.format(host=socket.gethostname(), pid=os.getpid()))
    assert holder.liveness() is Liveness.DEAD, "this pytest is no pulumi"


def test_a_live_holder_is_waited_for_not_recovered(live_pulumi: int) -> None:
    holders = parse_holders(REFUSAL.format(host=socket.gethostname(), pid=live_pulumi))
    assert [h.liveness() for h in holders] == [Liveness.ALIVE]
    sentence = locked_sentence("prod", holders, "update the stack")
    assert f"pid {live_pulumi}" in sentence and "wait for it" in sentence
    assert "recover" not in sentence


def test_a_holder_on_another_machine_needs_a_forced_recovery() -> None:
    holders = parse_holders(REFUSAL.format(host="laptop-of-someone-else", pid=1))
    assert [h.liveness() for h in holders] == [Liveness.UNKNOWN]
    assert "recover --force" in locked_sentence("prod", holders, "update the stack")


def test_a_backend_that_names_no_holder_gets_the_plain_sentence() -> None:
    sentence = locked_sentence("prod", [], "update the stack")
    assert "locked by another update" in sentence and "\n" not in sentence
