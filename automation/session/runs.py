"""Assembles one run: stack, scenario, settings, clients, engine, journal, lock, runner.

This is the only place those pieces meet, so the CLI stays thin and tests can run
the same assembly with a fake engine. The order matters and is deliberate: validate
input, then check the ``pulumi`` CLI exists, then take the lock, and only then touch
the journal — a user error never leaves a trace.
"""

from __future__ import annotations

import dataclasses
import logging
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from automation.adoption.models import AdoptReport
from automation.adoption.stack_file import ProposedStack
from automation.config.clients import LazyClients
from automation.config.project import StackInfo, load_stack
from automation.config.settings import RuntimeSettings, load_runtime_settings
from automation.core.errors import KubeshiftError, UserError
from automation.core.interrupt import stop_at_safe_points
from automation.core.logs import EngineLog
from automation.core.progress import NullReporter, Reporter, RichReporter
from automation.core.secrets import secret_strings
from automation.core.waiting import Pending, wait_until
from automation.engine.adapter import Engine
from automation.engine.processes import orphaned_engines, stop_leftover_plugins
from automation.model.context import ClientSet, HookContext
from automation.model.phase import Phase, Scenario
from automation.review.diff import scope_of
from automation.run.journal import (
    Journal,
    check_state_dir,
    check_state_dir_writable,
    load_journal,
    stack_lock,
    state_dir,
)
from automation.run.kept_check import refuse_kept_for_nothing
from automation.run.planner import Planner
from automation.run.runner import Runner
from automation.run.steps import Confirm, RunReport
from automation.run.targets import PhaseRenders, target_urns
from automation.scenarios import build_scenario
from components.contract.checks import DNS_SUBDOMAIN
from components.contract.progress import Progress, listed, missing
from components.contract.run_marker import clear_mark, marker_path, write_mark


@dataclass(frozen=True)
class RunRequest:
    project: Path
    stack: str
    start: str | None = None
    stop: str | None = None
    yes: bool = False
    dry_run: bool = False
    fresh: bool = False
    interactive: bool = False
    json: bool = False


@dataclass(frozen=True)
class HooksRequest:
    """One side of one phase's hooks and gates, for an engineer who runs ``pulumi up``."""

    project: Path
    stack: str
    phase: str
    side: Literal["before", "after"]
    yes: bool = False
    dry_run: bool = False
    interactive: bool = False
    json: bool = False


@dataclass(frozen=True)
class ReplaceRequest:
    """Nodes a gate named, to be replaced by fresh ones through their groups."""

    project: Path
    stack: str
    phase: str
    nodes: tuple[str, ...]
    cluster: str = "primary"
    timeout: float = 1800.0
    yes: bool = False
    dry_run: bool = False
    interactive: bool = False
    json: bool = False


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


def journal_path(project: Path, stack: str) -> Path:
    return state_dir(project) / f"{stack}.journal.json"


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


def execute(
    request: RunRequest,
    *,
    console: Any = None,
    confirm: Callable[[str], bool] | None = None,
    engine_factory: EngineFactory = pulumi_engine,
    clients: ClientSet | None = None,
) -> RunReport:
    """Run (or dry-run) the requested phases of a stack."""
    info = load_stack(request.project, request.stack)
    scenario = build_scenario(info.config)
    phases = scenario.slice(request.start, request.stop)
    settings = load_runtime_settings(info.values)
    clients = clients or LazyClients(settings)
    path = journal_path(request.project, request.stack)
    if request.fresh and request.dry_run:
        raise UserError("--fresh cannot be combined with --dry-run: a dry run forgets nothing.")
    # A damaged or foreign journal stops here, before the engine, the lock or any write.
    check_state_dir(state_dir(request.project))
    load_journal(path, request.stack, info.scenario)
    refuse_kept_for_nothing(info, state_dir(request.project) / "render-cache")

    if request.dry_run:
        journal = Journal(path, request.stack, scenario=info.scenario) if path.exists() else None
        factory = context_factory(info, settings, clients, NullReporter())
        outputs, note = read_outputs(request.project, request.stack)
        planner = Planner(journal, factory, order=scenario.phases, outputs=outputs)
        report = planner.dry_run(phases)
        report.note = note
        return report

    check_state_dir_writable(state_dir(request.project))
    run_id = uuid.uuid4().hex
    engine = engine_factory(request.project, request.stack, run_id)
    chooser = _chooser(request.yes, request.interactive, confirm)

    reporter = _reporter(console, request.json)
    with _holding(request.project, request.stack, run_id, reporter):
        secrets = secret_strings(info.values, engine.secret_config())
        journal = Journal(path, request.stack, secrets, scenario=info.scenario)
        if request.fresh:
            journal.forget(p.id for p in phases)
        factory = context_factory(info, settings, clients, reporter)
        renders = PhaseRenders(info.values, scenario.ids())
        runner = Runner(
            engine,
            journal,
            factory,
            confirm=chooser,
            scope=lambda phase: scope_of(renders.entering(phase.id)),
            targets=lambda phase: target_urns(renders, phase.id, engine.resource_urns()),
            order=scenario.phases,
            actor=f"kubeshift run {run_id}",
            trust_stack_progress=not request.fresh,
        )
        return runner.run(phases)


