"""Fault trials: ``kubeshift run`` killed, interrupted and resumed until it finishes.

A trial waits until the journal shows a chosen step running, then hurts the run the
way an operator loses one:

* ``group-kill`` — SIGKILL to the whole process group (a closed terminal);
* ``kill-alone`` — SIGKILL to kubeshift only; its ``pulumi`` child is orphaned;
* ``engine-kill`` — SIGKILL to the ``pulumi`` CLI only, mid-update (a trial finding no
  update running under the run fails: it cannot strike as specified);
* ``sigint`` — Ctrl-C: the run must stop at a safe point with exit 130.

After each fault the same ``kubeshift run`` is started again. When a run asks for
``kubeshift recover`` the trial runs it, as the operator would — but only where an
injected fault demanded it, so an engine that died on its own, or a stale lock nobody
caused, fails the trial with the run's output instead of passing unseen. A fault
demands one recovery when it killed an engine mid-update (kubeshift says so itself) or
when a lock one of its engines held was left behind (read from the backend's lock
files, naming the pid, not from kubeshift's account); every trial's recoveries must
equal what its fault demanded. Every wait has a deadline. Chained faults in one run
count as separate trials. Used by the shared rehearsal (a few fixed trials in CI) and
by ``benchmarks/faults.py`` (20+ trials chosen by a printed seed).
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import math
import os
import shlex
import signal
import subprocess
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from automation.engine.processes import descendants
from tests.support.state_store import DirectoryStore, StateStore, journal_key, store_of

JournalSource = Callable[[], bytes | None]
"""Reads the journal's bytes from wherever the backend keeps it (None: none yet)."""

HOWS = ("group-kill", "kill-alone", "engine-kill", "sigint")
LOCKING = ("up", "update", "refresh", "destroy", "import")
"""pulumi commands that take the stack's lock: a DIY backend writes a file naming the
CLI's pid, which stays when the CLI is killed (``preview`` and reads take none)."""
POLL_SECONDS = 0.05
TAIL = 4000  # characters of a run's output quoted in a failure


class TrialFailed(AssertionError):
    """A fault that could not strike as specified, a recovery no fault demanded, a
    recovery a fault demanded that never came, or a wait past its deadline."""


@dataclass(frozen=True)
class Fault:
    """Hurt the run ``how`` once a step matching ``at`` (``phase/step`` glob) runs.

    ``meanwhile`` runs while the step is running, before the fault (e.g. a second
    operator's ``pulumi up``); what it returns is kept on the trial.
    """

    at: str
    how: str
    delay: float = 0.0  # seconds after the step is seen running (the engine's, if any)
    meanwhile: Callable[[], object] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Engine:
    """A ``pulumi`` CLI under the run when the fault struck: killed with it, or orphaned."""

    pid: int
    command: str  # "up", "preview", "stack", ... ("" when its argv named none)

    @property
    def locks(self) -> bool:
        return self.command in LOCKING


@dataclass(frozen=True)
class StaleLock:
    """A lock file of the stack whose holder is no longer a live ``pulumi``."""

    pid: int
    path: str  # its key in the backend


@dataclass
class Trial:
    fault: Fault
    where: str = ""  # the step that was running when the fault struck
    code: int | None = None  # exit code of the hurt run
    resumes: int = 0
    recoveries: int = 0  # `kubeshift recover` runs this fault's demand accounted for
    outcome: str = ""
    meanwhile: object = None
    stopped_at: str = ""  # the journal's stop point right after the hurt run exited
    struck_status: str = ""  # the struck step's status then
    engines: tuple[Engine, ...] = ()  # the pulumi CLIs under the run when it struck
    left_lock: bool = False  # a lock one of those engines held was found stale

    @property
    def expected(self) -> int:
        """Recoveries the fault demanded: one where it killed an engine mid-update (the
        run then asks for ``recover`` whatever the engine left) or where one of its
        engines' locks was left behind; none otherwise."""
        return int(self.fault.how == "engine-kill" or self.left_lock)


@dataclass
class Session:
    """One interrupted migration: the trials and the final, successful run."""

    trials: list[Trial] = field(default_factory=list)
    final_code: int | None = None
    runs: int = 0
    log: list[str] = field(default_factory=list)


# -- the bookkeeping: what each fault demanded, what it got ---------------------------------


