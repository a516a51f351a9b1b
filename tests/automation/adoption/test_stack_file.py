"""``adopt --write-config``'s files: one stack file, and for a cluster whose kept
settings would not fit the engine's hand-over to the program, a kept file beside it."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from automation.adoption.proposal import Proposal
from automation.adoption.stack_file import ProposedStack, write
from automation.config.project import load_stack
from automation.core.errors import ConfigError, UserError
from components.contract import kept_file
from components.contract.keys import CLUSTER_KEY
from components.contract.loading import load_config, load_stack_file
from tests.components.conftest import STACKS


def _proposed(scripts: int, script_bytes: int = 4096) -> ProposedStack:
    """The small stack as a proposal keeping ``scripts`` boot scripts of kops's size."""
    values = copy.deepcopy(load_stack_file(STACKS / "Pulumi.vpc-move-small.yaml"))
    script = "#!/bin/bash\nset -o errexit\n" + "echo nodeup >> /var/log/boot\n" * (
        script_bytes // 30
    )
    values[CLUSTER_KEY]["user_data"] = {
        f"demo-control-plane-{i}": script for i in range(1, scripts + 1)
    }
    return ProposedStack(values, Proposal(cluster=values[CLUSTER_KEY]), groups=scripts)


def test_a_proposal_that_fits_is_one_stack_file(tmp_path: Path) -> None:
    proposed = _proposed(scripts=3)
    target = tmp_path / "proposed.yaml"
    assert write(proposed, target, "us-west-2", "small") == [target]
    values = load_stack_file(target)
    assert kept_file.KEPT_KEY not in values
    assert values[CLUSTER_KEY]["user_data"] == proposed.values[CLUSTER_KEY]["user_data"]


def test_a_proposal_too_large_to_hand_the_program_keeps_its_sections_aside(
    tmp_path: Path,
) -> None:
    proposed = _proposed(scripts=40)  # kops's nodeup is kilobytes per template
    assert kept_file.config_env_bytes(proposed.values) > kept_file.ENV_LIMIT
    target = tmp_path / "proposed.yaml"
    written = write(proposed, target, "us-west-2", "small")
    assert written == [target, tmp_path / "Pulumi.small.kept.yaml"]
    stack = yaml.safe_load(target.read_text())["config"]
    assert stack[kept_file.KEPT_KEY] == "Pulumi.small.kept.yaml"
    assert "user_data" not in stack[CLUSTER_KEY]
    assert kept_file.config_env_bytes(stack) < kept_file.SPLIT_AT
    # read back, the two files are the proposal
    assert load_config(load_stack_file(target)) == load_config(proposed.values)
    assert [n for n in proposed.proposal.notes if "keep it beside the stack file" in n]


def test_neither_file_is_written_over(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.small.kept.yaml").write_text("names: {}\n")
    target = tmp_path / "proposed.yaml"
    with pytest.raises(ConfigError, match=r"Pulumi\.small\.kept\.yaml exists"):
        write(_proposed(scripts=40), target, "us-west-2", "small")
    assert not target.exists()


def test_a_stack_whose_config_the_engine_could_not_hand_over_is_refused_first(
    tmp_path: Path,
) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: kubeshift\nruntime: python\n")
    values: dict[str, Any] = _proposed(scripts=40).values
    stack = tmp_path / "Pulumi.big.yaml"
    stack.write_text(yaml.safe_dump({"config": values}))
    with pytest.raises(UserError) as refused:
        load_stack(tmp_path, "big", stack)
    message = str(refused.value)
    assert "in one environment variable of at most 128 KiB" in message
    assert "kubeshift:cluster.user_data (" in message.split("largest: ")[1]
    assert "\n" not in message
