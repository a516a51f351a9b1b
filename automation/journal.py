"""The per-stack journal: what each step of each phase did, and a lock around a run.

A run records every step (config set, preview, update, each hook, each gate) with
start and end times, attempts, status and a message. Writes are atomic (temp file,
fsync, rename) so a kill at any instant leaves either the old or the new journal.
A killed run resumes at the first unfinished step; a finished step — above all a
finished destructive one — is never run again. The lock (an OS file lock, released by
the kernel when the process dies) keeps two runs off one stack. Messages are the only
free text kept, and they pass through ``redact`` so secret values never land here.
"""

from __future__ import annotations

import enum
import json
import os
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from automation.errors import StackLockedError

SCHEMA_VERSION = 1


class StepStatus(enum.StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


@dataclass
class StepRecord:
    """The persisted record of one step (the runner's memory across crashes)."""

    phase: str
    step: str
    status: StepStatus = StepStatus.PENDING
    destructive: bool = False
    attempts: int = 0
    started: float | None = None
    finished: float | None = None
    message: str = ""

    @property
    def key(self) -> str:
        return step_key(self.phase, self.step)

    @property
    def done(self) -> bool:
        return self.status is StepStatus.SUCCEEDED


def step_key(phase: str, step: str) -> str:
    return f"{phase}/{step}"


@dataclass
class JournalData:
    stack: str
    scenario: str = ""
    version: int = SCHEMA_VERSION
    steps: dict[str, StepRecord] = field(default_factory=dict)


class Journal:
    """Step records of one stack, persisted atomically after every change."""

    def __init__(self, path: Path, stack: str, secrets: Iterable[str] = ()) -> None:
        self.path = path
        self._secrets = tuple(s for s in secrets if s)
        self.data = self._load(stack)

    # -- persistence -------------------------------------------------------------------

    def _load(self, stack: str) -> JournalData:
        if not self.path.exists():
            return JournalData(stack=stack)
        raw = json.loads(self.path.read_text())
        steps = {
            key: StepRecord(**{**rec, "status": StepStatus(rec["status"])})
            for key, rec in raw.get("steps", {}).items()
        }
        return JournalData(
            stack=raw.get("stack", stack),
            scenario=raw.get("scenario", ""),
            version=raw.get("version", SCHEMA_VERSION),
            steps=steps,
        )

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        payload = asdict(self.data)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as handle:
                json.dump(payload, handle, indent=2, sort_keys=True)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    # -- records -----------------------------------------------------------------------

    def redact(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "[secret]")
        return text

    def record(self, phase: str, step: str) -> StepRecord:
        key = step_key(phase, step)
        if key not in self.data.steps:
            self.data.steps[key] = StepRecord(phase=phase, step=step)
        return self.data.steps[key]

    def get(self, phase: str, step: str) -> StepRecord | None:
        return self.data.steps.get(step_key(phase, step))

    def is_done(self, phase: str, step: str) -> bool:
        rec = self.get(phase, step)
        return rec is not None and rec.done

    def start(self, phase: str, step: str, *, destructive: bool = False) -> StepRecord:
        rec = self.record(phase, step)
        rec.status = StepStatus.RUNNING
        rec.destructive = destructive
        rec.attempts += 1
        rec.started = time.time()
        rec.finished = None
        rec.message = ""
        self.save()
        return rec

    def finish(self, phase: str, step: str, message: str = "") -> None:
        self._end(phase, step, StepStatus.SUCCEEDED, message)

    def fail(self, phase: str, step: str, message: str) -> None:
        self._end(phase, step, StepStatus.FAILED, message)

    def _end(self, phase: str, step: str, status: StepStatus, message: str) -> None:
        rec = self.record(phase, step)
        rec.status = status
        rec.finished = time.time()
        rec.message = self.redact(message)[:2000]
        self.save()

    def forget(self, phases: Iterable[str]) -> None:
        """Drop the records of ``phases`` so they run again from scratch."""
        wanted = set(phases)
        self.data.steps = {k: r for k, r in self.data.steps.items() if r.phase not in wanted}
        self.save()

    def records(self) -> list[StepRecord]:
        return list(self.data.steps.values())


@contextmanager
def stack_lock(path: Path, stack: str) -> Iterator[None]:
    """Hold an exclusive, non-blocking lock on ``stack`` for the duration of a run."""
    from filelock import FileLock, Timeout

    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path))
    try:
        lock.acquire(timeout=0)
    except Timeout as exc:
        raise StackLockedError(
            f"Stack '{stack}' is locked by another kubeshift run (lock file {path}); "
            "wait for it to finish."
        ) from exc
    try:
        yield
    finally:
        lock.release()


def state_dir(project_dir: Path) -> Path:
    """Where journals and locks live: ``$KUBESHIFT_STATE_DIR`` or ``.kubeshift/``."""
    override = os.environ.get("KUBESHIFT_STATE_DIR")
    return Path(override) if override else project_dir / ".kubeshift"
