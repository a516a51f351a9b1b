"""What every session assembles: the engine and its log, the journal's place (with the
stack's state in its backend), each step's context, the stack's run lock, and how
destructive steps get confirmed.

The order matters and is deliberate: validate input, then check the ``pulumi`` CLI
exists, then take the lock, and only then touch the journal — a user error never
leaves a trace.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from automation.config.lock_settings import LeaseSettings
from automation.config.project import StackInfo
from automation.config.settings import RuntimeSettings
from automation.config.state_place import StatePlace, state_place
from automation.core.documents import VersionMoved
from automation.core.errors import KubeshiftError
from automation.core.interrupt import stop_at_safe_points
from automation.core.logs import EngineLog
from automation.core.progress import LogReporter, NullReporter, Reporter, RichReporter
from automation.core.waiting import Pending, wait_until
from automation.engine.adapter import Engine
from automation.engine.processes import orphaned_engines, stop_leftover_plugins
from automation.model.context import ClientSet, HookContext
from automation.model.phase import Phase
from automation.run.journal import load_journal, state_dir
from automation.run.run_lock import run_lock
from automation.run.runner import Judge
from components.contract.run_marker import clear_mark, marker_path, write_mark

if TYPE_CHECKING:
    from automation.review.checkpoint import Verdict

EngineFactory = Callable[[Path, str, str], Engine]


def pulumi_engine(project: Path, stack: str, run_id: str = "") -> Engine:
    from automation.engine.adapter import PulumiEngine, require_pulumi_cli

    require_pulumi_cli()
    sink = engine_log(project, stack, run_id)
    sink.announce()
    return PulumiEngine(project, stack, create=True, on_output=sink, run_id=run_id)


def engine_log(project: Path, stack: str, run_id: str = "") -> EngineLog:
    """Where one command keeps the engine's output: the state directory's ``logs/``,
    one file per run (or per command, named by its start)."""
    name = run_id or time.strftime("%Y%m%dT%H%M%S")
    return EngineLog(state_dir(project) / "logs" / f"{stack}.{name}.engine.log")


def read_outputs(project: Path, stack: str) -> tuple[dict[str, Any], str]:
    """The stack's current outputs for a dry run, read without writing anything, and a
    note saying where the plan comes from (or why it has no outputs to go on)."""
    from automation.engine.adapter import PulumiEngine, require_pulumi_cli

    try:
        require_pulumi_cli()
        outputs = PulumiEngine(project, stack).outputs()
    except KubeshiftError as exc:
        return {}, f"planned without the stack's outputs ({exc})"
    return outputs, "planned from the stack's current outputs"


def checkpoint_judge(values: Mapping[str, Any], engine: Engine) -> Judge:
    """What a phase changes, judged from the program's render at the phase it applies (an
    undo phase's: the phase before the one it takes back) and the stack's checkpoint
    (``review.checkpoint``; the SDK's import is paid only when a run judges)."""

    def judged(phase: Phase) -> Verdict:
        from automation.review.checkpoint import judge

        point = engine.checkpoint()
        return judge(values, phase.applies, point.deployment, point.config)

    return judged


def journal_place(project: Path, stack: str) -> StatePlace:
    """Where ``stack``'s journal and run lock live (``automation.config.state_place``)."""
    return state_place(project, stack)


def take_over_local_journal(place: StatePlace, stack: str) -> None:
    """Move the journal this machine kept before it lived with the backend into the
    backend, once, saying so; a backend that has a journal already keeps its own."""
    log = logging.getLogger("kubeshift.state")
    local = place.local_journal
    if not place.shared or not local.is_file():
        return
    load_journal(local, stack)  # a damaged local journal is refused, not carried over
    try:
        place.journal.replace(local.read_bytes(), None)
    except VersionMoved:
        log.warning(
            "the backend has a journal of %s already (%s); this machine's older one (%s) is "
            "left as it is", stack, place.journal.where, local,
        )  # fmt: skip
        return
    local.rename(local.with_name(local.name + ".moved"))
    log.warning("took this machine's journal of %s (%s) over into %s", stack, local, place.where)


def context_factory(
    info: StackInfo,
    settings: RuntimeSettings,
    clients: ClientSet,
    reporter: Reporter,
) -> Callable[[Phase, dict[str, Any], bool], HookContext]:
    def build(phase: Phase, outputs: dict[str, Any], dry_run: bool) -> HookContext:
        return HookContext(
            stack=info.name,
            scenario=info.scenario,
            phase=phase.id,
            clients=clients,
            settings=settings,
            config=info.config,
            outputs=outputs,
            log=logging.getLogger("kubeshift.hooks"),
            progress=reporter,
            dry_run=dry_run,
        )

    return build


@contextmanager
def run_mark(path: Path, run_id: str) -> Iterator[None]:
    """Mark the stack as migrated by this run (see ``components.contract.run_marker``)."""
    write_mark(path, run_id)
    try:
        yield
    finally:
        clear_mark(path, run_id)


ORPHAN_WAIT_SECONDS = 3600.0


def wait_for_orphaned_engines(
    project: Path, stack: str, reporter: Reporter, timeout: float = ORPHAN_WAIT_SECONDS
) -> None:
    """Let an update a killed run left behind finish before this run reads the stack."""
    log = logging.getLogger("kubeshift.runner")
    if orphaned_engines(project, stack):
        log.warning("an engine of an earlier, killed run still works on %s; waiting", stack)
        wait_until(
            f"the update a killed run left running on {stack} to finish",
            lambda: Pending.of([p.describe() for p in orphaned_engines(project, stack)]),
            timeout=timeout,
            interval=1.0,
            on_progress=reporter.on_wait,
        )
    for plugin in stop_leftover_plugins(project, stack):
        log.info("stopped %s, left behind by a killed engine", plugin.describe())


def confirmer(
    yes: bool, interactive: bool, confirm: Callable[[str], bool] | None
) -> Callable[[str], bool] | None:
    """How destructive steps get confirmed: --yes, the terminal, or not at all (refused)."""
    if yes:
        return lambda _question: True
    return confirm if interactive else None


def reporter_for(console: Any, as_json: bool) -> Reporter:
    """Rich progress on a console; with ``--json``, waits as log lines (one JSON object
    each); nothing without a console (tests, the API)."""
    if console is None:
        return NullReporter()
    return LogReporter() if as_json else RichReporter(console)


@contextmanager
def holding(
    project: Path,
    stack: str,
    run_id: str,
    reporter: Reporter,
    lease: LeaseSettings | None = None,
) -> Iterator[None]:
    """Everything a run holds while it changes a stack: the run lock (with the stack's
    state), the run mark, progress, Ctrl-C; the journal this machine kept before is
    taken over into the backend once the lock is held."""
    directory = state_dir(project)
    place = journal_place(project, stack)
    with (
        run_lock(place.lock, stack, run_id, lease),
        run_mark(marker_path(directory, stack), run_id),
        reporter if isinstance(reporter, RichReporter) else nullcontext(),
        stop_at_safe_points(logging.getLogger("kubeshift").warning),
    ):
        take_over_local_journal(place, stack)
        wait_for_orphaned_engines(project, stack, reporter)
        yield
