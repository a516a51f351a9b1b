"""The engine-test scenario: kubeshift phases over the provider-free test project.

Why this module exists: the runner walks ``automation.model.phase.Scenario`` records; this
one mirrors the phases of ``project/__main__.py`` (same ids, same order) the way
``automation.scenarios`` mirrors the real program, so the integration tests drive the
real runner, guard and journal against the real engine. It also builds the runner the
way ``automation.session.assembly`` does (engine, journal, lock, context factory), without the
kubeshift stack-file loading that only real scenarios have.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from automation.engine.adapter import OutputSink, PulumiEngine
from automation.model.context import HookContext
from automation.model.phase import (
    CREATES_AND_UPDATES,
    REPLACE_OPS,
    ChangePolicy,
    Hook,
    HookResult,
    Phase,
    Scenario,
)
from automation.run.journal import Journal
from automation.run.runner import Runner

STACK = "dev"
RECORD = "pulumi-python:dynamic:Resource"


class NoClients:
    """The test project touches no cluster and no cloud: asking for a client is a bug."""

    def kube(self, cluster: str = "primary") -> Any:
        raise AssertionError(f"engine tests build no Kubernetes client ({cluster})")

    def aws(self) -> Any:
        raise AssertionError("engine tests build no AWS client")


def _check_vpc_output(context: HookContext) -> HookResult:
    """An after-hook that relies on the update's outputs, as real hooks do."""
    vpc_id = context.outputs.get("vpc_id")
    if not vpc_id:
        raise AssertionError(f"phase {context.phase}: no vpc_id output after the update")
    return HookResult(changed=False, message=f"vpc {vpc_id} reported by the stack")


# The default provider of Python dynamic resources previews as "update" on every run
# (pulumi:providers:pulumi-python::default); the guard ignores only the aws and
# kubernetes providers, so these policies allow provider updates explicitly.
PROVIDERS = "pulumi:providers:*"
CREATES_ONLY = ChangePolicy(
    allowed_ops=frozenset({"same", "read", "create"}),
    scoped_ops=frozenset({"update"}),
    scope=(PROVIDERS,),
    summary="creates only",
)
MOVE_VPC_SCOPE = ChangePolicy(
    scoped_ops=frozenset({"delete", *REPLACE_OPS}),
    scope=(f"{RECORD}::net-*", f"{RECORD}::workers-group-*"),
    summary="creates, updates; deletes/replaces only of the network and worker groups",
)


def scenario(move_vpc_policy: ChangePolicy = MOVE_VPC_SCOPE) -> Scenario:
    """The five phases of the test project, in order."""
    return Scenario(
        id="engine-fixture",
        summary="Network, workers, a targeted resize, a VPC move, a slow fleet.",
        phases=(
            Phase(
                "network",
                "create the network",
                after=(Hook("vpc-output", "read the VPC id output", _check_vpc_output),),
                changes=CREATES_ONLY,
            ),
            Phase("workers", "add two worker groups", changes=CREATES_ONLY),
            Phase(
                "scale-workers",
                "resize the worker groups only",
                targets=("workers-group-*",),
                changes=CREATES_AND_UPDATES,
            ),
            Phase(
                "move-vpc",
                "move the network (replaces the VPC, its subnets and the groups in it)",
                changes=move_vpc_policy,
                destructive=True,
            ),
            Phase("fleet", "add a slow fleet of five chained groups", changes=CREATES_ONLY),
        ),
    )


def context_factory(stack: str = STACK) -> Callable[[Phase, dict[str, Any], bool], HookContext]:
    def build(phase: Phase, outputs: dict[str, Any], dry_run: bool) -> HookContext:
        return HookContext(
            stack=stack,
            scenario="engine-fixture",
            phase=phase.id,
            clients=NoClients(),
            outputs=outputs,
            dry_run=dry_run,
        )

    return build


def journal_path(state: Path) -> Path:
    return state / f"{STACK}.journal.json"


def lock_path(state: Path) -> Path:
    return state / f"{STACK}.run-lock.json"


def build_runner(
    project: Path, state: Path, on_output: OutputSink | None = None
) -> tuple[PulumiEngine, Journal, Runner]:
    """Engine, journal and runner for the test project, confirming every step."""
    engine = PulumiEngine(project, STACK, on_output=on_output)
    journal = Journal(journal_path(state), STACK)
    runner = Runner(engine, journal, context_factory(), confirm=lambda _question: True)
    return engine, journal, runner
