"""The sandbox's command group is behind its own door: listed, loaded only when called."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from automation.cli.doors import Door, open_door
from automation.core.errors import UserError

LOADED = textwrap.dedent(
    """
    import sys
    from typer.testing import CliRunner
    from automation.cli.app import app
    result = CliRunner().invoke(app, sys.argv[1:])
    print(result.exit_code)
    print(result.output)
    print("SANDBOX LOADED" if any(m.startswith("automation.sandbox") for m in sys.modules) else "")
    """
)


def _invoke(*argv: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", LOADED, *argv], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_help_lists_the_sandbox_without_loading_it() -> None:
    shown = _invoke("--help")
    assert "sandbox" in shown and "A local stand-in for one AWS account" in shown
    assert "SANDBOX LOADED" not in shown


def test_a_stack_command_never_loads_the_sandbox() -> None:
    shown = _invoke("--stack", "local", "plan", "--json")
    assert shown.startswith("0\n"), shown
    assert "SANDBOX LOADED" not in shown


def test_the_sandbox_group_is_loaded_when_called() -> None:
    shown = _invoke("sandbox", "--help")
    assert shown.startswith("0\n") and "env" in shown and "up" in shown
    assert "SANDBOX LOADED" in shown


def test_a_door_whose_dependency_is_missing_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "needs_a_missing_dependency.py").write_text("import kubeshift_absent_module\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    door = Door(module="needs_a_missing_dependency", help="…", extra="sandbox")
    with pytest.raises(UserError, match=r"needs kubeshift_absent_module.*kubeshift\[sandbox\]"):
        open_door("sandbox", door)