@dataclass
class _StepsSession:
    """What running steps outside ``kubeshift run`` needs, checked before any write:
    the stack, its scenario, the journal's path (readable), an engine and contexts."""

    project: Path
    stack: str
    info: StackInfo
    scenario: Scenario
    path: Path
    run_id: str
    engine: Engine
    reporter: Reporter
    factory: Callable[..., HookContext]

    @classmethod
    def open(
        cls,
        project: Path,
        stack: str,
        *,
        quiet: bool,
        console: Any,
        engine_factory: EngineFactory,
        clients: ClientSet | None,
        phase: str,
        cluster: str | None = None,
    ) -> _StepsSession:
        """Everything the command line names is checked here, before the engine: the
        stack, its settings, the ``phase`` and the ``cluster`` (when steps act on one)."""
        info = load_stack(project, stack)
        settings = load_runtime_settings(info.values)
        scenario = build_scenario(info.config)
        scenario.phase(phase)
        if cluster is not None and cluster not in settings.clusters:
            known = ", ".join(sorted(settings.clusters))
            raise UserError(
                f"Cluster '{cluster}' has no Kubernetes access in kubeshift:runtime.clusters "
                f"(it has: {known})."
            )
        path = journal_path(project, stack)
        check_state_dir(state_dir(project))
        load_journal(path, stack, info.scenario)
        refuse_kept_for_nothing(info, state_dir(project) / "render-cache")
        run_id = uuid.uuid4().hex
        reporter = NullReporter() if quiet else _reporter(console, False)
        return cls(
            project, stack, info, scenario, path, run_id,
            engine_factory(project, stack, run_id), reporter,
            context_factory(info, settings, clients or LazyClients(settings), reporter),
        )  # fmt: skip

    def planner(self) -> Planner:
        """A planner over the journal as it is (none yet: no journal) and the stack's
        current outputs."""
        existing = Journal(self.path, self.stack, scenario=self.info.scenario)
        return Planner(
            existing if self.path.exists() else None, self.factory,
            order=self.scenario.phases, outputs=self.engine.outputs(),
        )  # fmt: skip

    @contextmanager
    def runner(self, confirm: Confirm | None, actor: str) -> Iterator[Runner]:
        """The stack's lock held, the journal open for writing, a runner over both."""
        check_state_dir_writable(state_dir(self.project))
        with _holding(self.project, self.stack, self.run_id, self.reporter):
            secrets = secret_strings(self.info.values, self.engine.secret_config())
            journal = Journal(self.path, self.stack, secrets, scenario=self.info.scenario)
            runner = Runner(
                self.engine, journal, self.factory, confirm=confirm,
                order=self.scenario.phases, actor=f"{actor} {self.run_id}",
            )  # fmt: skip
            runner.outputs_from_stack()
            yield runner


