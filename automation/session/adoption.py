"""``kubeshift adopt``: the live cluster taken into the stack's state, or its stack
file proposed from what runs.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from automation.adoption.models import AdoptReport
from automation.adoption.stack_file import ProposedStack
from automation.config.clients import LazyClients
from automation.config.project import load_stack
from automation.config.settings import load_runtime_settings
from automation.core.errors import UserError
from automation.core.secrets import secret_strings
from automation.engine.adapter import Engine
from automation.model.context import ClientSet
from automation.run.journal import (
    Journal,
    check_state_dir,
    check_state_dir_writable,
    load_journal,
    state_dir,
)
from automation.session.assembly import confirmer, holding, journal_place, reporter_for


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
    place = journal_place(request.project, request.stack)
    check_state_dir(state_dir(request.project))
    load_journal(place.journal, request.stack, info.scenario)
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
    if settings.terraform_state is not None:
        plan = with_terraform_claims(plan, settings.terraform_state, clients)
    if settings.kops_state is not None:
        plan = with_kops_claims(plan, settings.kops_state, clients)
    if request.dry_run or plan.outcome != "planned":
        return plan
    chooser = confirmer(request.yes, request.interactive, confirm)
    question = (
        f"Import {len(plan.imported)} live resources into stack '{request.stack}'"
        + (f" and record {len(plan.recorded)} attachments" if plan.recorded else "")
        + (f", and add {len(plan.added)} it lacks beside them" if plan.added else "")
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
    reporter = reporter_for(console, request.json)
    with holding(request.project, request.stack, run_id, reporter, settings.run_lock):
        secrets = secret_strings(info.values, adoption.secret_config())
        journal = Journal(place.journal, request.stack, secrets, scenario=info.scenario)
        return adoption.apply(plan, journal, run_id)


def with_terraform_claims(plan: AdoptReport, location: str, clients: ClientSet) -> AdoptReport:
    """The report, naming what the Terraform state still manages of what is adopted."""
    from automation.aws.terraform_state import release_commands, state_claims, still_claimed

    found = plan.discovery.resources
    adopted = {r.id for r in found} | {r.import_id for r in found if r.import_id}
    claimed = still_claimed(state_claims(location, clients.aws().client("s3")), adopted)
    return plan.model_copy(
        update={
            "terraform_claims": [c.address for c in claimed],
            "terraform_release": release_commands(claimed),
        }
    )


def with_kops_claims(plan: AdoptReport, location: str, clients: ClientSet) -> AdoptReport:
    """The report, naming the instance groups kops's state store still holds of what is
    adopted."""
    from automation.aws.kops_state import group_claims, release_commands, still_claimed

    adopted = {r.id for r in plan.discovery.resources}
    claimed = still_claimed(group_claims(location, clients.aws().client("s3")), adopted)
    return plan.model_copy(
        update={
            "kops_claims": [c.group for c in claimed],
            "kops_release": release_commands(location, claimed),
        }
    )


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
    from components.contract import model_base as stack_model_base

    path = stack_path(project, stack)
    try:
        values = stack_loading.load_stack_file(path)
    except stack_model_base.ConfigError as exc:
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
