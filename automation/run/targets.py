"""Targeted updates, as the seed ran each control-plane step (``terraform apply -target``).

A targeted phase updates only what the program's own render changes entering it: the
resources it adds, removes or changes between the previous phase and this one,
rendered offline (``automation.review.render``), plus the stack itself so its outputs (the
progress record) are written. Renders are taken once per phase and shared with the
guard's scope. Resources still to be created are targeted too: their URNs come from
the render, re-rooted on the real stack, not from the state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from automation.core.errors import PreconditionFailed
from automation.review.diff import PhaseDiff, ResourceKey, diff_resources

if TYPE_CHECKING:
    from automation.review.rendered import RenderedResource

STACK_TYPE = "pulumi:pulumi:Stack"


class PhaseRenders:
    """Offline renders of a stack's phases, each taken at most once; with ``cache`` (the
    render cache ``render`` and ``diff`` fill, ``review.render_cache``) one an earlier
    command or run took is read instead (about 3 s each at 626 resources)."""

    def __init__(
        self, values: Mapping[str, Any], phase_ids: Sequence[str], cache: Path | None = None
    ) -> None:
        self._values = dict(values)
        self._ids = tuple(phase_ids)
        self._cache = cache
        self._renders: dict[str, list[RenderedResource]] = {}

    def rendered(self, phase: str) -> list[RenderedResource]:
        if phase not in self._renders:
            self._renders[phase] = self._render(phase)
        return self._renders[phase]

    def _render(self, phase: str) -> list[RenderedResource]:
        if self._cache is not None:
            from automation.review.render_cache import cached_render

            return cached_render(self._values, phase, self._cache)[0]
        from automation.review.render import render

        return render(self._values, phase)

    def previous(self, phase: str) -> str | None:
        index = self._ids.index(phase)
        return self._ids[index - 1] if index else None

    def entering(self, phase: str) -> PhaseDiff:
        """What the program adds, removes and changes entering ``phase``."""
        before = self.previous(phase)
        if before is None:
            return diff_resources([], self.rendered(phase))
        return diff_resources(self.rendered(before), self.rendered(phase))

    def leaving(self, phase: str, back_to: str) -> PhaseDiff:
        """What the program adds, removes and changes taking ``phase`` back to ``back_to``."""
        return diff_resources(self.rendered(phase), self.rendered(back_to))


def _tail(urn: str) -> str:
    """``<type chain>::<name>``: the URN without its stack and project."""
    parts = urn.split("::", 2)
    return parts[2] if len(parts) == 3 else urn


def qualified_types(rendered: Sequence[RenderedResource]) -> dict[str, str]:
    """Mock URN -> the type chain the engine puts in the real URN (``Parent$Child``).

    A resource whose parent is the stack has its own type; any other, its parent's
    chain, ``$``, then its own type.
    """
    by_urn = {r.urn: r for r in rendered}
    chains: dict[str, str] = {}

    def chain(resource: RenderedResource) -> str:
        if resource.urn not in chains:
            parent = by_urn.get(resource.parent_urn or "")
            own = resource.type
            chains[resource.urn] = f"{chain(parent)}${own}" if parent is not None else own
        return chains[resource.urn]

    for resource in rendered:
        chain(resource)
    return chains


def target_urns(renders: PhaseRenders, phase: str, state_urns: Sequence[str]) -> list[str]:
    """URNs of what ``phase`` changes, on the stack whose resources are ``state_urns``."""
    root = next((u for u in state_urns if _tail(u).startswith(f"{STACK_TYPE}::")), None)
    if root is None:
        raise PreconditionFailed(
            f"Phase '{phase}' updates only the resources it changes, and the stack has no "
            "resources yet; run the earlier phases first."
        )
    prefix = root[: len(root) - len(_tail(root))]
    diff = renders.entering(phase)
    previous = renders.previous(phase)
    by_key: dict[ResourceKey, str] = {}
    for rendered in (renders.rendered(previous) if previous else [], renders.rendered(phase)):
        chains = qualified_types(rendered)
        by_key.update({ResourceKey(r.type, r.name): f"{chains[r.urn]}::{r.name}" for r in rendered})
    present = set(state_urns)
    declared = {*diff.added, *diff.changed, *diff.moved}  # created when not there yet
    gone = {*diff.removed, *diff.moved.values()}  # deleted only when still there
    urns = {prefix + by_key[key] for key in declared}
    # An update by hand may already have done part of the phase: the engine refuses to
    # target what is neither in the state nor declared, so what is gone stays out.
    urns |= {u for u in (prefix + by_key[key] for key in gone) if u in present}
    return sorted({root, *urns})
