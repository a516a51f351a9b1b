"""The run lock: one kubeshift run changes a stack at a time, whoever and wherever it is.

The lock is a :class:`~automation.core.documents.Document` beside the journal — in the
stack's backend bucket when the team shares one (``automation.config.state_place``).
It is created only where none exists (S3's ``If-None-Match: *``), names its holder
(user@host, pid, run id, since when) and carries a lease the holder renews while it
runs (``If-Match`` on the version it wrote), so a run that dies stops renewing:

* held and within its lease — a second run is refused, naming the holder (exit 6);
* held by a process of *this* host that is gone (killed, crashed) — provably dead, so
  the next run takes it over, saying so; no lease needs to pass;
* held past its lease by a run elsewhere — **stale**: refused, and removed only by
  ``kubeshift recover`` (as a killed engine's lock is), never silently.

A holder that finds its lease taken (a recovery cleared it as stale) says so at once and
stops at its next safe point, as on Ctrl-C.
No lock server and no polling pretend to be a lock: the store's conditional writes are.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from automation.config.lock_settings import LeaseSettings
from automation.core import interrupt
from automation.core.documents import Document, UnreadableFile, VersionMoved
from automation.core.errors import StackLockedError, UserError
from automation.run.journal import operator
from components.contract.run_marker import alive, process_start

log = logging.getLogger("kubeshift.lock")

ACQUIRE_ATTEMPTS = 5
"""Times acquiring re-reads when another process changed the lock between read and write."""


@dataclass(frozen=True)
class Holder:
    """Who holds the lock, and until when its lease runs."""

    operator: str
    host: str
    pid: int
    process_start: int | None
    run_id: str
    since: float
    renewed: float
    lease_seconds: float

    @property
    def expires(self) -> float:
        return self.renewed + self.lease_seconds

    def describe(self) -> str:
        return f"{self.operator} (pid {self.pid}, run {self.run_id[:8]}) since {_utc(self.since)}"

    def gone_from(self, host: str) -> bool:
        """Its process ran on ``host`` and runs no more (or is another by now)."""
        return self.host == host and not alive(self.pid, self.process_start)

    def standing(self, host: str, now: float) -> Literal["gone", "live", "stale"]:
        """Seen from ``host`` at ``now``: its process provably gone (this host), within
        its lease, or past it with its process elsewhere (only ``recover`` removes it)."""
        if self.gone_from(host):
            return "gone"
        return "live" if now < self.expires else "stale"


class _HolderFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    operator: str
    host: str
    pid: int = Field(ge=0)
    process_start: int | None = None
    run_id: str
    since: float
    renewed: float
    lease_seconds: float = Field(gt=0)


class DamagedLock(UserError):
    """The lock is not one kubeshift wrote; ``version`` is what a recovery replaces."""

    def __init__(self, message: str, version: str) -> None:
        super().__init__(message)
        self.version = version


def read_holder(document: Document) -> tuple[Holder, str] | None:
    """The lock's holder and the version read; None when nobody holds it. A lock that is
    not one kubeshift wrote is :class:`DamagedLock`, one sentence naming the way out."""
    try:
        stored = document.read()
    except UnreadableFile as exc:
        raise UserError(str(exc)) from None
    if stored is None:
        return None
    try:
        holder = _HolderFile.model_validate_json(stored.body)
    except ValidationError:
        raise DamagedLock(
            f"The run lock {document.where} is damaged; check that no run holds the stack, "
            "then `kubeshift recover` removes it.",
            stored.version,
        ) from None
    return Holder(**holder.model_dump()), stored.version


def stale_holder(
    document: Document, *, host: str | None = None, clock: Callable[[], float] = time.time
) -> Holder | None:
    """The holder of a lock past its lease whose process ran elsewhere (the lock only
    ``kubeshift recover`` removes); None when the lock is free, live or provably dead."""
    current = read_holder(document)
    if current is None:
        return None
    holder = current[0]
    return holder if holder.standing(host or socket.gethostname(), clock()) == "stale" else None


def lock_sentence(document: Document, *, clock: Callable[[], float] = time.time) -> str:
    """Who holds the run lock now, for ``status``: held (until when), stale, or free."""
    try:
        current = read_holder(document)
    except UserError as exc:  # damaged or unreadable: said, and status goes on
        return str(exc)
    if current is None:
        return "No run holds the stack's run lock."
    holder = current[0]
    standing = holder.standing(socket.gethostname(), clock())
    if standing == "gone":
        return (
            f"The run lock names {holder.describe()}, whose process is gone; the next run takes it."
        )
    if standing == "stale":
        return (
            f"The run lock is held by {holder.describe()}, past its lease since "
            f"{_utc(holder.expires)} (stale): `kubeshift recover` removes it."
        )
    until = _utc(holder.expires)
    return f"The run lock is held by {holder.describe()}, its lease renewed until {until}."


def _utc(moment: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(moment))


class RunLock:
    """The lock of ``stack`` held by this process for one run (``run_id``)."""

    def __init__(
        self,
        document: Document,
        stack: str,
        run_id: str,
        settings: LeaseSettings | None = None,
        *,
        clock: Callable[[], float] = time.time,
        host: str | None = None,
    ) -> None:
        self.document = document
        self.stack = stack
        self.run_id = run_id
        self.settings = settings or LeaseSettings()
        self._clock = clock
        self._host = host or socket.gethostname()
        self._version: str | None = None
        self._since = 0.0
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None
        self.lost = False
        self.replaced: Holder | None = None
        """The holder this run took the lock from (dead on this host, or stale)."""

    def acquire(self, *, take_stale: bool = False) -> None:
        """Take the lock, or raise :class:`StackLockedError` naming who holds it.
        ``take_stale``: a lock past its lease is taken over too (``kubeshift recover``)."""
        self._since = self._clock()
        for _ in range(ACQUIRE_ATTEMPTS):
            try:
                current = read_holder(self.document)
            except DamagedLock as damaged:
                if not take_stale:
                    raise
                current = None
                try:
                    self._version = self.document.replace(self._body(), damaged.version)
                except VersionMoved:
                    continue
                log.warning("replaced the damaged run lock %s", self.document.where)
                break
            try:
                if current is None:
                    self._version = self.document.replace(self._body(), None)
                    break
                holder, version = current
                self._refuse_unless_free(holder, take_stale)
                self._version = self.document.replace(self._body(), version)
                self.replaced = holder
                log.warning(
                    "took over the run lock of %s: %s", holder.describe(),
                    "its process is gone" if holder.gone_from(self._host) else "its lease ran out",
                )  # fmt: skip
                break
            except VersionMoved:
                continue  # another process wrote it between our read and write: look again
        else:
            raise StackLockedError(
                f"Stack '{self.stack}''s run lock {self.document.where} kept changing while "
                "this run tried to take it; another run is starting — try again in a moment."
            )
        self._renewer = threading.Thread(target=self._renew, name="run-lock", daemon=True)
        self._renewer.start()

    def _refuse_unless_free(self, holder: Holder, take_stale: bool) -> None:
        standing = holder.standing(self._host, self._clock())
        if standing == "gone":
            return
        if standing == "live":
            raise StackLockedError(
                f"Stack '{self.stack}' is being migrated by {holder.describe()}; wait for "
                "that run to finish."
            )
        if not take_stale:
            raise StackLockedError(
                f"Stack '{self.stack}' is locked by {holder.describe()}, whose lease ran out "
                f"at {_utc(holder.expires)} (stale); once that run is known to be gone, "
                "`kubeshift recover` removes the lock."
            )

    def _body(self) -> bytes:
        now = self._clock()
        holder = Holder(
            operator=operator(),
            host=self._host,
            pid=os.getpid(),
            process_start=process_start(os.getpid()),
            run_id=self.run_id,
            since=self._since,
            renewed=now,
            lease_seconds=self.settings.lease_seconds,
        )
        return json.dumps(asdict(holder), sort_keys=True).encode()

    def renew(self) -> None:
        """Renew the lease once, over the version this run wrote (:class:`VersionMoved`
        when another process took the lock); the background thread does it every
        ``renew_seconds``."""
        self._version = self.document.replace(self._body(), self._version)

    def _renew(self) -> None:
        while not self._stop.wait(self.settings.renew_seconds):
            try:
                self.renew()
            except VersionMoved:
                self.lost = True
                log.error(
                    "the run lock of stack %s was taken from this run (a recovery judged it "
                    "stale); the run stops at its next safe point — check the stack before "
                    "running again", self.stack,
                )  # fmt: skip
                interrupt.request_stop()
                return
            except Exception as exc:  # a failed renewal is retried at the next tick
                log.warning("renewing the run lock of %s failed (%s); retrying", self.stack, exc)

    def release(self) -> None:
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join()
        if self._version is None or self.lost:
            return
        try:
            self.document.delete(self._version)
        except VersionMoved:
            log.warning("the run lock of %s had changed hands; left as it is", self.stack)
        self._version = None


@contextmanager
def run_lock(
    document: Document,
    stack: str,
    run_id: str,
    settings: LeaseSettings | None = None,
    *,
    take_stale: bool = False,
) -> Iterator[RunLock]:
    """Hold ``stack``'s run lock for the duration of the block."""
    lock = RunLock(document, stack, run_id, settings)
    lock.acquire(take_stale=take_stale)
    try:
        yield lock
    finally:
        lock.release()
