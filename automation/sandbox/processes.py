"""Start and stop the control plane's daemons as process groups with their own logs.

Every daemon runs in a new session, so stopping it signals its whole process group and
nothing it spawned outlives the test session; each also asks the kernel for SIGTERM
when the test process dies (``PR_SET_PDEATHSIG``), so a killed pytest leaks nothing.
Output goes to a log file whose path is printed when something fails, so a broken
start-up can be diagnosed after the run.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

LOOPBACK = "127.0.0.1"
T = TypeVar("T")
_PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform == "linux" else None


def _die_with_parent() -> None:
    """In the child before exec: get SIGTERM when the test process dies, even by SIGKILL."""
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


class StartupError(RuntimeError):
    """A daemon exited or did not become ready before its deadline."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def log_tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


@dataclass
class Daemon:
    """One running executable, its argv and its log file."""

    name: str
    argv: list[str]
    log_path: Path
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    env: dict[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def start(
        cls, name: str, argv: Sequence[str | Path], log_dir: Path, env: dict[str, str] | None = None
    ) -> Daemon:
        log_dir.mkdir(parents=True, exist_ok=True)
        daemon = cls(name, [str(a) for a in argv], log_dir / f"{name}.log", env=dict(env or {}))
        daemon._spawn()
        return daemon

    def restart(self) -> None:
        """Start the same command again (after ``stop``), appending to the same log."""
        self.stop()
        self._spawn()

    def _spawn(self) -> None:
        log = self.log_path.open("ab")
        try:
            self.process = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent,
                env={**os.environ, **self.env},
            )
        finally:
            log.close()

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def check_running(self) -> None:
        """Raise :class:`StartupError` with the log tail when the daemon has exited."""
        if not self.running():
            code = self.process.returncode if self.process else None
            raise StartupError(
                f"{self.name} exited with code {code}; log {self.log_path}:\n"
                f"{log_tail(self.log_path)}"
            )

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM the process group, SIGKILL it after ``grace`` seconds."""
        if self.process is None or self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signal.SIGKILL)
            self.process.wait(timeout=grace)


def retry_port_clash(start: Callable[[], T], attempts: int = 3) -> T:
    """Run ``start`` again when a daemon lost a race for its free port."""
    for attempt in range(attempts):
        try:
            return start()
        except StartupError as exc:
            if "address already in use" not in str(exc) or attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


def wait_until(
    what: str,
    probe: Callable[[], bool],
    *,
    timeout: float,
    interval: float = 0.2,
    daemons: Sequence[Daemon] = (),
) -> float:
    """Poll ``probe`` until true; return the seconds it took.

    Raises :class:`StartupError` naming ``what`` when the deadline passes or one of
    ``daemons`` exits meanwhile.
    """
    started = time.monotonic()
    deadline = started + timeout
    last_error: Exception | None = None
    while True:
        for daemon in daemons:
            daemon.check_running()
        try:
            if probe():
                return time.monotonic() - started
        except Exception as exc:  # probes talk to half-started servers
            last_error = exc
        if time.monotonic() > deadline:
            logs = ", ".join(str(d.log_path) for d in daemons) or "no logs"
            detail = f" (last error: {last_error})" if last_error else ""
            raise StartupError(f"timed out after {timeout:.0f}s waiting for {what}{detail}; {logs}")
        time.sleep(interval)
