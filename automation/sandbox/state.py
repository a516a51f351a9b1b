"""The sandbox's state file: what runs, where, and for which stack.

Written by the supervisor once everything it starts is ready and rewritten by
``sandbox up`` when the world is built; read by ``status``, ``env``, ``down`` and by
every command that must aim at the sandbox instead of the real account.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from automation.core.errors import UserError
from automation.sandbox.member_plan import SandboxEtcd
from components.contract.run_marker import alive, process_start

__all__ = ["ClusterInfo", "ProcessInfo", "SandboxState", "alive", "load_state", "process_start"]


class ProcessInfo(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    pid: int
    address: str = ""
    log: str = ""
    started: int | None = None  # kernel start time of the pid: tells a reused pid apart

    @model_validator(mode="after")
    def _stamp(self) -> ProcessInfo:
        if self.started is None:
            object.__setattr__(self, "started", process_start(self.pid))
        return self

    def running(self) -> bool:
        return alive(self.pid, self.started)


class ClusterInfo(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: str  # primary | mirror
    name: str  # the cluster name in the stack (tags, bridge)
    server: str
    kubeconfig: str
    context: str


StateBackend = Literal["file", "s3"]
"""The sandbox's Pulumi backend: a directory, or a bucket in its moto's S3."""


class SandboxState(BaseModel):
    model_config = ConfigDict(frozen=False)

    stack: str
    scenario: str
    region: str
    supervisor_pid: int
    supervisor_started: int | None = None
    moto_endpoint: str
    processes: list[ProcessInfo]
    clusters: list[ClusterInfo]
    pulumi_bin: str
    started_at: float
    world_ready: bool = False
    mappings: list[str] = []  # "what the stack said -> what the sandbox uses"
    probe_services: list[str] = []
    etcd: SandboxEtcd | None = None  # a vpc-move stack's members, ports filled in
    backend: StateBackend = "file"  # where the engine keeps state, kubeshift its journal

    def supervisor_running(self) -> bool:
        return alive(self.supervisor_pid, self.supervisor_started)

    def cluster(self, role: str) -> ClusterInfo | None:
        return next((c for c in self.clusters if c.role == role), None)

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(self.model_dump_json(indent=2))
        os.replace(tmp, path)


def load_state(path: Path) -> SandboxState | None:
    """The state, or None when no sandbox was started; a damaged file is a user error."""
    if not path.is_file():
        return None
    try:
        return SandboxState.model_validate(json.loads(path.read_text()))
    except (ValueError, ValidationError, OSError) as exc:
        raise UserError(
            f"The sandbox state file {path} is damaged ({type(exc).__name__}); "
            "run `kubeshift sandbox down` to clear it."
        ) from exc
