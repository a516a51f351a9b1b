"""The per-stack journal: what each step of each phase did, and a lock around a run.

A run records every step (config set, preview, update, each hook, each gate) with
its status, its result (message, whether it changed anything, details such as the
availability report) and every execution: attempt number, process, start and end, and
how it ended — so a reader can check that no finished destructive step ever ran twice.
The journal is a :class:`~automation.core.documents.Document` — a file, or an object
in the stack's backend bucket shared by every operator (``automation.config.state_place``)
— written atomically and only over the version last read: a writer that finds it moved
re-reads it, keeps the other writer's records and lays its own steps over them, so
nobody's record is lost. A kill at any instant leaves either the old or the new journal.
A killed run resumes at the first unfinished step; a finished step — above all a
finished destructive one — is never run again. Each execution names the operator
(user@host) whose run made it. Messages and details pass through ``redact`` so secret
values never land here.
"""

from __future__ import annotations

import enum
import getpass
import json
import os
import socket
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from automation.core.documents import Document, FileDocument, UnreadableFile, VersionMoved
from automation.core.errors import UserError
from components.contract.run_marker import state_dir

__all__ = ["Journal", "JournalError", "StepRecord", "StepStatus", "operator", "state_dir"]

SCHEMA_VERSION = 4
# Format 1 had no executions, results or stop point; format 2 no operator per execution;
# format 3 no undone steps. Each is read and upgraded on write.
READABLE_VERSIONS = (1, 2, 3, 4)
MERGE_ATTEMPTS = 20
"""Times a save re-reads and merges when other writers keep moving the journal."""


