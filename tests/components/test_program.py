"""The program entry: reads Pulumi config, dispatches on scenario, exports, and turns a
bad config into the engine's one-line RunError."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml

from automation.review.render import record
from components import program
from components.contract import kept_file
from components.contract.progress import parse_progress
from tests.components.conftest import stack_values


@pytest.mark.parametrize(
    ("stack", "top"),
    [
        ("vpc-move-small", "kubeshift:scenario:VpcMove"),
        ("cni-swap-example", "kubeshift:scenario:CniSwap"),
        ("overlay-switch-example", "kubeshift:scenario:OverlaySwitch"),
    ],
)
def test_main_builds_the_scenario_and_exports(stack: str, top: str) -> None:
    rendering = record(program.main, config=stack_values(stack))
    tops = [r for r in rendering.resources if r.parent is None]
    assert [r.type for r in tops] == [top]
    assert rendering.outputs["phase"] == "baseline"
    assert rendering.outputs["source_vpc_id"].endswith("-vpc-id")


def test_bad_config_is_one_line_run_error(small_values: dict[str, Any]) -> None:
    small_values["kubeshift:cluster"]["control_plane"]["members"] = 2
    with pytest.raises(pulumi.RunError) as caught:
        record(program.main, config=small_values)
    message = str(caught.value)
    assert message.startswith("kubeshift:cluster.control_plane.members is 2;")
    assert "\n" not in message


def _marks(phases: tuple[str, ...]) -> list[dict[str, Any]]:
    return [
        {"phase": p, "milestone": m, "by": "t"}
        for p in phases
        for m in ("before", "update", "after")
    ]


def test_an_update_that_skips_ahead_stops_before_declaring_anything(
    small_values: dict[str, Any],
) -> None:
    small_values["kubeshift:phase"] = "retire-old-workers"
    before = {"phase": "baseline", "progress": {"marks": _marks(("baseline",))}}
    with pytest.raises(pulumi.RunError) as caught:
        record(program.main, config=small_values, stack_outputs=before)
    assert "Phase 'retire-old-workers' cannot be updated yet" in str(caught.value)
    assert "after target-network" in str(caught.value)


def test_an_update_with_its_marks_records_itself(
    small_values: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    small_values["kubeshift:phase"] = "target-network"
    before = {"phase": "baseline", "progress": {"marks": _marks(("baseline",))}}
    added = [{"phase": "target-network", "milestone": "before", "by": "kubeshift run r1"}]
    monkeypatch.setenv("KUBESHIFT_RECORD", json.dumps({"marks": added}))
    rendering = record(program.main, config=small_values, stack_outputs=before)
    progress = parse_progress(rendering.outputs["progress"])
    assert progress.has("target-network", "before") and progress.has("target-network", "update")
    assert progress.mark("target-network", "update") is not None
    assert rendering.outputs["phase"] == "target-network"


def test_the_override_is_recorded_in_the_output(small_values: dict[str, Any]) -> None:
    small_values["kubeshift:phase"] = "target-network"
    small_values["kubeshift:skipProgressCheck"] = "target-network"
    rendering = record(program.main, config=small_values, stack_outputs={})
    (override,) = parse_progress(rendering.outputs["progress"]).overrides
    assert override.phase == "target-network"
    assert override.missing == ("after baseline", "before target-network")


def test_a_record_only_update_builds_the_deployed_phase(
    small_values: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    small_values["kubeshift:phase"] = "drain-workers"  # set by hand, not yet deployed
    before = {"phase": "baseline", "progress": {"marks": _marks(("baseline",))}}
    added = [{"phase": "target-network", "milestone": "before", "by": "kubeshift hooks"}]
    monkeypatch.setenv("KUBESHIFT_RECORD_ONLY", "1")
    monkeypatch.setenv("KUBESHIFT_RECORD", json.dumps({"marks": added}))
    rendering = record(program.main, config=small_values, stack_outputs=before)
    assert rendering.outputs["phase"] == "baseline"
    progress = parse_progress(rendering.outputs["progress"])
    assert progress.has("target-network", "before")
    assert not progress.has("drain-workers", "update")


def test_offline_renders_skip_the_check(small_values: dict[str, Any]) -> None:
    small_values["kubeshift:phase"] = "retire-old-workers"
    rendering = record(program.main, config=small_values)
    assert rendering.outputs["phase"] == "retire-old-workers"
    assert "progress" not in rendering.outputs


def test_a_record_only_update_of_a_stack_from_before_the_record_keeps_its_outputs(
    small_values: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No progress output yet: the deployed phase comes from the stack's ``phase`` output,
    so recording a mark does not drop the outputs the hooks read."""
    small_values["kubeshift:phase"] = "target-workers"
    added = [{"phase": "target-network", "milestone": "after", "by": "kubeshift hooks"}]
    monkeypatch.setenv("KUBESHIFT_RECORD_ONLY", "1")
    monkeypatch.setenv("KUBESHIFT_RECORD", json.dumps({"marks": added}))
    before = {"phase": "target-network", "source_vpc_id": "vpc-1"}
    rendering = record(program.main, config=small_values, stack_outputs=before)
    assert rendering.outputs["phase"] == "target-network"
    assert rendering.outputs["source_vpc_id"]
    assert parse_progress(rendering.outputs["progress"]).has("target-network", "after")


def test_a_record_only_update_of_a_never_deployed_stack_declares_nothing(
    small_values: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    added = [{"phase": "baseline", "milestone": "before", "by": "kubeshift hooks"}]
    monkeypatch.setenv("KUBESHIFT_RECORD_ONLY", "1")
    monkeypatch.setenv("KUBESHIFT_RECORD", json.dumps({"marks": added}))
    rendering = record(program.main, config=small_values, stack_outputs={})
    assert rendering.resources == []
    assert set(rendering.outputs) == {"progress"}


class _Invoked:
    def __init__(self, value: dict[str, Any]) -> None:
        self.value = value


def test_a_torn_read_of_the_checkpoint_is_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file backend's checkpoint read while the engine rewrites it fails with EOF
    (the .attrs sidecar is rewritten in place); the program reads again, and gives up
    with the engine's own error on anything else."""
    answers: list[Any] = [
        Exception(f"invoke failed: {program.TORN_READ}: EOF"),
        Exception(f"invoke failed: {program.TORN_READ}: EOF"),
        _Invoked({"name": "o/p/s", "outputs": {"a": 1}}),
    ]

    def invoke(token: str, args: dict[str, Any]) -> Any:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    monkeypatch.setattr(program.pulumi.runtime, "invoke", invoke)
    monkeypatch.setattr(program.time, "sleep", lambda _s: None)
    assert program.read_own_outputs() == {"a": 1} and answers == []
    answers.append(Exception("invoke failed: permission denied"))
    with pytest.raises(Exception, match="permission denied"):
        program.read_own_outputs()


def test_the_program_reads_a_kept_file_named_beside_its_stack_files(
    small_values: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: kubeshift\nstackConfigDir: stacks\n")
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.small.kept.yaml").write_text(
        yaml.safe_dump({"descriptions": {"demo-node": "Security group for nodes"}})
    )
    monkeypatch.setattr(pulumi.runtime, "get_root_directory", lambda: str(tmp_path))
    small_values[kept_file.KEPT_KEY] = "Pulumi.small.kept.yaml"  # as the engine passes it
    rendering = record(program.main, config=small_values)
    group = next(r for r in rendering.resources if r.name == "demo-common-sg-node")
    assert group.inputs["description"] == "Security group for nodes"
