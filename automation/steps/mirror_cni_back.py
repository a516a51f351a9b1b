"""Taking cni-swap back on the primary while the mirror still serves: the old CNI again.

The forward swap in reverse: the old CNI is reinstalled from the manifest the operator
kept (kubeshift keeps none of a CNI it did not install), the new CNI's DaemonSet goes
only once the old one exists, the old CNI must run on every node before the old
generation is schedulable again, and the new generation is then drained while no moved
Service loses every endpoint on the mirror; the update that follows deletes its groups.
"""

from __future__ import annotations

from automation.core.errors import PreconditionFailed
from automation.core.waiting import Pending
from automation.model.context import HookContext
from automation.model.phase import HookResult
from automation.steps.mirror import PRIMARY, SETTINGS_KEY, mirror_settings
from automation.steps.mirror_cni import (
    apply_cni_manifest,
    cni_gone,
    drain_generation,
    generations,
    old_generation,
    remove_cni,
)


def reinstall_old_cni(ctx: HookContext) -> HookResult:
    """Apply the old CNI's manifest on the primary (its pods wait for the new CNI to go,
    as the new one's did at the swap); refused, before anything changes, without one."""
    settings = mirror_settings(ctx)
    old = settings.old_cni
    if settings.old_cni_manifest is None:
        raise PreconditionFailed(
            f"cni-swap cannot be taken back without the old CNI's manifest: name the file "
            f"{old.namespace}/{old.name} was installed from in {SETTINGS_KEY}.old_cni_manifest."
        )
    return apply_cni_manifest(ctx, settings.old_cni_manifest, old, "old")


def remove_new_cni(ctx: HookContext) -> HookResult:
    """Delete the new CNI's DaemonSet on the primary, only once the old CNI's is back."""
    settings = mirror_settings(ctx)
    old, new = settings.old_cni, settings.new_cni
    return remove_cni(
        ctx, new, old,
        f"reinstall the old CNI on the primary before {new.namespace}/{new.name} is removed.",
    )  # fmt: skip


def new_cni_gone(ctx: HookContext) -> Pending:
    return cni_gone(ctx, mirror_settings(ctx).new_cni)


def old_cni_on_every_node(ctx: HookContext) -> Pending:
    """The old CNI has a Ready pod on every node it targets, the old generation's too."""
    from automation.kube.cni import cni_ready_on_all_nodes

    old = mirror_settings(ctx).old_cni
    return cni_ready_on_all_nodes(ctx.clients.kube(PRIMARY), old.namespace, old.name)


def uncordon_old_generation(ctx: HookContext) -> HookResult:
    """The old generation schedulable again, for what the new generation's drain evicts."""
    from automation.kube.nodes import NodeSelection, uncordon_nodes

    names, described = old_generation(ctx)
    if not names:
        return HookResult(False, f"no node is {described}; nothing to uncordon")
    change = uncordon_nodes(
        ctx.clients.kube(PRIMARY).core, NodeSelection(names=names), dry_run=ctx.dry_run
    )
    return HookResult(bool(change.changed) and not ctx.dry_run, change.message)


def drain_new_generation(ctx: HookContext) -> HookResult:
    """Cordon and drain the new generation (its groups go in the update after), while no
    moved Service loses every endpoint on the mirror."""
    selector = mirror_settings(ctx).new_nodes_selector
    names, _ = generations(ctx, selector)
    if not names:
        return HookResult(False, f"no worker matches '{selector}'; nothing to drain")
    return drain_generation(ctx, names)
