"""``kubeshift hooks`` and ``kubeshift replace-nodes``: steps run outside ``kubeshift
run``, around a ``pulumi up`` by hand or on named nodes, journalled and recorded.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from automation.config.clients import LazyClients
from automation.config.project import StackInfo, load_stack
from automation.config.settings import RuntimeSettings, load_runtime_settings
from automation.core.documents import Document
from automation.core.errors import UserError
from automation.core.progress import NullReporter, Reporter
from automation.core.secrets import secret_strings
from automation.engine.adapter import Engine
from automation.model.context import ClientSet, HookContext
from automation.model.phase import Phase, Scenario
from automation.run.going_back import finished_before, reached, walk_back
from automation.run.journal import (
    Journal,
    check_state_dir,
    check_state_dir_writable,
    load_journal,
    state_dir,
)
from automation.run.kept_check import refuse_kept_for_nothing
from automation.run.planner import Planner
from automation.run.runner import Runner
from automation.run.steps import Confirm, RunReport
from automation.scenarios import build_scenario
from automation.session.assembly import (
    EngineFactory,
    confirmer,
    context_factory,
    holding,
    journal_place,
    pulumi_engine,
    reporter_for,
)
from components.contract.checks import DNS_SUBDOMAIN
from components.contract.progress import Progress, listed, missing
from components.contract.registry import StackOutputs


@dataclass(frozen=True)
class HooksRequest:
    """One side of one phase's hooks and gates, for an engineer who runs ``pulumi up``."""

    project: Path
    stack: str
    phase: str
    side: Literal["before", "after"]
    undo: bool = False
    """The steps of the phase's way back (``back-from-<phase>``), around a ``pulumi up``
    at the phase before it."""
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


@dataclass
class _StepsSession:
    """What running steps outside ``kubeshift run`` needs, checked before any write:
    the stack, its scenario, its settings, the journal (readable), an engine and contexts."""

    project: Path
    stack: str
    info: StackInfo
    scenario: Scenario
    settings: RuntimeSettings
    journal: Document
    run_id: str
    engine: Engine
    reporter: Reporter
    factory: Callable[..., HookContext]
    clients: ClientSet

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
        journal = journal_place(project, stack).journal
        check_state_dir(state_dir(project))
        load_journal(journal, stack, info.scenario)
        refuse_kept_for_nothing(info, state_dir(project) / "render-cache")
        run_id = uuid.uuid4().hex
        reporter = NullReporter() if quiet else reporter_for(console, False)
        clients = clients or LazyClients(settings)
        return cls(
            project, stack, info, scenario, settings, journal, run_id,
            engine_factory(project, stack, run_id), reporter,
            context_factory(info, settings, clients, reporter), clients,
        )  # fmt: skip

    def refuse_while_another_tool_manages(self, phase: Phase) -> None:
        """Before a phase's before-steps: refused while the tool that built the cluster
        still manages what its update would change (``runtime.terraform_state``,
        ``runtime.kops_state``; ``automation.run.released``)."""
        settings = self.settings
        if settings.terraform_state is None and settings.kops_state is None:
            return
        from automation.run.released import release_check
        from automation.run.targets import PhaseRenders

        cache = state_dir(self.project) / "render-cache"
        renders = PhaseRenders(self.info.values, self.scenario.ids(), cache)
        check = release_check(
            settings.terraform_state, settings.kops_state, self.clients, renders, self.engine
        )
        if check is not None:
            check(phase)

    def planner(self) -> Planner:
        """A planner over the journal as it is (none yet: no journal) and the stack's
        current outputs."""
        existing = Journal(self.journal, self.stack, scenario=self.info.scenario)
        return Planner(
            existing if existing.exists else None, self.factory,
            order=self.scenario.phases, outputs=self.engine.outputs(),
        )  # fmt: skip

    @contextmanager
    def runner(self, confirm: Confirm | None, actor: str) -> Iterator[Runner]:
        """The stack's lock held, the journal open for writing, a runner over both."""
        check_state_dir_writable(state_dir(self.project))
        lease = self.settings.run_lock
        with holding(self.project, self.stack, self.run_id, self.reporter, lease):
            secrets = secret_strings(self.info.values, self.engine.secret_config())
            journal = Journal(self.journal, self.stack, secrets, scenario=self.info.scenario)
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
    chooser = confirmer(request.yes, request.interactive, confirm)
    # Too early is a user error: said before the lock, the journal or any write.
    planner = session.planner()
    if request.undo:
        return _undo_steps(session, planner, request, chooser)
    _refuse_early(planner.progress(), scenario.ids(), phase.id, request)
    if request.dry_run:
        report = planner.describe_steps(phase, request.side)
        report.note = "planned from the stack's current outputs"
        return report
    if request.side == "before":
        session.refuse_while_another_tool_manages(phase)
    with session.runner(chooser, "kubeshift hooks") as runner:
        _refuse_early(runner.progress(), scenario.ids(), phase.id, request)  # under the lock
        return runner.run_steps(phase, request.side)