def execute_hooks(
    request: HooksRequest,
    *,
    console: Any = None,
    confirm: Callable[[str], bool] | None = None,
    engine_factory: EngineFactory = pulumi_engine,
    clients: ClientSet | None = None,
) -> RunReport:
    """Run (or describe) one phase's before- or after-steps, journalled and recorded.

    Refuses before anything runs when the stack's progress says it is too early: the
    before-steps wait for every earlier phase, the after-steps for the phase's update.
    """
    session = _StepsSession.open(
        request.project, request.stack, quiet=request.dry_run or request.json,
        console=console, engine_factory=engine_factory, clients=clients, phase=request.phase,
    )  # fmt: skip
    scenario = session.scenario
    phase = scenario.phase(request.phase)
    chooser = _chooser(request.yes, request.interactive, confirm)
    # Too early is a user error: said before the lock, the journal or any write.
    planner = session.planner()
    _refuse_early(planner.progress(), scenario.ids(), phase.id, request)
    if request.dry_run:
        report = planner.describe_steps(phase, request.side)
        report.note = "planned from the stack's current outputs"
        return report
    with session.runner(chooser, "kubeshift hooks") as runner:
        _refuse_early(runner.progress(), scenario.ids(), phase.id, request)  # under the lock
        return runner.run_steps(phase, request.side)


def execute_replacement(
    request: ReplaceRequest,
    *,
    console: Any = None,
    confirm: Callable[[str], bool] | None = None,
    engine_factory: EngineFactory = pulumi_engine,
    clients: ClientSet | None = None,
) -> RunReport:
    """Replace each named node (cordon, drain, terminate in its group, wait for a fresh
    one), journalled under ``request.phase``; a node replaced in an earlier run is skipped."""
    from automation.steps.replace_nodes import Replacement, replace_node_hooks

    if not request.nodes:
        raise UserError("Name the nodes to replace (the gate that failed lists them).")
    if bad := [n for n in request.nodes if not DNS_SUBDOMAIN.fullmatch(n) or len(n) > 253]:
        raise UserError(
            f"{bad[0]!r} is not a node name (a DNS subdomain, as Kubernetes names nodes)."
        )
    session = _StepsSession.open(
        request.project, request.stack, quiet=request.dry_run or request.json,
        console=console, engine_factory=engine_factory, clients=clients,
        phase=request.phase, cluster=request.cluster,
    )  # fmt: skip
    phase = session.scenario.phase(request.phase)
    hooks = replace_node_hooks(
        request.nodes, Replacement(cluster=request.cluster, timeout=request.timeout)
    )
    if request.dry_run:
        return session.planner().describe_action(phase, hooks)
    chooser = _chooser(request.yes, request.interactive, confirm)
    with session.runner(chooser, "kubeshift replace-nodes") as runner:
        return runner.run_action(phase, hooks)


def _refuse_early(
    progress: Progress, order: tuple[str, ...], phase: str, request: HooksRequest
) -> None:
    command = f"kubeshift --stack {request.stack}"
    if request.side == "after" and not progress.has(phase, "update"):
        raise UserError(
            f"Phase '{phase}' has no successful update recorded with the stack, so its "
            f"after-steps would check nothing; run `pulumi up` at kubeshift:phase {phase} "
            f"first (or `{command} run`)."
        )
    if request.side == "before":
        earlier = [m for m in missing(progress, order, phase) if m != f"before {phase}"]
        if earlier:
            raise UserError(
                f"Phase '{phase}' comes too early: the stack records no {listed(earlier)}, so "
                f"nothing was run; finish the earlier phases first (`{command} run --to "
                f"{order[order.index(phase) - 1]}`)."
            )


def _chooser(
    yes: bool, interactive: bool, confirm: Callable[[str], bool] | None
) -> Callable[[str], bool] | None:
    """How destructive steps get confirmed: --yes, the terminal, or not at all (refused)."""
    if yes:
        return lambda _question: True
    return confirm if interactive else None


def _reporter(console: Any, as_json: bool) -> Reporter:
    return RichReporter(console) if console is not None and not as_json else NullReporter()


@contextmanager
def _holding(project: Path, stack: str, run_id: str, reporter: Reporter) -> Iterator[None]:
    """Everything a run holds while it changes a stack: lock, run mark, progress, Ctrl-C."""
    directory = state_dir(project)
    with (
        stack_lock(directory / f"{stack}.lock", stack),
        run_mark(marker_path(directory, stack), run_id),
        reporter if isinstance(reporter, RichReporter) else nullcontext(),
        stop_at_safe_points(logging.getLogger("kubeshift").warning),
    ):
        wait_for_orphaned_engines(project, stack, reporter)
        yield