def operator() -> str:
    """Who runs this process, and where: ``user@host``."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid()) if hasattr(os, "getuid") else "unknown"
    return f"{user}@{socket.gethostname()}"


class JournalError(UserError):
    """The journal file is not one this kubeshift wrote for this stack."""


class StepStatus(enum.StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    INTERRUPTED = "interrupted"  # stopped by Ctrl-C at a safe point, or killed
    UNDONE = "undone"  # finished, then taken back (`kubeshift back`): it runs again


@dataclass
class Execution:
    """One execution of a step: which attempt, which process, how it ended.

    An execution still ``running`` when the next one starts was killed with its
    process; it is closed as ``interrupted`` then.
    """

    attempt: int
    pid: int
    started: float
    finished: float | None = None
    status: StepStatus = StepStatus.RUNNING
    operator: str = ""  # user@host of the run (empty in journals older than format 3)


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
    changed: bool | None = None
    details: dict[str, JsonValue] = field(default_factory=dict)
    executions: list[Execution] = field(default_factory=list)

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
    stopped_at: str = ""  # "<phase>/<step>" where the last run stopped on Ctrl-C


class _ExecutionFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    attempt: int = Field(ge=1)
    pid: int = Field(ge=0)
    started: float
    finished: float | None = None
    status: StepStatus
    operator: str = ""


class _RecordFile(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=False)

    phase: str
    step: str
    status: StepStatus
    destructive: bool = False
    attempts: int = Field(default=0, ge=0)
    started: float | None = None
    finished: float | None = None
    message: str = ""
    changed: bool | None = None
    details: dict[str, JsonValue] = {}
    executions: list[_ExecutionFile] = []


class _JournalFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    stack: str
    scenario: str = ""
    version: int
    steps: dict[str, _RecordFile] = {}
    stopped_at: str = ""


def as_document(place: Path | Document) -> Document:
    return FileDocument(place, "The journal") if isinstance(place, Path) else place


def load_journal(place: Path | Document, stack: str, scenario: str = "") -> JournalData:
    """The journal at ``place``, checked to belong to ``stack`` (and ``scenario``)."""
    return read_journal(as_document(place), stack, scenario)[0]


def read_journal(
    document: Document, stack: str, scenario: str = ""
) -> tuple[JournalData, str | None]:
    """The journal in ``document`` and the version read (None: there is none yet).

    A missing document is an empty journal. Anything else that is not a journal this
    version wrote for this stack — a directory, undecodable bytes, broken JSON, wrong
    fields, another stack's or scenario's records — is one sentence, raised before the
    run takes the lock or calls the engine.
    """
    where = document.where
    fix = f"restore it from a backup, or move it aside to start {stack}'s journal over"
    try:
        stored = document.read()
    except UnreadableFile as exc:
        raise JournalError(str(exc)) from None
    if stored is None:
        return JournalData(stack=stack, scenario=scenario), None
    try:
        text = stored.body.decode("utf-8")
    except UnicodeDecodeError:
        raise JournalError(f"The journal {where} is not UTF-8 text; {fix}.") from None
    if not text.strip():
        raise JournalError(f"The journal {where} is empty; {fix}.")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JournalError(
            f"The journal {where} is damaged (not JSON: {exc.msg} at line {exc.lineno}); {fix}."
        ) from None
    version = raw.get("version") if isinstance(raw, dict) else None
    if isinstance(version, int) and version > SCHEMA_VERSION:
        raise JournalError(
            f"The journal {where} was written by a newer kubeshift (format "
            f"{raw['version']}, this one reads {SCHEMA_VERSION}); upgrade kubeshift."
        )
    if isinstance(version, int) and version not in READABLE_VERSIONS:
        raise JournalError(
            f"The journal {where} has format {version}, which no kubeshift wrote; {fix}."
        )
    try:
        data = _JournalFile.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        at = ".".join(str(p) for p in first["loc"]) or "its top level"
        raise JournalError(
            f"The journal {where} is damaged ({at}: {first['msg'].lower()}); {fix}."
        ) from None
    if data.stack != stack:
        raise JournalError(
            f"The journal {where} belongs to stack '{data.stack}', not '{stack}'; "
            "move it back where it came from."
        )
    if scenario and data.scenario and data.scenario != scenario:
        raise JournalError(
            f"The journal {where} records a {data.scenario} run, but stack '{stack}' is now "
            f"a {scenario} migration; move it aside to start over."
        )
    steps = {key: _step_record(record) for key, record in data.steps.items()}
    journal = JournalData(
        stack=stack,
        scenario=data.scenario or scenario,
        version=SCHEMA_VERSION,
        steps=steps,
        stopped_at=data.stopped_at,
    )
    return journal, stored.version


def _step_record(record: _RecordFile) -> StepRecord:
    fields = record.model_dump(exclude={"executions"})
    executions = [Execution(**e.model_dump()) for e in record.executions]
    return StepRecord(**fields, executions=executions)


class Journal:
    """Step records of one stack, persisted after every change over the version read."""

    def __init__(
        self,
        place: Path | Document,
        stack: str,
        secrets: Iterable[str] = (),
        *,
        scenario: str = "",
    ) -> None:
        self.document = as_document(place)
        self._secrets = tuple(s for s in secrets if s)
        self._operator = operator()
        self.data, self._version = read_journal(self.document, stack, scenario)
        self._touched: set[str] = set()  # step keys this writer changed or forgot
        self._stop_touched = False

    @property
    def exists(self) -> bool:
        """Whether the journal has been written (by anyone) as of the last read or save."""
        return self._version is not None

    # -- persistence -------------------------------------------------------------------

    def save(self) -> None:
        """Write the journal over the version last read; when another writer moved it,
        re-read theirs, lay this writer's steps over it and try again."""
        for _ in range(MERGE_ATTEMPTS):
            body = json.dumps(asdict(self.data), indent=2, sort_keys=True).encode()
            try:
                self._version = self.document.replace(body, self._version)
                return
            except VersionMoved:
                self._merge_theirs()
        raise UserError(
            f"The journal {self.document.where} kept changing under this run "
            f"({MERGE_ATTEMPTS} writes in a row lost to other writers); is another run "
            "writing it without the stack's lock?"
        )

    def _merge_theirs(self) -> None:
        theirs, self._version = read_journal(self.document, self.data.stack, self.data.scenario)
        for key in self._touched:
            if key in self.data.steps:
                theirs.steps[key] = self.data.steps[key]
            else:
                theirs.steps.pop(key, None)
        if self._stop_touched:
            theirs.stopped_at = self.data.stopped_at
        theirs.scenario = self.data.scenario or theirs.scenario
        self.data = theirs

    # -- records -----------------------------------------------------------------------

    def redact(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "[secret]")
        return text

    def record(self, phase: str, step: str) -> StepRecord:
        key = step_key(phase, step)
        self._touched.add(key)
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
        now = time.time()
        for killed in (e for e in rec.executions if e.status is StepStatus.RUNNING):
            killed.status = StepStatus.INTERRUPTED  # its process died mid-step
        rec.status = StepStatus.RUNNING
        rec.destructive = destructive
        rec.attempts += 1
        rec.started = now
        rec.finished = None
        rec.message = ""
        rec.changed = None
        rec.details = {}
        rec.executions.append(
            Execution(attempt=rec.attempts, pid=os.getpid(), started=now, operator=self._operator)
        )
        self._stop_at("")
        self.save()
        return rec

    def finish(
        self,
        phase: str,
        step: str,
        message: str = "",
        *,
        changed: bool | None = None,
        details: Mapping[str, JsonValue] | None = None,
    ) -> None:
        self.record(phase, step).changed = changed
        self._end(phase, step, StepStatus.SUCCEEDED, message, details or {})

    def fail(
        self,
        phase: str,
        step: str,
        message: str,
        *,
        details: Mapping[str, JsonValue] | None = None,
    ) -> None:
        self._end(phase, step, StepStatus.FAILED, message, details)

    def interrupt_probe(
        self, phase: str, step: str, message: str, details: Mapping[str, JsonValue]
    ) -> None:
        """Close a phase's probe whose steps stopped (failed, Ctrl-C, killed): what it saw
        so far is kept, and a resumed run adds to it."""
        self._end(phase, step, StepStatus.INTERRUPTED, message, details)

    def interrupt(self, phase: str, step: str, message: str) -> None:
        """Close a step stopped at a safe point (Ctrl-C) and remember where the run stopped."""
        self._stop_at(step_key(phase, step))
        self._end(phase, step, StepStatus.INTERRUPTED, message)

    def stop_before(self, phase: str, step: str) -> None:
        """Remember that a Ctrl-C stopped the run before ``phase/step`` started."""
        self._stop_at(step_key(phase, step))
        self.save()

    def _stop_at(self, key: str) -> None:
        self.data.stopped_at = key
        self._stop_touched = True

    def _end(
        self,
        phase: str,
        step: str,
        status: StepStatus,
        message: str,
        details: Mapping[str, JsonValue] | None = None,
    ) -> None:
        rec = self.record(phase, step)
        if details is not None:
            rec.details = self._redacted(dict(details))
        now = time.time()
        rec.status = status
        rec.finished = now
        rec.message = self.redact(message)[:2000]
        if rec.executions and rec.executions[-1].status is StepStatus.RUNNING:
            rec.executions[-1].status = status
            rec.executions[-1].finished = now
        self.save()

    def _redacted(self, details: dict[str, JsonValue]) -> dict[str, JsonValue]:
        """``details`` with every string, key or value at any depth, redacted."""
        return {self.redact(str(k)): self._redacted_value(v) for k, v in details.items()}

    def _redacted_value(self, value: JsonValue) -> JsonValue:
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return self._redacted(value)
        if isinstance(value, list):
            return [self._redacted_value(v) for v in value]
        return value

    def undo(self, phases: Iterable[str], message: str) -> None:
        """Mark every step of ``phases`` undone (``kubeshift back`` took them back): each
        runs again going forward; its executions stay, the history of what ran, and an
        ``undone`` one closes them."""
        wanted = set(phases)
        now = time.time()
        for key, record in self.data.steps.items():
            if record.phase in wanted and record.status is not StepStatus.UNDONE:
                self._touched.add(key)
                record.status = StepStatus.UNDONE
                record.message = self.redact(message)[:2000]
                record.executions.append(
                    Execution(
                        attempt=record.attempts, pid=os.getpid(), started=now, finished=now,
                        status=StepStatus.UNDONE, operator=self._operator,
                    )
                )  # fmt: skip
        self.save()

    def forget(self, phases: Iterable[str]) -> None:
        """Drop the records of ``phases`` so they run again from scratch."""
        wanted = set(phases)
        self._touched.update(k for k, r in self.data.steps.items() if r.phase in wanted)
        self.data.steps = {k: r for k, r in self.data.steps.items() if r.phase not in wanted}
        self.save()

    def records(self) -> list[StepRecord]:
        return list(self.data.steps.values())

    def done_phases(self) -> list[str]:
        """The phases with any step finished (and not taken back), sorted."""
        return sorted({r.phase for r in self.data.steps.values() if r.done})


_STATE_FIX = "set KUBESHIFT_STATE_DIR to a writable directory"


def check_state_dir(path: Path) -> Path:
    """Refuse a state directory that exists as something else (read-only check)."""
    if path.exists() and not path.is_dir():
        raise UserError(f"The state directory {path} is a file, not a directory; {_STATE_FIX}.")
    return path


def check_state_dir_writable(path: Path) -> Path:
    """Say in one sentence why journals cannot be written under ``path`` (creates nothing)."""
    check_state_dir(path)
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise UserError(f"The state directory {path} cannot be created under a file; {_STATE_FIX}.")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UserError(f"The state directory {path} is not writable; {_STATE_FIX}.")
    return path
