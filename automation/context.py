"""The one object every hook and gate receives.

It carries the stack's validated configuration (``config``), the runtime settings
(``settings``), the clients (built elsewhere, in ``automation.clients``; hooks never build
their own), the stack's settings and outputs, a logger, a progress reporter and the
dry-run flag. A hook that honours dry-run says what it would do, to which nodes and
pods, and changes nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from automation.progress import NullReporter, Reporter


class ClientSet(Protocol):
    """Source of ready-made clients: Kubernetes per cluster role, and AWS."""

    def kube(self, cluster: str = "primary") -> Any: ...

    def aws(self) -> Any: ...


@dataclass
class HookContext:
    stack: str
    scenario: str
    phase: str
    clients: ClientSet
    settings: Any = None
    config: Any = None
    outputs: Mapping[str, Any] = field(default_factory=dict)
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("kubeshift"))
    progress: Reporter = field(default_factory=NullReporter)
    dry_run: bool = False