@dataclass(frozen=True)
class AdoptRequest:
    """Take the live cluster the stack describes into the stack's state."""

    project: Path
    stack: str
    yes: bool = False
    dry_run: bool = False
    interactive: bool = False
    json: bool = False
    accept_updates: bool = False
    accept_own_tags: bool = False
    keep_live: bool = False


def execute_adoption(
    request: AdoptRequest,
    *,
    console: Any = None,
    confirm: Callable[[str], bool] | None = None,
    engine_factory: Callable[[Path, str, str, dict[str, str]], Engine] | None = None,
    clients: ClientSet | None = None,
) -> AdoptReport:
    """Find what runs, preview its import, and — when nothing differs or the user accepted
    the in-place updates — import it through the engine, journalled; then check that the
    first phase's preview changes nothing. Refusals change nothing."""
    from automation.adoption.adopt import Adoption
    from automation.adoption.kept_inputs import count
    from automation.aws.account import reach_account

    info = load_stack(request.project, request.stack)
    settings = load_runtime_settings(info.values)
    path = journal_path(request.project, request.stack)
    check_state_dir(state_dir(request.project))
    load_journal(path, request.stack, info.scenario)
    clients = clients or LazyClients(settings)
    reach_account(clients.aws())
    adoption = Adoption(
        project=request.project,
        info=info,
        clients=clients,
        engine_factory=engine_factory or _adoption_engine,
        status=_status(console, request.json or console is None),
    )
    plan = adoption.plan(
        accept_updates=request.accept_updates,
        accept_own_tags=request.accept_own_tags,
        keep_live=request.keep_live,
    )
    if request.dry_run or plan.outcome != "planned":
        return plan
    chooser = _chooser(request.yes, request.interactive, confirm)
    question = (
        f"Import {len(plan.imported)} live resources into stack '{request.stack}'"
        + (f" and record {len(plan.recorded)} attachments" if plan.recorded else "")
        + (f", keeping {count(plan.kept)} live value(s) in {info.path.name}" if plan.kept else "")
        + "?"
    )
    if chooser is None or not chooser(question):
        raise UserError(
            f"Adoption imports {len(plan.imported)} resources into the stack; confirm with "
            "--yes (or answer yes at the prompt). Nothing was imported."
        )
    check_state_dir_writable(state_dir(request.project))
    run_id = uuid.uuid4().hex
    reporter = _reporter(console, request.json)
    with _holding(request.project, request.stack, run_id, reporter):
        secrets = secret_strings(info.values, adoption.secret_config())
        journal = Journal(path, request.stack, secrets, scenario=info.scenario)
        return adoption.apply(plan, journal, run_id)


def _adoption_engine(project: Path, stack: str, run_id: str, env: dict[str, str]) -> Engine:
    from automation.core import logs
    from automation.engine.adapter import PulumiEngine, require_pulumi_cli

    require_pulumi_cli()
    return PulumiEngine(
        project, stack, create=True, on_output=logs.engine_detail, env=env, run_id=run_id
    )


def _status(console: Any, quiet: bool) -> Callable[[str], Any]:
    """A context manager factory showing what adoption is doing (a spinner on a terminal)."""
    if quiet:
        return lambda _text: nullcontext()
    return lambda text: console.status(text)


def execute_proposal(
    project: Path, stack: str, target: Path, *, clients: ClientSet | None = None
) -> ProposedStack:
    """Propose the stack file from what runs and write it to ``target`` (nothing else is
    written; a proposal with problems is not written at all)."""
    from automation.adoption.stack_file import check_targets, propose_stack, write
    from automation.aws.account import reach_account
    from automation.config.project import stack_path
    from automation.core.errors import ConfigError
    from components.contract import keys as stack_keys
    from components.contract import loading as stack_loading
    from components.contract import models as stack_models

    path = stack_path(project, stack)
    try:
        values = stack_loading.load_stack_file(path)
    except stack_models.ConfigError as exc:
        raise ConfigError(f"{path.name}: {exc}") from exc
    settings = load_runtime_settings(values)
    check_targets(target, stack)
    aws = (clients or LazyClients(settings)).aws()
    reach_account(aws)
    proposed = propose_stack(values, path, aws)
    if not proposed.proposal.problems:
        written = write(proposed, target, str(values.get(stack_keys.REGION_KEY, "")), stack)
        proposed = dataclasses.replace(proposed, written=written)
    return proposed