def attribute(trials: Sequence[Trial], stale: Iterable[StaleLock]) -> None:
    """Mark the trial whose fault killed or orphaned each stale lock's holder.

    A lock no injected fault explains was left by an engine that died on its own: the
    trial fails rather than have ``recover`` hide it.
    """
    for lock in stale:
        owners = [t for t in trials if lock.pid in {e.pid for e in t.engines}]
        if not owners:
            raise TrialFailed(
                f"stale lock of pulumi pid {lock.pid} ({lock.path}): no injected fault "
                "killed or orphaned that engine, so it died on its own"
            )
        owners[-1].left_lock = True


def owed(trials: Sequence[Trial]) -> list[Trial]:
    """Trials whose fault demanded a recovery that has not been run yet."""
    return [t for t in trials if t.recoveries < t.expected]


def unsettled(trials: Sequence[Trial]) -> list[str]:
    """One line per trial whose recoveries differ from what its fault demanded."""
    return [
        f"trial {n} ({t.fault.how} at {t.where or t.fault.at}): its fault demanded "
        f"{t.expected} recovery(ies), {t.recoveries} ran"
        for n, t in enumerate(trials, 1)
        if t.recoveries != t.expected
    ]


def asks_for_recover(output: str, stack: str) -> bool:
    """The run's output tells the operator to run ``kubeshift recover`` on ``stack``
    (the command itself, not any word "recover")."""
    return f"kubeshift --stack {stack} recover" in " ".join(output.split())


def engine_command(argv: Sequence[str]) -> str:
    """The subcommand of a ``pulumi`` argv (``pulumi --non-interactive up …`` -> up)."""
    return next((a for a in argv[1:] if not a.startswith("-")), "")


def _argv(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a]


def _is_pulumi(pid: int) -> bool:
    """A live ``pulumi`` CLI (a zombie has no argv; a reused pid runs something else)."""
    argv = _argv(pid)
    return bool(argv) and Path(argv[0]).name == "pulumi"


def lock_files(backend: Path | StateStore, stack: str) -> list[tuple[int, str]]:
    """The DIY backend's lock files of ``stack`` (``.pulumi/locks/…/<stack>/<id>.json``),
    each with the pid it names; ``backend``: its directory, or a store (a bucket)."""
    store = DirectoryStore(backend) if isinstance(backend, Path) else backend
    found = []
    for key in store.keys(".pulumi/locks"):
        if not key.endswith(".json") or key.rsplit("/", 2)[-2] != stack:
            continue
        body = store.read(key)
        if body is None:
            continue  # released since the listing
        try:
            found.append((int(json.loads(body)["pid"]), key))
        except (ValueError, KeyError, TypeError) as exc:
            raise TrialFailed(f"unreadable lock file {key}: {exc}") from None
    return found


def stale_locks(
    backend: Path | StateStore, stack: str, alive: Callable[[int], bool] = _is_pulumi
) -> list[StaleLock]:
    """The lock files of ``stack`` whose holder is no longer a live ``pulumi``."""
    return [StaleLock(pid, path) for pid, path in lock_files(backend, stack) if not alive(pid)]


def _tail(text: str) -> str:
    return text[-TAIL:]


# -- the driver -----------------------------------------------------------------------------


