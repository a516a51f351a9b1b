"""Fault trials: ``kubeshift run`` killed, interrupted and resumed until it finishes.

A trial waits until the journal shows a chosen step running, then hurts the run the
way an operator loses one:

* ``group-kill`` — SIGKILL to the whole process group (a closed terminal);
* ``kill-alone`` — SIGKILL to kubeshift only; its ``pulumi`` child is orphaned;
* ``engine-kill`` — SIGKILL to the ``pulumi`` CLI only, mid-update;
* ``sigint`` — Ctrl-C: the run must stop at a safe point with exit 130.

After each fault the same ``kubeshift run`` is started again; when it asks for
``kubeshift recover`` (an engine died holding its lock or leaving pending operations)
the trial runs that, as the operator would, and goes on. Chained faults in one run
count as separate trials. Used by the shared rehearsal (a few fixed trials in CI) and
by ``benchmarks/faults.py`` (20+ trials chosen by a printed seed).
"""

from __future__ import annotations

import fnmatch
import json
import os
import shlex
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from automation.engine_processes import descendants

HOWS = ("group-kill", "kill-alone", "engine-kill", "sigint")


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


@dataclass
class Trial:
    fault: Fault
    where: str = ""  # the step that was running when the fault struck
    code: int | None = None  # exit code of the hurt run
    resumes: int = 0
    recoveries: int = 0
    outcome: str = ""
    meanwhile: object = None
    stopped_at: str = ""  # the journal's stop point right after the hurt run exited
    struck_status: str = ""  # the struck step's status then


@dataclass
class Session:
    """One interrupted migration: the trials and the final, successful run."""

    trials: list[Trial] = field(default_factory=list)
    final_code: int | None = None
    runs: int = 0
    log: list[str] = field(default_factory=list)


