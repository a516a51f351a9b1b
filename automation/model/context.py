"""The one object every hook and gate receives.

It carries the stack's validated configuration (``config``), the runtime settings
(``settings``), the clients (built elsewhere, in ``automation.config.clients``; hooks never build
their own), the stack's outputs, a logger, a progress reporter and the dry-run flag.
It is frozen: the runner hands a new context to the steps after an update changed the
outputs. A hook that honours dry-run says what it would do, to which nodes and pods,
and changes nothing. The models are imported for type checking only, so the CLI
starts without pydantic models or API clients.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from automation.core.errors import PreconditionFailed
from automation.core.progress import NullReporter, Reporter

if TYPE_CHECKING:
    from datetime import datetime

    from automation.aws.clients import AwsClients
    from automation.config.settings import RuntimeSettings
    from automation.kube.clients import KubeClients
    from components.contract.models import StackConfig
    from components.contract.registry import StackOutputs

OutputsT = TypeVar("OutputsT", bound="StackOutputs")


class ClientSet(Protocol):
    """Source of ready-made clients: Kubernetes per cluster role, and AWS."""

    def kube(self, cluster: str = "primary") -> KubeClients: ...

    def aws(self) -> AwsClients: ...


def _default_settings() -> RuntimeSettings:
    from automation.config.settings import RuntimeSettings

    return RuntimeSettings()


@dataclass(frozen=True)
class HookContext:
    stack: str
    scenario: str
    phase: str
    clients: ClientSet
    settings: RuntimeSettings = field(default_factory=_default_settings)
    config: StackConfig | None = None
    outputs: Mapping[str, Any] = field(default_factory=dict)
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("kubeshift"))
    progress: Reporter = field(default_factory=NullReporter)
    dry_run: bool = False
    recorded: Callable[[str], Mapping[str, Any] | None] = field(default=lambda _key: None)
    """Details an earlier, finished step of this phase left in the journal, by step key
    (``before:<name>``); None when there is no such record."""
    finished_at: Callable[[str], datetime | None] = field(default=lambda _phase: None)
    """When an earlier phase's last step finished, as this run's journal says (None:
    not in the journal, or not finished)."""

    @property
    def stack_config(self) -> StackConfig:
        """The stack's validated config; steps that read it need one."""
        if self.config is None:
            raise PreconditionFailed(
                f"Step of phase '{self.phase}' needs the stack's config, and none was given."
            )
        return self.config

    def read_outputs(self, model: type[OutputsT]) -> OutputsT:
        """The stack's outputs read into its scenario's ``model``; one sentence if they
        do not fit (a stack updated by another kubeshift version)."""
        from components.contract.registry import OutputsError, parse_outputs

        try:
            return parse_outputs(model, self.outputs, self.stack)
        except OutputsError as exc:
            raise PreconditionFailed(str(exc)) from None
