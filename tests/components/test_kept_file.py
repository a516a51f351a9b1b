"""A kept file beside the stack file: what it may hold, how it is merged, and the size
past which the engine could not hand the program its config."""

from __future__ import annotations

import copy
import errno
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.contract import kept_file
from components.contract.loading import load_config, load_stack_file
from components.contract.model_base import ConfigError
from tests.components.conftest import STACKS

CLUSTER = "kubeshift:cluster"


def _padded(size: int) -> dict[str, Any]:
    """Config whose ``PULUMI_CONFIG=`` string is exactly ``size`` bytes."""
    values: dict[str, Any] = {"kubeshift:pad": ""}
    values["kubeshift:pad"] = "x" * (size - kept_file.config_env_bytes(values))
    assert kept_file.config_env_bytes(values) == size
    return values


def _start_with_config(values: dict[str, Any]) -> None:
    """Start a process with the engine's ``PULUMI_CONFIG`` for ``values``."""
    env = {"PULUMI_CONFIG": kept_file.config_env_value(values)}
    subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)


def test_the_os_starts_a_program_with_the_largest_config_and_refuses_one_byte_more() -> None:
    _start_with_config(_padded(kept_file.ENV_LIMIT))
    with pytest.raises(OSError) as refused:
        _start_with_config(_padded(kept_file.ENV_LIMIT + 1))
    assert refused.value.errno == errno.E2BIG


def test_the_size_counts_gos_escapes_and_an_objects_json_text() -> None:
    plain = kept_file.config_env_bytes({CLUSTER: {"user_data": {"t": "a b"}}})
    # `<`, `>` and `&` are six bytes each in Go's JSON, inside the object's text and
    # again escaped (one more backslash) in the outer string
    shell = kept_file.config_env_bytes({CLUSTER: {"user_data": {"t": "a>b"}}})
    assert shell - plain == len("\\\\u003e") - 1
    # an object travels as its JSON text: its quotes are escaped once more
    assert (
        kept_file.config_env_bytes({"k": {"a": 1}}) == len('PULUMI_CONFIG={"k":"{\\"a\\":1}"}') + 1
    )


def _stack_with_kept(
    tmp_path: Path, kept: dict[str, Any], name: str = "Pulumi.x.kept.yaml"
) -> Path:
    values = copy.deepcopy(load_stack_file(STACKS / "Pulumi.vpc-move-small.yaml"))
    values[kept_file.KEPT_KEY] = name
    stack = tmp_path / "Pulumi.x.yaml"
    stack.write_text(yaml.safe_dump({"config": values}))
    (tmp_path / name).write_text(yaml.safe_dump(kept))
    return stack


def test_a_kept_file_beside_the_stack_file_is_read_into_the_cluster_block(tmp_path: Path) -> None:
    tags = {"demo-source-network": {"KubernetesCluster": "demo"}}
    stack = _stack_with_kept(tmp_path, {"kept_tags": tags, "descriptions": {"demo-node": "nodes"}})
    values = load_stack_file(stack)
    assert values[kept_file.KEPT_KEY] == str(tmp_path / "Pulumi.x.kept.yaml")
    config = load_config(values)
    assert config.cluster.kept_tags == tags
    assert config.cluster.descriptions == {"demo-node": "nodes"}


@pytest.mark.parametrize(
    ("kept", "expected"),
    [
        ({"worker_pools": {}}, "holds 'worker_pools'; it may hold only names, descriptions"),
        ({"names": ["a"]}, "names must be a mapping"),
        ({"tags": {}}, "holds 'tags'"),
    ],
)
def test_a_kept_file_holds_only_the_kept_sections(
    tmp_path: Path, kept: dict[str, Any], expected: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        load_config(load_stack_file(_stack_with_kept(tmp_path, kept)))
    assert expected in str(refused.value)
    assert refused.value.key == kept_file.KEPT_KEY


def test_a_section_in_both_files_is_refused(tmp_path: Path) -> None:
    stack = _stack_with_kept(tmp_path, {"names": {"demo-api-lb": "api-small"}})
    values = load_stack_file(stack)
    values[CLUSTER]["names"] = {"demo-api-lb": "other"}
    with pytest.raises(ConfigError, match=r"cluster\.names is given both in the stack file"):
        load_config(values)


def test_a_missing_or_broken_kept_file_is_one_sentence(tmp_path: Path) -> None:
    stack = _stack_with_kept(tmp_path, {})
    (tmp_path / "Pulumi.x.kept.yaml").unlink()
    with pytest.raises(ConfigError) as missing:
        load_config(load_stack_file(stack))
    assert str(missing.value) == f"Kept file {tmp_path / 'Pulumi.x.kept.yaml'} does not exist."
    (tmp_path / "Pulumi.x.kept.yaml").write_text("names: {a: 1}\nnames: {b: 2}\n")
    with pytest.raises(
        ConfigError, match="is not valid YAML at line 2: key 'names' is given twice"
    ):
        load_config(load_stack_file(stack))


def test_split_leaves_the_stack_its_own_settings_and_merge_restores_them(tmp_path: Path) -> None:
    values = copy.deepcopy(load_stack_file(STACKS / "Pulumi.vpc-move-small.yaml"))
    values[CLUSTER]["user_data"] = {"demo-workers-general": "#!/bin/bash\necho kops\n"}
    values[CLUSTER]["kept_inputs"] = {}
    rest, kept = kept_file.split(values, CLUSTER)
    assert sorted(kept) == ["kept_inputs", "user_data"]
    assert not {"user_data", "kept_inputs"} & set(rest[CLUSTER]) and "network" in rest[CLUSTER]
    (tmp_path / "k.yaml").write_text(yaml.safe_dump(kept))
    rest[kept_file.KEPT_KEY] = "k.yaml"
    merged = kept_file.merge(kept_file.resolve(rest, tmp_path), CLUSTER)
    assert merged == values
