"""Who holds a stack's Pulumi lock, and whether that process still lives.

A DIY (file or object-store) backend writes one lock file per running update, naming
the process: ``created by user@host (pid N) at <time>``. When that process is killed
the file stays, and every later update is refused as "locked". kubeshift reads the
holders from the engine's refusal and tells three cases apart, because each asks the
operator for something different:

* **alive** on this host: an update really runs — wait for it;
* **dead** on this host: the lock is stale — ``kubeshift recover`` refreshes the
  state, clears the operations the killed update left half-done and removes the lock;
* **another host**: kubeshift cannot look; the operator checks, then recovers with
  ``--force``.

A Pulumi Cloud backend frees a dead update's lease itself; its refusal names no
holder and stays a plain "locked" sentence.
"""

from __future__ import annotations

import enum
import os
import re
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

_HOLDER = re.compile(
    r"created by (?P<user>[^@\s]*)@(?P<host>\S+) \(pid (?P<pid>\d+)\) at (?P<since>\S+)"
)


class Liveness(enum.StrEnum):
    ALIVE = "alive"
    DEAD = "dead"
    UNKNOWN = "unknown"  # on another host


@dataclass(frozen=True)
class LockHolder:
    """One lock file's owner, as the engine reported it."""

    pid: int
    user: str
    host: str
    since: str

    def liveness(self, this_host: str | None = None) -> Liveness:
        if self.host != (this_host or socket.gethostname()):
            return Liveness.UNKNOWN
        return Liveness.ALIVE if _is_pulumi_process(self.pid) else Liveness.DEAD

    def describe(self) -> str:
        return f"pulumi pid {self.pid} on {self.host}, since {self.since}"


def parse_holders(text: str) -> list[LockHolder]:
    """The holders a DIY backend's "stack is currently locked" error lists."""
    return [
        LockHolder(int(m["pid"]), m["user"], m["host"], m["since"]) for m in _HOLDER.finditer(text)
    ]


def _is_pulumi_process(pid: int) -> bool:
    """True when ``pid`` runs and is a pulumi CLI (a reused pid is someone else)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: alive, and not ours to judge
    cmdline = Path(f"/proc/{pid}/cmdline")
    try:
        argv0 = cmdline.read_bytes().split(b"\0", 1)[0].decode(errors="replace")
    except OSError:
        return True  # no /proc (macOS): the pid lives, assume it is the holder
    return Path(argv0).name.startswith("pulumi")


def locked_sentence(stack: str, holders: Sequence[LockHolder], action: str) -> str:
    """One sentence saying who holds ``stack`` and what the operator does next."""
    if not holders:
        return (
            f"Stack '{stack}' is locked by another update while trying to {action}; wait "
            "for it to finish, then run again."
        )
    kinds = {h.liveness() for h in holders}
    named = "; ".join(h.describe() for h in holders)
    if Liveness.ALIVE in kinds:
        return (
            f"Stack '{stack}' is being updated by another process ({named}); kubeshift "
            "does not run beside it — wait for it to finish, then run again."
        )
    if Liveness.UNKNOWN in kinds:
        return (
            f"Stack '{stack}' is locked by an update on another machine ({named}), which "
            "kubeshift cannot check from here; if that process is gone, run "
            f"`kubeshift --stack {stack} recover --force`."
        )
    return (
        f"Stack '{stack}''s Pulumi lock is stale: the update that took it is gone "
        f"({named}); run `kubeshift --stack {stack} recover` to check what exists, clear "
        "the operations it left half-done and remove the lock."
    )
