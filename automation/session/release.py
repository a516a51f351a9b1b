"""``kubeshift release``: kops lets go of the instance groups kubeshift took.

After adoption kops's state store still holds an instance group for each Auto Scaling
group kubeshift adopted, and kops's next ``update cluster --yes`` would put back what a
phase changes (:mod:`automation.aws.kops_state`). Release moves those groups' specs out
of kops's sight — never its nodeup configurations, which the nodes kubeshift launches
read — after showing them; a phase refuses to start until it is done
(:mod:`automation.run.released`). A Terraform state is released with the ``terraform
state rm`` commands ``adopt`` prints: kubeshift does not run Terraform.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from automation.adoption.discovery import GROUP
from automation.aws import kops_state
from automation.config.clients import LazyClients
from automation.config.project import load_stack
from automation.config.settings import load_runtime_settings
from automation.core.errors import UserError
from automation.engine.adapter import urn_type
from automation.model.context import ClientSet
from automation.session.assembly import EngineFactory, pulumi_engine

Confirm = Callable[[str], bool]


@dataclass
class Release:
    """What a release found and did."""

    stack: str
    store: str
    groups: list[str] = field(default_factory=list)
    """Instance groups kops's store holds whose Auto Scaling groups the stack holds."""
    commands: list[str] = field(default_factory=list)
    """The same release, by hand."""
    moved: list[str] = field(default_factory=list)


def release(
    project: Path,
    stack: str,
    *,
    dry_run: bool,
    confirm: Confirm | None,
    clients: ClientSet | None = None,
    engine_factory: EngineFactory = pulumi_engine,
) -> Release:
    """Release, once confirmed, every instance group of kops's state store whose Auto
    Scaling group the stack holds."""
    info = load_stack(project, stack)
    settings = load_runtime_settings(info.values)
    location = settings.kops_state
    if location is None:
        raise UserError(
            f"Stack '{stack}' names no kops state store (kubeshift:runtime.kops_state), so "
            "there is nothing for kubeshift to release; a Terraform state is released with "
            "the `terraform state rm` commands `kubeshift adopt` prints."
        )
    kops_state.config_base(location)  # a malformed setting refuses before anything is read
    clients = clients or LazyClients(settings)
    s3 = clients.aws().client("s3")
    deployment = engine_factory(project, stack, "").checkpoint().deployment
    held = {
        str(r["id"])
        for r in deployment.get("resources") or []
        if urn_type(str(r.get("urn", ""))) == GROUP and r.get("id")
    }
    claimed = kops_state.still_claimed(kops_state.group_claims(location, s3), held)
    found = Release(
        stack,
        location,
        [c.group for c in claimed],
        kops_state.release_commands(location, claimed),
    )
    if not claimed or dry_run:
        return found
    question = (
        f"Move {len(claimed)} instance group spec(s) out of kops's state store {location} "
        f"({', '.join(found.groups)})?"
    )
    if confirm is None or not confirm(question):
        raise UserError(
            f"Releasing moves {len(claimed)} instance group spec(s) out of kops's state "
            "store; confirm with --yes (or answer yes at the prompt). Nothing was moved."
        )
    found.moved = kops_state.move_aside(location, claimed, s3)
    return found