def _undo_steps(
    session: _StepsSession, planner: Planner, request: HooksRequest, chooser: Confirm | None
) -> RunReport:
    """One side of the phase's way back: before-steps, then the engineer's ``pulumi up``
    at the phase before it, then after-steps, which record the phase taken back (its
    marks dropped from the stack's record, its journal records undone)."""
    done = planner.journal.done_phases() if planner.journal is not None else []
    undo = _undo_phase(session.scenario, planner.progress(), done, request)
    if request.side == "after":
        _refuse_undone_too_early(planner.contexts.outputs, undo, request)
    if request.dry_run:
        report = planner.describe_steps(undo, request.side)
        report.note = "planned from the stack's current outputs"
        return report
    with session.runner(chooser, "kubeshift hooks --undo") as runner:  # checked again, held
        done = runner.journal.done_phases()
        undo = _undo_phase(session.scenario, runner.progress(), done, request)
        if request.side == "after":
            _refuse_undone_too_early(runner.contexts.outputs, undo, request)
        if request.side == "before":
            runner.journal.undo(finished_before(runner.journal, [undo]), "going back again")
        return runner.run_undo_steps(undo, request.side)


def _undo_phase(
    scenario: Scenario, progress: Progress, done: list[str], request: HooksRequest
) -> Phase:
    """The undo phase of ``request.phase``: it must be the latest phase the stack entered
    (``done``: the journal's phases with a finished step) and have a way back kubeshift
    runs (``walk_back``'s refusals, one sentence each)."""
    ids = scenario.ids()
    index = ids.index(request.phase)
    if index == 0:
        raise UserError(f"Phase '{request.phase}' is the first phase: there is nothing before it.")
    if progress.finished(ids[index - 1]) is None or request.phase not in {
        p.id for p in reached(scenario, progress, set(done))
    }:
        raise UserError(
            f"Phase '{request.phase}' has not run on this stack, so there is nothing of it "
            "to take back; `kubeshift status` shows where the stack is."
        )
    walk = walk_back(scenario, progress, ids[index - 1], done)
    if walk[0].undoes != (request.phase,):
        latest = walk[0].undoes[0]
        raise UserError(
            f"Phase '{latest}' ran after '{request.phase}': take it back first "
            f"(`kubeshift hooks {latest} --undo --before`)."
        )
    return walk[0]


def _refuse_undone_too_early(outputs: dict[str, Any], undo: Phase, request: HooksRequest) -> None:
    deployed = StackOutputs.model_validate(outputs).phase
    if deployed != undo.applies:
        raise UserError(
            f"The stack last deployed phase '{deployed}', not '{undo.applies}': run `pulumi "
            f"up` with kubeshift:phase {undo.applies} first, then the after-steps that "
            f"record '{request.phase}' taken back."
        )


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
    chooser = confirmer(request.yes, request.interactive, confirm)
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
