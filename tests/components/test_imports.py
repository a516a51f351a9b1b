"""Adoption's import file: every listed resource is declared with Pulumi's import option."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pulumi
import pytest

from automation.review.render import record, render_program
from components import imports, program
from components.contract.engine_vars import IMPORTS_VAR
from tests.components.conftest import rendered, stack_values


def _write(tmp_path: Path, plan: dict[str, Any]) -> Path:
    path = tmp_path / "imports.json"
    path.write_text(json.dumps(plan))
    return path


def test_every_listed_resource_is_declared_with_its_live_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = [r for r in rendered("vpc-move-small", "baseline").resources if r.custom]
    found = {imports.key(r.type, r.name): f"live-{n}" for n, r in enumerate(plain)}
    accepted = {imports.key(plain[0].type, plain[0].name): ["tags"]}
    path = _write(tmp_path, {"phase": "baseline", "imports": found, "ignore_changes": accepted})
    monkeypatch.setenv(IMPORTS_VAR, str(path))

    adopted = render_program(stack_values("vpc-move-small"), "baseline").resources

    custom = [r for r in adopted if r.custom]
    assert {imports.key(r.type, r.name): r.options.get("import") for r in custom} == found
    assert "tags" in custom[0].options.get("ignoreChanges", [])
    assert all("import" not in r.options for r in adopted if not r.custom)
    # the same resources, inputs unchanged: adoption adds the option and nothing else
    assert [(r.type, r.name, r.inputs) for r in custom] == [
        (r.type, r.name, r.inputs) for r in plain
    ]


def test_without_the_variable_nothing_is_imported() -> None:
    resources = rendered("vpc-move-small", "baseline").resources
    assert not any("import" in r.options for r in resources)


def test_an_import_file_for_another_phase_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path, {"phase": "target-network", "imports": {}})
    monkeypatch.setenv(IMPORTS_VAR, str(path))

    with pytest.raises(pulumi.RunError, match="import file is for 'target-network'"):
        record(program.main, config=stack_values("vpc-move-small"))


def test_a_damaged_import_file_is_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "imports.json"
    path.write_text("{not json")
    monkeypatch.setenv(IMPORTS_VAR, str(path))

    with pytest.raises(pulumi.RunError) as raised:
        record(program.main, config=stack_values("vpc-move-small"))

    assert str(raised.value).startswith(f"KUBESHIFT_IMPORTS names {path}, which is not")
