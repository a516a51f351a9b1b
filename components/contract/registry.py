"""The registry of scenarios: the one place that knows which scenarios exist.

Every module of the ``components.contract.scenarios`` package defines ``SPEC``, a
:class:`ScenarioSpec`: the scenario's id and summary, its phase ids in order, its own
config rules, the typed model of the stack outputs its program exports, and where its
infrastructure builder and its automation live. The Pulumi program, config validation,
the CLI and the runner all read scenarios from here, so a new scenario is a new module
in that package (plus its builder and its steps) and no dispatch code changes.

The specs are plain data and pydantic models: reading them loads neither Pulumi nor an
API client, so the CLI and config validation stay fast.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from components.contract.etcd_volumes import EtcdVolume
from components.contract.validation import sentence

if TYPE_CHECKING:
    from components.contract.cluster_models import NetworkConfig
    from components.contract.models import StackConfig

NetworkSlot = tuple[str, "NetworkConfig"]


class StackOutputs(BaseModel):
    """What every scenario's program exports; each scenario extends it.

    Every field has a default: a stack before its first update has no outputs, and a
    dry run still reads them. Keys the model does not know are kept, not refused (a
    stack updated by another kubeshift version may carry more).
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    scenario: str | None = None
    phase: str | None = None
    cluster_name: str | None = None
    source_vpc_id: str | None = None
    target_vpc_id: str | None = None
    node_security_group_ids: list[str] = []
    etcd_volumes: dict[str, EtcdVolume] = {}
    """Member index -> its etcd volume as declared (``components.contract.etcd_volumes``)."""


OutputsT = TypeVar("OutputsT", bound=StackOutputs)


class OutputsError(ValueError):
    """The stack's outputs do not fit the scenario's model."""


def parse_outputs(model: type[OutputsT], outputs: Mapping[str, Any], stack: str) -> OutputsT:
    """``outputs`` (as the engine returns them) read into ``model``; one sentence if not."""
    try:
        return model.model_validate(dict(outputs))
    except ValidationError as exc:
        problem = sentence(model, "outputs", exc.errors()[0]).removesuffix(".")
        raise OutputsError(
            f"The outputs of stack '{stack}' are not what this kubeshift reads ({problem}); "
            "update the stack with this version first."
        ) from None


def _no_rules(config: StackConfig) -> list[NetworkSlot]:
    return []


@dataclass(frozen=True)
class ScenarioSpec:
    """One scenario, as the program, config validation, the CLI and the runner see it."""

    id: str
    summary: str
    phases: Callable[[int], tuple[str, ...]]
    """Phase ids in order, given the number of control-plane members."""
    outputs: type[StackOutputs]
    """The stack outputs the builder exports and the steps read."""
    builder: str
    """``module:function`` declaring the infrastructure of one phase (the program's)."""
    steps: str
    """``module:function`` returning the runner's scenario (hooks and gates per phase)."""
    check: Callable[[StackConfig], list[NetworkSlot]] = _no_rules
    """The scenario's own config rules; returns the networks its nodes live in
    besides the cluster's own (``(config key, network)``)."""
    member_copies: int = 1
    """Control planes placed in the cluster's subnets (a mirror adds a second)."""

    def phase_ids(self, members: int = 3) -> tuple[str, ...]:
        return self.phases(members)


def _load(target: str) -> Callable[..., Any]:
    module, _, name = target.partition(":")
    function: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return function


def builder(spec: ScenarioSpec) -> Callable[[StackConfig], dict[str, Any]]:
    """The scenario's infrastructure builder (imports Pulumi and the components)."""
    return _load(spec.builder)


def steps(spec: ScenarioSpec) -> Callable[[StackConfig], Any]:
    """The function building the scenario's automation (imports the automation layer)."""
    return _load(spec.steps)


@cache
def specs() -> tuple[ScenarioSpec, ...]:
    """Every registered scenario, ordered by id."""
    import components.contract.scenarios as package

    found = []
    for module in pkgutil.iter_modules(package.__path__):
        loaded = importlib.import_module(f"{package.__name__}.{module.name}")
        spec = getattr(loaded, "SPEC", None)
        if isinstance(spec, ScenarioSpec):
            found.append(spec)
    return tuple(sorted(found, key=lambda s: s.id))


def ids() -> tuple[str, ...]:
    return tuple(s.id for s in specs())


def spec(scenario: str) -> ScenarioSpec:
    """The spec of ``scenario``; ``KeyError`` when no module registers it."""
    for candidate in specs():
        if candidate.id == scenario:
            return candidate
    raise KeyError(scenario)
