"""Where a sandbox keeps its files: ``<state dir>/sandbox/`` (default ``.kubeshift/sandbox``).

One sandbox per project at a time. Its state file says which processes run and where;
its workspace holds the rehearsal's own copy of the project and stack file, its own
file backend and its own ``PULUMI_HOME`` — never the user's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from automation.run.journal import state_dir


@dataclass(frozen=True)
class SandboxPaths:
    root: Path

    @classmethod
    def for_project(cls, project: Path) -> SandboxPaths:
        return cls(state_dir(project) / "sandbox")

    @property
    def state_file(self) -> Path:
        return self.root / "state.json"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def run(self) -> Path:
        """Data of the running processes (etcd, PKI, kubeconfigs); wiped by ``down``."""
        return self.root / "run"

    @property
    def workspace(self) -> Path:
        """The rehearsal's project: its own Pulumi.yaml and stacks/ copy."""
        return self.root / "workspace"

    @property
    def backend(self) -> Path:
        return self.root / "backend"

    @property
    def pulumi_home(self) -> Path:
        return self.root / "pulumi-home"

    @property
    def aws_dir(self) -> Path:
        """Empty AWS config and credentials files: never the user's profiles."""
        return self.root / "aws"

    @property
    def world_built(self) -> Path:
        """Written once the live cluster is built whole (moto holds it, nothing else)."""
        return self.root / "world.built"

    @property
    def terraform_state(self) -> Path:
        """Terraform's state of the modules' world (``--built-by terraform-modules``)."""
        return self.root / "terraform.tfstate"

    def wipeable(self) -> tuple[Path, ...]:
        """What ``down`` deletes: everything the next ``up`` rebuilds from scratch."""
        return (
            self.run, self.workspace, self.backend, self.aws_dir, self.state_file,
            self.world_built, self.terraform_state,
        )  # fmt: skip
