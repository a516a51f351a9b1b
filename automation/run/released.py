"""A phase does not start while the tool that built the cluster still manages what it
would change: Terraform's next apply, or kops's next ``update cluster --yes``, would put
the change back.

What a phase would change is the program's difference from the phase before
(``PhaseRenders.entering``: what it removes, changes or moves; what it adds is new and
nobody's); each of those resources is found in the stack's checkpoint by type and name,
its ``id`` and ``arn`` matched against the Terraform state's claims
(``automation.aws.terraform_state``), its ``id`` and ``name`` against the names of the
groups kops's state store holds (``automation.aws.kops_state``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from automation.aws import kops_state
from automation.aws.terraform_state import (
    TerraformClaim,
    release_commands,
    state_claims,
    still_claimed,
)
from automation.core.errors import PreconditionFailed
from automation.engine.adapter import urn_name, urn_type

if TYPE_CHECKING:
    from automation.engine.adapter import Engine
    from automation.model.context import ClientSet
    from automation.model.phase import Phase
    from automation.review.diff import PhaseDiff, ResourceKey
    from automation.run.targets import PhaseRenders

SETTING = "kubeshift:runtime.terraform_state"
KOPS_SETTING = "kubeshift:runtime.kops_state"


def touched(diff: PhaseDiff) -> set[ResourceKey]:
    """What a phase's update would change of what exists: removed, changed, moved from."""
    return {*diff.removed, *diff.changed, *diff.moved.values()}


def live_ids(
    deployment: dict[str, Any], keys: Iterable[ResourceKey], outputs: tuple[str, ...] = ("arn",)
) -> set[str]:
    """The ``id`` and the ``outputs`` (``arn``) of each checkpoint resource with one of
    ``keys``."""
    wanted = {(k.type, k.name) for k in keys}
    ids: set[str] = set()
    for resource in deployment.get("resources") or []:
        urn = str(resource.get("urn", ""))
        if (urn_type(urn), urn_name(urn)) not in wanted:
            continue
        found = resource.get("outputs") or {}
        ids |= {str(v) for v in (resource.get("id"), *(found.get(k) for k in outputs)) if v}
    return ids


def refusal(phase: str, claimed: list[TerraformClaim]) -> PreconditionFailed:
    commands = release_commands(claimed)
    shown = ", ".join(c.address for c in claimed[:3]) + (", …" if len(claimed) > 3 else "")
    more = f" (and {len(commands) - 1} more command(s) like it)" if len(commands) > 1 else ""
    return PreconditionFailed(
        f"{phase} would change {len(claimed)} resource(s) Terraform still manages ({shown}; "
        f"{SETTING}): release them with `{commands[0]}`{more}, then run again."
    )


def kops_refusal(
    phase: str, location: str, claimed: list[kops_state.KopsClaim]
) -> PreconditionFailed:
    commands = kops_state.release_commands(location, claimed)
    shown = ", ".join(c.group for c in claimed[:3]) + (", …" if len(claimed) > 3 else "")
    more = f" (and {len(commands) - 1} more like it)" if len(commands) > 1 else ""
    return PreconditionFailed(
        f"{phase} would change the Auto Scaling groups of {len(claimed)} instance group(s) "
        f"kops's state store still holds ({shown}; {KOPS_SETTING}), which kops's next "
        f"`update cluster --yes` would put back: release them with `{commands[0]}`{more} "
        "(or `kubeshift release`), then run again."
    )


def release_check(
    terraform: str | None,
    kops: str | None,
    clients: ClientSet,
    renders: PhaseRenders,
    engine: Engine,
) -> Callable[[Phase], None] | None:
    """A check that refuses a phase whose update changes a resource the Terraform state at
    ``terraform`` (``runtime.terraform_state``) manages or an instance group kops's state
    store at ``kops`` (``runtime.kops_state``) holds; None without either. The state,
    the store and the checkpoint are read for each phase that changes something that
    exists (a release made while a run waits is seen by its next phase)."""
    if terraform is None and kops is None:
        return None
    needs_s3 = kops is not None or (terraform or "").startswith("s3://")
    s3 = clients.aws().client("s3") if needs_s3 else None

    def check(phase: Phase) -> None:
        if phase.applies != phase.id:
            return  # a way back puts back what the phase changed: nothing more of theirs
        keys = touched(renders.entering(phase.id))
        if not keys:
            return
        deployment = engine.checkpoint().deployment
        if terraform is not None:
            claims = state_claims(terraform, s3)
            claimed = still_claimed(claims, live_ids(deployment, keys))
            if claimed:
                raise refusal(phase.id, claimed)
        if kops is not None:
            groups = kops_state.group_claims(kops, s3)
            held = kops_state.still_claimed(groups, live_ids(deployment, keys, ("name",)))
            if held:
                raise kops_refusal(phase.id, kops, held)

    return check
