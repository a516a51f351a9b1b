"""What a phase runs around its update: hooks that act and gates that wait (and the
collections a gate wakes on)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from automation.core.results import HookResult
from automation.core.waiting import Pending

if TYPE_CHECKING:
    from automation.model.context import HookContext


HookFn = Callable[["HookContext"], HookResult]
GateFn = Callable[["HookContext"], Pending]


@dataclass(frozen=True)
class Hook:
    """An idempotent action run before or after a phase's update.

    ``destructive`` hooks (drains, deletions, DNS switches) ask for confirmation and
    are never run twice once the journal records them finished.
    """

    name: str
    summary: str
    run: HookFn
    destructive: bool = False
    retries: int = 2
    retry_delay: float = 5.0


@dataclass(frozen=True)
class Watch:
    """A Kubernetes collection a gate's check reads, on one cluster of the scenario."""

    resource: Literal["nodes", "pods", "endpointslices", "daemonsets", "deployments"]
    cluster: str = "primary"


@dataclass(frozen=True)
class Gate:
    """A condition polled until it holds or its deadline passes; it blocks, never skips.

    With ``wakes_on`` the wait between two checks ends early when one of those
    collections changes (``automation.kube.wakeups``): the gate passes when the
    condition holds, not at its next poll; ``interval`` stays the upper bound.
    """

    name: str
    summary: str
    check: GateFn
    timeout: float = 900.0
    interval: float = 10.0
    wakes_on: tuple[Watch, ...] = ()


Step = Hook | Gate