class FaultyRun:
    """Drives ``kubeshift run --yes`` of one stack through a list of faults."""

    def __init__(
        self,
        kubeshift: str,
        stack: str,
        env: dict[str, str],
        cwd: Path,
        journal: Path,
        logs: Path,
        run_args: Sequence[str] = (),
    ) -> None:
        self.kubeshift, self.stack, self.env, self.cwd = kubeshift, stack, env, cwd
        self.journal, self.logs = journal, logs
        self.run_args = tuple(run_args)  # e.g. ("--to", PHASE): where every run stops

    # -- driving -------------------------------------------------------------------------

    def rehearse(self, faults: Sequence[Fault], *, deadline: float = 3600) -> Session:
        """Apply ``faults`` in order, then run until the migration finishes."""
        session = Session()
        ends = time.monotonic() + deadline
        for fault in faults:
            trial = Trial(fault)
            session.trials.append(trial)
            self._strike(trial, session)
        for _ in range(6):  # resumes after the last fault, recoveries included
            if time.monotonic() > ends:
                break
            done = self._resume(session, session.trials[-1] if session.trials else None)
            if done:
                break
        return session

    def _strike(self, trial: Trial, session: Session) -> None:
        if len(session.trials) > 1:
            session.trials[-2].resumes += 1  # this run resumes after the previous fault
        for _ in range(3):  # a run that stops to ask for `recover` gets it, then again
            run = self._start(session)
            where = self._wait_for_step(run, trial.fault.at)
            if where is not None:
                break
            trial.code = run.wait()
            trial.outcome = f"not reached (run exited {trial.code})"
            if trial.code == 0 or "recover" not in session.log[-1]:
                return  # finished, or failed for another reason: nothing to strike
            self._recover(session)
            session.trials[-2 if len(session.trials) > 1 else -1].recoveries += 1
        else:
            return
        if trial.fault.meanwhile is not None:
            trial.meanwhile = trial.fault.meanwhile()
        if trial.fault.delay:
            time.sleep(trial.fault.delay)
        if trial.fault.how == "engine-kill":  # right after the delay, while an engine runs
            self._wait_for_engine(run)
        trial.where = self._running_step() or where
        self._hurt(run, trial.fault.how)
        trial.code = run.wait(timeout=600)
        trial.outcome = f"{trial.fault.how} at {trial.where}: exit {trial.code}"
        journal = self._journal()
        trial.stopped_at = str(journal.get("stopped_at", ""))
        trial.struck_status = str(journal.get("steps", {}).get(trial.where, {}).get("status", ""))
        self._after_exit(trial, session, trial.code)

    def _after_exit(self, trial: Trial, session: Session, code: int) -> None:
        """An engine that died holding the stack is recovered before the next run."""
        if code == 0:
            return
        text = session.log[-1] if session.log else ""
        if "recover" in text:
            self._recover(session)
            trial.recoveries += 1

    def _resume(self, session: Session, trial: Trial | None) -> bool:
        run = self._start(session)
        code = run.wait(timeout=3600)
        if trial is not None:
            trial.resumes += 1
        if code == 0:
            session.final_code = 0
            return True
        if "recover" in session.log[-1]:
            self._recover(session)
            if trial is not None:
                trial.recoveries += 1
            return False
        session.final_code = code
        return code == 0

    def _start(self, session: Session) -> subprocess.Popen[str]:
        session.runs += 1
        self.logs.mkdir(parents=True, exist_ok=True)
        log = self.logs / f"faulty-run-{session.runs}.log"
        session.log.append("")
        handle = log.open("w")
        run = subprocess.Popen(
            [self.kubeshift, "--stack", self.stack, "run", "--yes", *self.run_args],
            cwd=self.cwd,
            env=self.env,
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
                handle.close()
                session.log[-1] = log.read_text(errors="replace")

        run.wait = wait  # type: ignore[method-assign]
        return run

    def _recover(self, session: Session) -> None:
        done = subprocess.run(
            [self.kubeshift, "--stack", self.stack, "recover", "--yes"],
            cwd=self.cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        session.log.append(done.stdout + done.stderr)
        if done.returncode != 0:
            raise AssertionError(f"kubeshift recover exited {done.returncode}: {done.stderr}")

    # -- faults ----------------------------------------------------------------------------

    def _hurt(self, run: subprocess.Popen[str], how: str) -> None:
        if how == "group-kill":
            os.killpg(run.pid, signal.SIGKILL)
        elif how == "kill-alone":
            os.kill(run.pid, signal.SIGKILL)
        elif how == "sigint":
            os.kill(run.pid, signal.SIGINT)
        elif how == "engine-kill":
            engines = self._engines(run.pid)
            for pid in engines:
                os.kill(pid, signal.SIGKILL)
            if not engines:  # the update ended before the kill: kill kubeshift instead
                os.killpg(run.pid, signal.SIGKILL)
        else:
            raise ValueError(f"unknown fault {how!r}; one of {HOWS}")

    def _wait_for_engine(self, run: subprocess.Popen[str], timeout: float = 60) -> None:
        ends = time.monotonic() + timeout
        while not self._engines(run.pid) and run.poll() is None and time.monotonic() < ends:
            time.sleep(0.05)

    @staticmethod
    def _engines(root: int) -> list[int]:
        found = []
        for pid in descendants(root) - {root}:
            try:
                argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0", 1)[0]
            except OSError:
                continue
            if Path(argv0.decode(errors="replace")).name == "pulumi":
                found.append(pid)
        return found

    # -- the journal, read from outside ------------------------------------------------------

    def records(self) -> dict[str, Any]:
        steps: dict[str, Any] = self._journal().get("steps", {})
        return steps

    def _journal(self) -> dict[str, Any]:
        try:
            loaded: dict[str, Any] = json.loads(self.journal.read_text())
            return loaded
        except (OSError, ValueError):
            return {}

    def _running_step(self) -> str | None:
        running = [k for k, r in self.records().items() if r.get("status") == "running"]
        return running[0] if running else None

    def _wait_for_step(self, run: subprocess.Popen[str], pattern: str) -> str | None:
        """The first step matching ``pattern`` that this run has started.

        A step that starts and ends between two polls (a gate already satisfied) still
        counts: the fault then strikes whatever runs next, never nothing.
        """
        while run.poll() is None:
            for key, record in self.records().items():
                executions = record.get("executions") or [{}]
                mine = executions[-1].get("pid") == run.pid
                if mine and fnmatch.fnmatchcase(key, pattern):
                    return str(key)
            time.sleep(0.05)
        return None


def sandbox_journal(kubeshift: str, stack: str, env: dict[str, str], cwd: Path) -> Path:
    """Where a sandboxed run of ``stack`` keeps its journal (the sandbox's state dir)."""
    exports = subprocess.run(
        [kubeshift, "--stack", stack, "sandbox", "env"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    for line in exports.splitlines():
        if line.startswith("export KUBESHIFT_STATE_DIR="):
            (value,) = shlex.split(line.removeprefix("export KUBESHIFT_STATE_DIR="))
            return Path(value) / f"{stack}.journal.json"
    raise AssertionError(f"`kubeshift sandbox env` names no state dir:\n{exports}")


# Read-only steps the runner repeats on purpose until the phase's update has finished:
# the phase must be set and the plan previewed right before the update that uses them.
REPEATABLE = ("config", "preview")


def repeated_successes(records: dict[str, Any]) -> list[str]:
    """Steps the journal shows finishing more than once (none may but the read-only ones)."""
    return [
        key
        for key, record in records.items()
        if record.get("step") not in REPEATABLE
        and sum(e.get("status") == "succeeded" for e in record.get("executions", [])) > 1
    ]


def table(trials: Sequence[Trial]) -> str:
    """The trials as a plain table: where each struck, resumes, recoveries, outcome."""
    rows = [("#", "fault", "struck at", "exit", "resumes", "recovered", "outcome")]
    for index, t in enumerate(trials, 1):
        rows.append(
            (
                str(index),
                t.fault.how,
                t.where or t.fault.at,
                str(t.code),
                str(t.resumes),
                str(t.recoveries),
                t.outcome,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows)
