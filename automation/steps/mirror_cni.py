"""cni-swap steps on the primary while the mirror serves: swap the CNI, roll the nodes.

The new CNI is installed while the old still runs, the old CNI's DaemonSet is deleted
only once the new one exists, the doubled nodes (the new generation) must run the new
CNI and reach each other pod to pod (a netexec probe per node), and then the old
generation is cordoned and drained while no moved Service loses every endpoint on the
mirror (``automation.kube.cni``, ``automation.kube.pod_network``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from automation.config.mirror_settings import DaemonSetRef
from automation.core.errors import PreconditionFailed
from automation.core.waiting import Pending
from automation.model.context import HookContext
from automation.model.phase import HookResult
from automation.steps.availability import watched
from automation.steps.mirror import (
    MIRROR,
    PRIMARY,
    SETTINGS_KEY,
    copy_options,
    expected_workers,
    mirror_settings,
)
from automation.steps.mirror_dns import left_on_primary


def install_new_cni(ctx: HookContext) -> HookResult:
    """Apply the new CNI's manifest on the primary while the old CNI still runs (seed 000:
    Calico's pods crash-loop until Weave is deleted, then settle)."""
    from automation.kube.cni import require_daemonset

    settings = mirror_settings(ctx)
    new = settings.new_cni
    primary = ctx.clients.kube(PRIMARY)
    if settings.new_cni_manifest is None:
        require_daemonset(
            primary,
            new.namespace,
            new.name,
            f"name its manifest in {SETTINGS_KEY}.new_cni_manifest, or install it on the "
            "primary before this phase.",
        )
        return HookResult(False, f"DaemonSet {new.namespace}/{new.name} already installed")
    return apply_cni_manifest(ctx, settings.new_cni_manifest, new, "new")


def apply_cni_manifest(
    ctx: HookContext, manifest: Path, cni: DaemonSetRef, which: Literal["new", "old"]
) -> HookResult:
    """Apply a CNI's manifest on the primary (server-side apply: idempotent) and check it
    made the CNI's DaemonSet (``runtime.mirror.<which>_cni`` names it)."""
    from automation.kube.cni import require_daemonset
    from automation.kube.manifests import apply_manifest, load_manifest

    primary = ctx.clients.kube(PRIMARY)
    documents = load_manifest(manifest, f"{SETTINGS_KEY}.{which}_cni_manifest")
    report = apply_manifest(primary, documents, dry_run=ctx.dry_run)
    if not ctx.dry_run:
        require_daemonset(
            primary,
            cni.namespace,
            cni.name,
            f"the manifest {manifest} does not create it; check {SETTINGS_KEY}.{which}_cni "
            "against the manifest.",
        )
    return HookResult(
        bool(report.changed) and not ctx.dry_run,
        report.message,
        {"applied": list(report.changed), "unchanged": len(report.unchanged)},
    )


def remove_old_cni(ctx: HookContext) -> HookResult:
    """Delete the old CNI's DaemonSet on the primary (seed: delete Weave before rolling),
    only once the new CNI's DaemonSet is installed: without it no node would have a
    network after the roll."""

    settings = mirror_settings(ctx)
    old, new = settings.old_cni, settings.new_cni
    return remove_cni(
        ctx, old, new,
        f"install the new CNI on the primary before {old.namespace}/{old.name} is removed "
        "(kubeshift:runtime.mirror.new_cni names it).",
    )  # fmt: skip


def remove_cni(ctx: HookContext, cni: DaemonSetRef, other: DaemonSetRef, why: str) -> HookResult:
    """Delete ``cni``'s DaemonSet on the primary, refused (``why``) while ``other``'s,
    which takes its place, does not exist. Idempotent."""
    from automation.kube.cni import remove_daemonset, require_daemonset

    primary = ctx.clients.kube(PRIMARY)
    require_daemonset(primary, other.namespace, other.name, why)
    removal = remove_daemonset(primary, cni.namespace, cni.name, dry_run=ctx.dry_run)
    return HookResult(removal.changed, removal.message)


def cni_gone(ctx: HookContext, cni: DaemonSetRef) -> Pending:
    """``cni``'s DaemonSet and pods are gone from the primary."""
    from automation.kube.cni import cni_gone as gone

    return gone(ctx.clients.kube(PRIMARY), cni.namespace, cni.name, cni.pod_selector)


def old_cni_gone(ctx: HookContext) -> Pending:
    return cni_gone(ctx, mirror_settings(ctx).old_cni)


def new_cni_on_every_node(ctx: HookContext) -> Pending:
    """The new CNI has a Ready pod on every node of the new generation."""
    from automation.kube.cni import cni_ready_on_all_nodes

    settings = mirror_settings(ctx)
    new = settings.new_cni
    return cni_ready_on_all_nodes(
        ctx.clients.kube(PRIMARY), new.namespace, new.name, settings.new_nodes_selector
    )


def install_pod_network_probe(ctx: HookContext) -> HookResult:
    """One netexec pod per node of the primary, to try pod-to-pod traffic after the roll."""
    from automation.kube.pod_network import install_probe

    check = mirror_settings(ctx).pod_network
    if check.off:
        return HookResult(False, check.off)
    report = install_probe(ctx.clients.kube(PRIMARY), check, dry_run=ctx.dry_run)
    return HookResult(bool(report.changed) and not ctx.dry_run, report.message)


