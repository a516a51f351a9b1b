"""Files a user names: nothing hangs, nothing exhausts memory, each refusal one sentence."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from components.contract.model_base import ConfigError
from components.contract.user_files import (
    MAX_VALUES,
    AliasBomb,
    BoundedLoader,
    UnreadableFile,
    load_yaml_document,
    read_bounded,
    refuse_expansion,
)
from tests.support.yaml_bombs import BILLION_LAUGHS


def _refusal(path: Path, limit: int = 1024) -> str:
    with pytest.raises(UnreadableFile) as refused:
        read_bounded(path, "Stack file", limit)
    return str(refused.value)


def test_a_regular_file_within_the_limit_is_read_whole(tmp_path: Path) -> None:
    file = tmp_path / "stack.yaml"
    file.write_bytes(b"x" * 1024)
    assert read_bounded(file, "Stack file", 1024) == b"x" * 1024


def test_a_missing_file_is_left_to_the_caller(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_bounded(tmp_path / "absent.yaml", "Stack file")


def test_what_is_not_a_regular_file_of_bounded_size_is_one_sentence(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(b"x" * 1025)
    assert "is larger than" in _refusal(big)
    assert _refusal(tmp_path).endswith("is a directory, not a file.")
    loop = tmp_path / "loop.yaml"
    loop.symlink_to(loop)
    assert "Too many levels of symbolic links" in _refusal(loop)
    assert (
        _refusal(Path("/dev/zero"))
        == "Stack file /dev/zero is a character device, not a regular file."
    )


def test_a_fifo_is_refused_at_once_not_waited_on(tmp_path: Path) -> None:
    """Run apart, with a deadline: a read that blocked on the FIFO would hang the suite."""
    fifo = tmp_path / "stack.yaml"
    os.mkfifo(fifo)
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from components.contract.user_files import UnreadableFile, read_bounded
        try:
            read_bounded(Path({str(fifo)!r}), "Stack file")
        except UnreadableFile as exc:
            print(exc)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=30, check=True
    )
    assert done.stdout.strip() == f"Stack file {fifo} is a FIFO, not a regular file."


def test_an_alias_bomb_is_refused_while_composed_not_walked() -> None:
    """PyYAML's own loader shares the aliased lists, so the bomb goes off later, in
    whatever walks the document (validation, JSON for the engine); refused here."""
    with pytest.raises(AliasBomb) as refused:
        yaml.load(BILLION_LAUGHS, Loader=BoundedLoader)
    assert refused.value.line == 7  # g: 9**6 * 10 values and more, past the bound


def test_aliases_that_stay_under_the_bound_load_as_plain_yaml() -> None:
    text = "base: &base {port: 80, protocol: TCP}\nlisteners: [*base, *base]\n"
    assert yaml.load(text, Loader=BoundedLoader) == yaml.safe_load(text)
    wide = "values: [" + ", ".join(["1"] * 1000) + "]\n"
    assert len(yaml.load(wide, Loader=BoundedLoader)["values"]) == 1000
    assert MAX_VALUES > 1000 * 9


def test_a_stack_file_is_parsed_by_libyaml_and_bounded_and_strict_all_the_same(
    tmp_path: Path,
) -> None:
    stack = tmp_path / "Pulumi.s.yaml"
    stack.write_text(BILLION_LAUGHS)
    with pytest.raises(ConfigError, match=r"expands past 1,000,000 values .*line 7"):
        load_yaml_document(stack, what="Stack file")

    stack.write_text("config:\n  a: 1\n  a: 2\n")
    with pytest.raises(ConfigError, match="at line 3: key 'a' is given twice"):
        load_yaml_document(stack, what="Stack file")

    stack.write_text("config: [1, 2\n")
    with pytest.raises(ConfigError, match="is not valid YAML at line 2"):
        load_yaml_document(stack, what="Stack file")

    stack.write_text("base: &base {port: 80}\nlisteners: [*base, *base]\n")
    assert load_yaml_document(stack, what="Stack file") == {
        "base": {"port": 80},
        "listeners": [{"port": 80}, {"port": 80}],
    }
    assert yaml.__with_libyaml__  # PyYAML's wheels carry libyaml: the fast parser is used


def test_an_anchor_inside_itself_counts_once_and_loads() -> None:
    node = yaml.compose("a: &a [1, *a]\n")
    refuse_expansion(node)  # the walk ends; nothing refused
    loaded = yaml.load("a: &a [1, *a]\n", Loader=BoundedLoader)
    assert loaded["a"][1] is loaded["a"]