class FaultyRun:
    """Drives ``kubeshift run --yes`` (or ``back --yes``: ``command``) of one stack
    through a list of faults."""

    def __init__(
        self,
        kubeshift: str,
        stack: str,
        env: dict[str, str],
        cwd: Path,
        journal: Path | JournalSource,
        logs: Path,
        run_args: Sequence[str] = (),
        *,
        backend: Path | StateStore | None = None,
        engine_timeout: float = 120.0,
        command: str = "run",
    ) -> None:
        self.kubeshift, self.stack, self.env, self.cwd = kubeshift, stack, env, cwd
        self.journal, self.logs = journal, logs
        self.run_args = tuple(run_args)  # e.g. ("--to", PHASE): where every run stops
        self.command = command
        self.backend = backend or sandbox_store(kubeshift, stack, env, cwd)
        self.engine_timeout = engine_timeout  # for engine-kill: an update must run by then
        self._ends = math.inf

    # -- driving -------------------------------------------------------------------------

    def rehearse(self, faults: Sequence[Fault], *, deadline: float = 3600) -> Session:
        """Apply ``faults`` in order, then run until the migration finishes.

        ``deadline``: seconds for the whole session; a wait that would pass it kills
        the run and fails.
        """
        unknown = [f.how for f in faults if f.how not in HOWS]
        if unknown:
            raise ValueError(f"unknown fault {unknown[0]!r}; one of {HOWS}")
        session = Session()
        self._ends = time.monotonic() + deadline
        for fault in faults:
            trial = Trial(fault)
            session.trials.append(trial)
            self._strike(trial, session)
        self._resume(session, session.trials[-1] if session.trials else None)
        if session.final_code == 0:
            self._settle(session)
        return session

    def _strike(self, trial: Trial, session: Session) -> None:
        if len(session.trials) > 1:
            session.trials[-2].resumes += 1  # this run resumes after the previous fault
        run, where = self._run_until(trial.fault.at, session)
        if trial.fault.meanwhile is not None:
            trial.meanwhile = trial.fault.meanwhile()
        if trial.fault.delay:
            time.sleep(trial.fault.delay)
        if trial.fault.how == "engine-kill":  # right after the delay, while an update runs
            trial.engines = self._wait_for_update(run, trial, session)
        else:
            trial.engines = self._engines(run.pid)
        trial.where = self._running_step() or where
        self._hurt(run, trial, session)
        trial.code = self._finish(run, session, timeout=600)
        trial.outcome = f"{trial.fault.how} at {trial.where}: exit {trial.code}"
        journal = self._journal()
        trial.stopped_at = str(journal.get("stopped_at", ""))
        trial.struck_status = str(journal.get("steps", {}).get(trial.where, {}).get("status", ""))
        if trial.code != 0:
            self._answer(session)  # an engine-kill's run asks for `recover` itself

    def _run_until(self, pattern: str, session: Session) -> tuple[subprocess.Popen[str], str]:
        """A run that has started a step matching ``pattern``. A run that stops before
        it may only be asking for the recovery an earlier fault demanded; each such
        ask pays that debt, so a second one fails and this loop ends."""
        while True:
            run = self._start(session)
            where = self._wait_for_step(run, pattern, session)
            if where is not None:
                return run, where
            code = self._finish(run, session)
            if code == 0:
                raise self._failed(
                    session, f"the run finished without starting a step matching {pattern!r}: "
                    "the fault could not strike"
                )  # fmt: skip
            if not self._answer(session):
                raise self._failed(
                    session, f"run {session.runs} exited {code} before a step matching "
                    f"{pattern!r} started"
                )  # fmt: skip

    def _resume(self, session: Session, trial: Trial | None) -> None:
        """Run again until the migration finishes; a run may stop only to ask for a
        recovery a fault demanded (then ``recover``, and again)."""
        while True:
            run = self._start(session)
            code = self._finish(run, session)
            if trial is not None:
                trial.resumes += 1
            if code == 0 or not self._answer(session):
                session.final_code = code
                return

    def _answer(self, session: Session) -> bool:
        """When the run that just ended asks for ``kubeshift recover``: run it if a fault
        demanded it, and count it for that fault; fail if none did."""
        output = session.log[-1] if session.log else ""
        if not asks_for_recover(output, self.stack):
            return False
        self._audit(session)
        debts = owed(session.trials)
        if not debts:
            raise self._failed(
                session, f"run {session.runs} asked for `kubeshift recover`, which no injected "
                "fault demanded (none killed an engine mid-update or left its lock)"
            )  # fmt: skip
        self._recover(session)
        for trial in debts:
            trial.recoveries += 1
        return True

    def _settle(self, session: Session) -> None:
        """Once the migration finished: every fault got exactly the recoveries it demanded."""
        self._audit(session)
        wrong = unsettled(session.trials)
        if wrong:
            raise TrialFailed("\n".join(wrong) + "\n" + table(session.trials))

    def _audit(self, session: Session) -> None:
        """Charge each stale lock to the fault that left it; one nobody left fails,
        quoting the last run's output."""
        try:
            attribute(session.trials, stale_locks(self.backend, self.stack))
        except TrialFailed as exc:
            raise self._failed(session, str(exc)) from None

    def _failed(self, session: Session, what: str) -> TrialFailed:
        output = session.log[-1] if session.log else ""
        return TrialFailed(f"{what}\n{table(session.trials)}\nits output:\n{_tail(output)}")

    def _start(self, session: Session) -> subprocess.Popen[str]:
        session.runs += 1
        self.logs.mkdir(parents=True, exist_ok=True)
        log = self.logs / f"faulty-run-{session.runs}.log"
        session.log.append("")
        handle = log.open("w")
        run = subprocess.Popen(
            [self.kubeshift, "--stack", self.stack, self.command, "--yes", *self.run_args],
            cwd=self.cwd,
            # a run that dies of a signal of its own (one Ctrl-C trial ended in SIGABRT
            # under a full CI's load, with nothing in its output) leaves every thread's
            # stack in its log
            env={**self.env, "PYTHONFAULTHANDLER": "1"},
            stdout=handle,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its own group: "group-kill" is a closed terminal
        )
        original_wait = run.wait

        def wait(timeout: float | None = None) -> int:
            try:
                return original_wait(timeout)
            finally:
                if run.returncode is not None:
                    handle.close()
                    session.log[-1] = log.read_text(errors="replace")

        run.wait = wait  # type: ignore[method-assign]
        return run

    def _remaining(self, timeout: float = math.inf) -> float:
        return max(0.0, min(timeout, self._ends - time.monotonic()))

    def _finish(
        self, run: subprocess.Popen[str], session: Session, timeout: float = math.inf
    ) -> int:
        """The run's exit code, within ``timeout`` and the session's deadline."""
        allowed = self._remaining(timeout)
        try:
            return run.wait(timeout=allowed)
        except subprocess.TimeoutExpired:
            self._abandon(run)
            raise self._failed(
                session, f"run {session.runs} did not end within {allowed:.0f}s (its own "
                "limit or the session's deadline); it was killed"
            ) from None  # fmt: skip

    @staticmethod
    def _abandon(run: subprocess.Popen[str]) -> None:
        """Kill a run the trial gives up on, with everything it started."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGKILL)
        run.wait()

    def _recover(self, session: Session) -> None:
        done = subprocess.run(
            [self.kubeshift, "--stack", self.stack, "recover", "--yes"],
            cwd=self.cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=self._remaining(900),
        )
        session.log.append(done.stdout + done.stderr)
        if done.returncode != 0:
            raise AssertionError(f"kubeshift recover exited {done.returncode}: {done.stderr}")

    # -- faults ----------------------------------------------------------------------------

    def _hurt(self, run: subprocess.Popen[str], trial: Trial, session: Session) -> None:
        how = trial.fault.how
        if run.poll() is not None:
            raise self._failed(
                session, f"{how} at {trial.where}: the run exited {run.returncode} before "
                "the fault struck"
            )  # fmt: skip
        if how == "group-kill":
            os.killpg(run.pid, signal.SIGKILL)
        elif how == "kill-alone":
            os.kill(run.pid, signal.SIGKILL)
        elif how == "sigint":
            os.kill(run.pid, signal.SIGINT)
        else:  # engine-kill: the engines _wait_for_update found, an update among them
            for engine in trial.engines:
                try:
                    os.kill(engine.pid, signal.SIGKILL)
                except ProcessLookupError:
                    self._abandon(run)
                    raise self._failed(
                        session, f"engine-kill at {trial.where}: pulumi {engine.command} "
                        f"(pid {engine.pid}) ended before the kill"
                    ) from None  # fmt: skip

    def _wait_for_update(
        self, run: subprocess.Popen[str], trial: Trial, session: Session
    ) -> tuple[Engine, ...]:
        """The pulumi CLIs under the run once one of them runs an update that holds the
        stack's lock (its lock file names it), within ``engine_timeout``: an engine-kill
        finding none cannot strike as specified."""
        ends = time.monotonic() + self._remaining(self.engine_timeout)
        seen: tuple[Engine, ...] = ()
        while run.poll() is None and time.monotonic() < ends:
            seen = self._engines(run.pid)
            holders = {pid for pid, _ in lock_files(self.backend, self.stack)}
            if any(e.locks and e.pid in holders for e in seen):
                return seen
            time.sleep(POLL_SECONDS)
        running = run.poll() is None
        self._abandon(run)
        why = f"within {self.engine_timeout:.0f}s" if running else "before the run exited"
        named = ", ".join(f"pulumi {e.command} (pid {e.pid})" for e in seen) or "none"
        raise self._failed(
            session, f"engine-kill at {trial.fault.at}: no pulumi update holding the stack's "
            f"lock ran under the run {why} (engines last seen: {named}); the fault cannot "
            "strike as specified"
        )  # fmt: skip

    @staticmethod
    def _engines(root: int) -> tuple[Engine, ...]:
        found = []
        for pid in sorted(descendants(root) - {root}):
            argv = _argv(pid)
            if argv and Path(argv[0]).name == "pulumi":
                found.append(Engine(pid, engine_command(argv)))
        return tuple(found)

    # -- the journal, read from outside ------------------------------------------------------

    def records(self) -> dict[str, Any]:
        steps: dict[str, Any] = self._journal().get("steps", {})
        return steps

    def _journal(self) -> dict[str, Any]:
        try:
            body = self.journal.read_bytes() if isinstance(self.journal, Path) else self.journal()
            loaded: dict[str, Any] = json.loads(body) if body else {}
            return loaded
        except (OSError, ValueError):
            return {}

    def _running_step(self) -> str | None:
        running = [k for k, r in self.records().items() if r.get("status") == "running"]
        return running[0] if running else None

    def _wait_for_step(
        self, run: subprocess.Popen[str], pattern: str, session: Session
    ) -> str | None:
        """The first step matching ``pattern`` that this run has started; None when the
        run exits first; a failure (the run killed) past the session's deadline.

        A step that starts and ends between two polls (a gate already satisfied) still
        counts: the fault then strikes whatever runs next, never nothing.
        """
        while run.poll() is None:
            for key, record in self.records().items():
                executions = record.get("executions") or [{}]
                mine = executions[-1].get("pid") == run.pid
                if mine and fnmatch.fnmatchcase(key, pattern):
                    return str(key)
            if time.monotonic() >= self._ends:
                running = self._running_step()
                self._abandon(run)
                raise self._failed(
                    session, f"no step matching {pattern!r} started before the session's "
                    f"deadline (the journal showed {running or 'no step'} running); the run "
                    "was killed"
                )  # fmt: skip
            time.sleep(POLL_SECONDS)
        run.wait()  # its output into the session's log
        return None


def _sandbox_exports(kubeshift: str, stack: str, env: dict[str, str], cwd: Path) -> dict[str, str]:
    """``kubeshift sandbox env``'s exports, name -> value."""
    exports = subprocess.run(
        [kubeshift, "--stack", stack, "sandbox", "env"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    found = {}
    for line in exports.splitlines():
        name, _, value = line.removeprefix("export ").partition("=")
        if line.startswith("export ") and name:
            found[name] = " ".join(shlex.split(value))
    return found


def sandbox_journal(
    kubeshift: str, stack: str, env: dict[str, str], cwd: Path
) -> Path | JournalSource:
    """Where a sandboxed run of ``stack`` keeps its journal: beside the stack's state in
    the sandbox's backend, under ``.kubeshift/<project>/<stack>/`` — the file in a
    ``file://`` backend, or a reader of the object in an ``s3://`` one."""
    store = sandbox_store(kubeshift, stack, env, cwd)
    if isinstance(store, DirectoryStore):
        return store.root / journal_key(stack)
    return lambda: store.read(journal_key(stack))


def sandbox_store(kubeshift: str, stack: str, env: dict[str, str], cwd: Path) -> StateStore:
    """The sandbox's backend (directory or moto bucket), where the engine's lock files
    and kubeshift's journal are."""
    url = _sandbox_exports(kubeshift, stack, env, cwd).get("PULUMI_BACKEND_URL", "")
    if not url:
        raise AssertionError("`kubeshift sandbox env` names no backend")
    return store_of(url)


# Read-only steps the runner repeats on purpose until the phase's update has finished:
# the phase must be set and the plan previewed right before the update that uses them.
REPEATABLE = ("config", "preview")


def since_taken_back(record: dict[str, Any]) -> list[dict[str, Any]]:
    """A step's executions since ``kubeshift back`` last took its phase back (all, if
    never): before that, it finished and was undone, and going forward did it again."""
    executions = list(record.get("executions", []))
    undone = [i for i, e in enumerate(executions) if e.get("status") == "undone"]
    return executions[undone[-1] + 1 :] if undone else executions


def repeated_successes(records: dict[str, Any]) -> list[str]:
    """Steps the journal shows finishing more than once since their phase was last taken
    back (none may but the read-only ones)."""
    return [
        key
        for key, record in records.items()
        if record.get("step") not in REPEATABLE
        and sum(e.get("status") == "succeeded" for e in since_taken_back(record)) > 1
    ]


def table(trials: Sequence[Trial]) -> str:
    """The trials as a plain table: where each struck, resumes, recoveries against what
    the fault demanded, outcome."""
    rows = [("#", "fault", "struck at", "exit", "resumes", "recovered", "demanded", "outcome")]
    for index, t in enumerate(trials, 1):
        rows.append(
            (
                str(index),
                t.fault.how,
                t.where or t.fault.at,
                str(t.code),
                str(t.resumes),
                str(t.recoveries),
                str(t.expected),
                t.outcome,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows)