def pod_network_across_nodes(ctx: HookContext) -> Pending:
    """Pods on the new generation reach each other node to node (names the broken nodes)."""
    from automation.kube.pod_network import pod_network_reaches_every_node

    settings = mirror_settings(ctx)
    if settings.pod_network.off:
        return Pending.of([], settings.pod_network.off)
    advice = (
        f"replace them with `kubeshift --stack {ctx.stack} replace-nodes --phase {ctx.phase} "
        "NODE...`, then run again"
    )
    return pod_network_reaches_every_node(
        ctx.clients.kube(PRIMARY), settings.pod_network, settings.new_nodes_selector,
        advice=advice,
    )  # fmt: skip


def remove_pod_network_probe(ctx: HookContext) -> HookResult:
    """The probe DaemonSet goes once the network is proven."""
    from automation.kube.cni import remove_daemonset

    check = mirror_settings(ctx).pod_network
    if check.off:
        return HookResult(False, check.off)
    removal = remove_daemonset(
        ctx.clients.kube(PRIMARY), check.namespace, check.name, dry_run=ctx.dry_run
    )
    return HookResult(removal.changed, removal.message)


def new_generation_ready(ctx: HookContext) -> Pending:
    """The primary's doubled nodes (the new generation) joined and are Ready."""
    from automation.kube.gates import nodes_ready

    return nodes_ready(
        ctx.clients.kube(PRIMARY),
        mirror_settings(ctx).new_nodes_selector,
        expected=expected_workers(ctx),
    )


def drain_old_generation(ctx: HookContext) -> HookResult:
    """Seed: "double the nodes, then scale in the old ones" — drain the old generation."""
    names, described = old_generation(ctx)
    if not names:
        return HookResult(False, f"no node is {described}; nothing to drain")
    return drain_generation(ctx, names)


def drain_generation(ctx: HookContext, names: list[str]) -> HookResult:
    """Cordon a whole worker generation of the primary, then drain it while the mirror
    serves the moved Services: none may lose every endpoint there."""
    from automation.kube.nodes import NodeSelection, cordon_nodes
    from automation.steps.nodes import drain

    kube = ctx.clients.kube(PRIMARY)
    # Cordon the whole generation first: a pod evicted from one of its nodes must not
    # land on another and be evicted twice.
    cordon_nodes(kube.core, NodeSelection(names=names), dry_run=ctx.dry_run)
    copied = set(copy_options(ctx).namespaces)
    stayed = left_on_primary(ctx)
    return watched(
        ctx,
        lambda: drain(ctx, kube, names),
        serving=MIRROR,
        only=lambda ref: ref.split("/", 1)[0] in copied and ref not in stayed,
    )


def old_generation(ctx: HookContext) -> tuple[list[str], str]:
    """The old generation's node names, and how they were chosen (for messages).

    Unset, ``old_nodes_selector`` means every worker outside the new generation: the old
    CNI leaves every node, so no worker may stay behind on it, whatever labels the tool
    that built the cluster gave its nodes (kops labels them by instance group); while no
    node is of the new generation, that would be every worker, and it is refused. Set,
    it is taken as given, and a selector that matches no node while workers outside the
    new generation run is refused: those workers would be left on the old CNI.
    """
    from automation.kube.clients import list_all

    settings = mirror_settings(ctx)
    selector, new = settings.old_nodes_selector, settings.new_nodes_selector
    newer, outside = generations(ctx, new)
    if selector is not None:
        kube = ctx.clients.kube(PRIMARY)
        listed = list_all(kube.core.list_node, action="list nodes", label_selector=selector)
        names = [n["metadata"]["name"] for n in listed["items"]]
        if both := sorted(set(names) & set(newer)):
            raise PreconditionFailed(
                f"{SETTINGS_KEY}.old_nodes_selector '{selector}' also selects "
                f"{len(both)} node(s) of the new generation ('{new}'): "
                f"{', '.join(both[:3])}{', …' if len(both) > 3 else ''}; those would be "
                "drained with the old, so narrow it to the old generation."
            )
        if names:
            return names, f"matched by '{selector}'"
    if selector is None:
        if outside and not newer:
            raise PreconditionFailed(
                f"{SETTINGS_KEY}.new_nodes_selector '{new}' matches no node, so every worker "
                f"({len(outside)}) would be drained as the old generation; check it against "
                "the new generation's labels."
            )
        return outside, f"a worker outside the new generation ('{new}')"
    if outside:
        raise PreconditionFailed(
            f"{SETTINGS_KEY}.old_nodes_selector '{selector}' matches no node, yet "
            f"{len(outside)} worker(s) outside the new generation ('{new}') still run "
            f"({', '.join(outside[:3])}{', …' if len(outside) > 3 else ''}); set it to select "
            "them, or unset it to drain every worker outside the new generation."
        )
    return [], f"matched by '{selector}'"


def generations(ctx: HookContext, new_selector: str) -> tuple[list[str], list[str]]:
    """The primary's workers (no control-plane role) that ``new_selector`` selects, and
    those it does not, each sorted by name."""
    from automation.kube.clients import list_all
    from automation.steps.nodes import is_control_plane

    kube = ctx.clients.kube(PRIMARY)
    listed = list_all(kube.core.list_node, action="list nodes")["items"]
    newer = list_all(kube.core.list_node, action="list nodes", label_selector=new_selector)
    selected = {n["metadata"]["name"] for n in newer["items"]}
    workers = sorted(n["metadata"]["name"] for n in listed if not is_control_plane(n))
    return (
        [name for name in workers if name in selected],
        [name for name in workers if name not in selected],
    )
