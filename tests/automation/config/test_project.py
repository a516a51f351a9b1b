"""The Pulumi project's name, read where a file backend keeps its stacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from automation.config.project import project_dir, project_name
from automation.core.errors import ConfigError


def test_the_projects_name_is_pulumi_yamls() -> None:
    assert project_name(project_dir()) == "kubeshift"


@pytest.mark.parametrize("text", ["runtime: python\n", "name: [a]\n", ": : :\n"])
def test_a_pulumi_yaml_naming_no_project_is_one_sentence(tmp_path: Path, text: str) -> None:
    (tmp_path / "Pulumi.yaml").write_text(text)
    with pytest.raises(ConfigError, match=r"Pulumi\.yaml names no project"):
        project_name(tmp_path)


def test_a_missing_pulumi_yaml_is_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"Pulumi\.yaml names no project \(.*No such file"):
        project_name(tmp_path)
