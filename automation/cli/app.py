"""The ``kubeshift`` command line: plan, review, preview and run migrations phase by phase.

Commands stay thin: they load and validate the stack, build the scenario, and hand
work to the renderer, the runner or the journal. Heavy SDKs (Pulumi, boto3,
kubernetes) are imported inside commands so ``kubeshift --help`` answers at once.
Every ``KubeshiftError`` stops here as one line on stderr and a distinct exit code.
"""

from __future__ import annotations

# Each module registers its commands on import, in the order `kubeshift --help` lists them.
# isort: off
from automation.cli import review  # noqa: F401  scenarios, plan, render, diff
from automation.cli import migrate  # noqa: F401  preview, run, hooks, replace-nodes
from automation.cli import adopt  # noqa: F401
from automation.cli import release  # noqa: F401
from automation.cli import recover  # noqa: F401
from automation.cli import status  # noqa: F401

# isort: on
from automation.cli.root import app


def main() -> None:
    app()
