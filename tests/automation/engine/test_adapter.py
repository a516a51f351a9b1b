"""The real ``LocalWorkspace`` driven through the SDK's ``PulumiCommand`` seam.

``ScriptedPulumi`` records the argv the SDK builds and answers like the CLI would:
engine events go to the ``--event-log`` file (the SDK reads it for CLI versions up to
3.205), failures come back as non-zero exits with the CLI's stderr. This exercises
argv building, event parsing, change summaries and error mapping without a CLI.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from pulumi.automation import CommandResult, PulumiCommand
from semver import VersionInfo

from automation.core.errors import (
    EngineMissingError,
    StackLockedError,
    StackNotFoundError,
    StepFailedError,
)
from automation.engine.adapter import PulumiEngine, ResourceChange, urn_name, urn_type

VPC_URN = "urn:pulumi:dev::kubeshift::kubeshift:network:Network$aws:ec2/vpc:Vpc::target-vpc"
ASG_URN = "urn:pulumi:dev::kubeshift::aws:autoscaling/group:Group::old-asg"

Answer = Callable[[list[str]], CommandResult]


class ScriptedPulumi(PulumiCommand):
    def __init__(self, answers: dict[str, Answer] | None = None) -> None:
        self.command = "pulumi"
        self.version = VersionInfo(3, 200, 0)
        self.calls: list[list[str]] = []
        self.answers = answers or {}

    def run(self, args, cwd, additional_env, on_output=None, on_error=None):  # type: ignore[override]
        self.calls.append(list(args))
        verb = args[0] if args[0] != "--non-interactive" else args[1]
        answer = self.answers.get(verb)
        if answer is not None:
            result = answer(list(args))
            if result.code != 0:
                from pulumi.automation.errors import create_command_error

                raise create_command_error(result)
            return result
        return CommandResult(stdout="", stderr="", code=0)


def write_events(args: list[str], events: list[dict]) -> None:
    path = args[args.index("--event-log") + 1]
    with open(path, "a") as handle:
        for event in events:
            handle.write(json.dumps(event) + "\n")


def pre_event(op: str, urn: str, diffs: list[str] | None = None) -> dict:
    return {
        "resourcePreEvent": {
            "metadata": {
                "op": op,
                "urn": urn,
                "type": urn_type(urn),
                "provider": "",
                "diffs": diffs or [],
            }
        }
    }


def test_urn_helpers_understand_nested_types() -> None:
    assert urn_name(VPC_URN) == "target-vpc"
    assert urn_type(VPC_URN) == "aws:ec2/vpc:Vpc"


def test_preview_builds_argv_and_parses_steps(tmp_path: Path) -> None:
    def preview(args: list[str]) -> CommandResult:
        write_events(
            args,
            [
                pre_event("create", VPC_URN),
                pre_event("replace", ASG_URN, ["vpcZoneIdentifiers"]),
                {"summaryEvent": {"resourceChanges": {"create": 1, "replace": 1, "same": 4}}},
            ],
        )
        return CommandResult(stdout="", stderr="", code=0)

    cli = ScriptedPulumi({"preview": preview})
    engine = PulumiEngine(tmp_path, "dev", pulumi_command=cli)
    outcome = engine.preview([ASG_URN])

    argv = cli.calls[-1]
    assert argv[:1] == ["preview"] and "--diff" in argv
    assert argv[argv.index("--target") + 1] == ASG_URN and "--target-dependents" in argv
    assert argv[argv.index("--stack") + 1] == "dev"
    assert outcome.summary == {"create": 1, "replace": 1, "same": 4}
    assert outcome.changes == (
        ResourceChange("create", VPC_URN, "aws:ec2/vpc:Vpc", "target-vpc"),
        ResourceChange(
            "replace", ASG_URN, "aws:autoscaling/group:Group", "old-asg", ("vpcZoneIdentifiers",)
        ),
    )


def test_set_phase_goes_through_the_cli_config(tmp_path: Path) -> None:
    cli = ScriptedPulumi()
    PulumiEngine(tmp_path, "dev", pulumi_command=cli).set_phase("dns-cutover")
    assert cli.calls[-1][:3] == ["config", "set", "kubeshift:phase"]
    assert cli.calls[-1][-1] == "dns-cutover"


def test_export_stack_urns(tmp_path: Path) -> None:
    deployment = {"version": 3, "deployment": {"resources": [{"urn": VPC_URN}, {"urn": ASG_URN}]}}
    cli = ScriptedPulumi(
        {"stack": lambda a: CommandResult(stdout=json.dumps(deployment), stderr="", code=0)}
    )
    assert PulumiEngine(tmp_path, "dev", pulumi_command=cli).resource_urns() == [VPC_URN, ASG_URN]


def test_a_pending_create_is_read_as_declared_without_the_providers_defaults_lists(
    tmp_path: Path,
) -> None:
    """A bridged provider's checked inputs keep a ``__defaults`` list in every object,
    tags included; looking the resource up by them must not take it for a tag."""
    checked = {
        "cidrBlock": "10.1.0.0/16",
        "tags": {"Name": "target", "__defaults": []},
        "rules": [{"port": 443, "__defaults": ["protocol"], "protocol": "tcp"}],
        "__defaults": ["instanceTenancy"],
        "instanceTenancy": "default",
    }
    creating = {
        "type": "creating",
        "resource": {"urn": VPC_URN, "custom": True, "type": "aws:ec2/vpc:Vpc", "inputs": checked},
    }
    deployment = {"version": 3, "deployment": {"resources": [], "pending_operations": [creating]}}
    cli = ScriptedPulumi(
        {"stack": lambda a: CommandResult(stdout=json.dumps(deployment), stderr="", code=0)}
    )
    [pending] = PulumiEngine(tmp_path, "dev", pulumi_command=cli).pending_creates()
    assert pending.inputs == {
        "cidrBlock": "10.1.0.0/16",
        "tags": {"Name": "target"},
        "rules": [{"port": 443, "protocol": "tcp"}],
        "instanceTenancy": "default",
    }


def _fails(stderr: str) -> Answer:
    return lambda _args: CommandResult(stdout="", stderr=stderr, code=255)


@pytest.mark.parametrize(
    ("stderr", "error", "text"),
    [
        (
            "error: [409] Conflict: Another update is currently in progress.",
            StackLockedError,
            "locked by another update",
        ),
        ("error: the stack is currently locked by 1 lock(s)", StackLockedError, "locked"),
        ("error: no stack named 'dev' found", StackNotFoundError, "does not exist"),
        ("error: an unhandled error occurred: boom", StepFailedError, "boom"),
    ],
    ids=["conflict", "diy-lock", "missing-stack", "other"],
)
def test_pulumi_errors_map_to_kubeshift_errors(
    tmp_path: Path, stderr: str, error: type, text: str
) -> None:
    cli = ScriptedPulumi()
    engine = PulumiEngine(tmp_path, "dev", pulumi_command=cli)
    cli.answers["up"] = _fails(stderr)
    with pytest.raises(error, match=text):
        engine.up()


def test_missing_cli_is_a_user_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(EngineMissingError, match="`pulumi` CLI"):
        PulumiEngine(tmp_path, "dev")
    assert os.listdir(tmp_path) == []


TORN = "error: failed to load checkpoint: EOF"


def _torn_then(ok_after: int, verb: str, stdout: str = "") -> tuple[Answer, list[list[str]]]:
    """An answer that fails ``ok_after`` times on a torn checkpoint read, then succeeds."""
    seen: list[list[str]] = []

    def answer(args: list[str]) -> CommandResult:
        seen.append(args)
        if len(seen) <= ok_after:
            return CommandResult(stdout="", stderr=TORN, code=255)
        return CommandResult(stdout=stdout, stderr="", code=0)

    return answer, seen


@pytest.fixture
def pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    slept: list[float] = []
    monkeypatch.setattr("automation.engine.adapter.time.sleep", slept.append)
    return slept


def test_opening_a_stack_another_update_is_rewriting_reads_it_again(
    tmp_path: Path, pauses: list[float]
) -> None:
    answer, seen = _torn_then(2, "stack")
    PulumiEngine(tmp_path, "dev", pulumi_command=ScriptedPulumi({"stack": answer}))
    assert [args[:2] for args in seen] == [["stack", "select"]] * 3
    assert pauses == [0.2, 0.4]


def test_a_checkpoint_that_stays_torn_stops_with_one_sentence_after_five_reads(
    tmp_path: Path, pauses: list[float]
) -> None:
    answer, seen = _torn_then(99, "stack")
    with pytest.raises(StepFailedError) as failed:
        PulumiEngine(tmp_path, "dev", pulumi_command=ScriptedPulumi({"stack": answer}))
    assert len(seen) == 5 and sum(pauses) == pytest.approx(3.0)
    assert str(failed.value) == (
        "pulumi could not read stack 'dev''s checkpoint to open stack 'dev' (failed to load "
        "checkpoint: EOF): another update is rewriting it or it is damaged; run again once "
        "no other update runs."
    )


def test_any_other_failure_to_open_the_stack_is_not_tried_again(
    tmp_path: Path, pauses: list[float]
) -> None:
    cli = ScriptedPulumi({"stack": _fails("error: failed to load checkpoint: permission denied")})
    with pytest.raises(StepFailedError, match="permission denied"):
        PulumiEngine(tmp_path, "dev", pulumi_command=cli)
    assert len(cli.calls) == 1 and pauses == []


def test_setting_the_phase_beside_a_running_update_reads_the_stack_again(
    tmp_path: Path, pauses: list[float]
) -> None:
    answer, seen = _torn_then(1, "config")
    PulumiEngine(tmp_path, "dev", pulumi_command=ScriptedPulumi({"config": answer})).set_phase(
        "dns-cutover"
    )
    assert len(seen) == 2 and seen[-1][-1] == "dns-cutover" and pauses == [0.2]


EXPORTED = json.dumps({"version": 3, "deployment": {"resources": [{"urn": "urn:a"}]}})


@pytest.mark.parametrize(
    ("read", "verb", "stdout", "expected", "commands"),
    [
        # outputs: `stack output --json`, then again with --show-secrets to tell secrets
        (PulumiEngine.outputs, "stack", json.dumps({"phase": "fleet"}), {"phase": "fleet"}, 2),
        (PulumiEngine.resource_urns, "stack", EXPORTED, ["urn:a"], 1),
        (PulumiEngine.pending_operations, "stack", EXPORTED, [], 1),
        (PulumiEngine.secret_config, "config", "{}", {}, 1),
    ],
    ids=["outputs", "urns", "pending", "config"],
)
def test_every_read_beside_a_running_update_reads_the_checkpoint_again(
    tmp_path: Path,
    pauses: list[float],
    read: Callable[[PulumiEngine], object],
    verb: str,
    stdout: str,
    expected: object,
    commands: int,
) -> None:
    """A hand-run update rewrites the file backend's checkpoint while a run reads it (the
    first thing a run does is read the outputs): each read that changes nothing is tried
    again, as opening the stack is."""
    cli = ScriptedPulumi()
    engine = PulumiEngine(tmp_path, "dev", pulumi_command=cli)
    answer, seen = _torn_then(2, verb, stdout)
    cli.answers[verb] = answer

    assert read(engine) == expected
    assert len(seen) == 2 + commands and pauses == [0.2, 0.4]
