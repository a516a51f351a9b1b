"""pytest fixtures that point tests at the real Pulumi engine with a throw-away backend.

Why this exists: engine tests must run the real ``pulumi`` CLI (see
``tests/support/engine.py`` for how it is found) without touching the user's Pulumi
state, credentials or network. Each test gets its own ``file://`` backend, passphrase
secrets provider, ``PULUMI_HOME``, and a private copy of the provider-free test
project in ``tests/integration/engine/project``, wired to this interpreter's venv.
A missing engine FAILS the test with the command that builds it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from automation.engine.processes import descendants
from automation.sandbox.binaries import MissingEngine, PulumiInstall, find_engine

PROJECT_SRC = Path(__file__).resolve().parents[1] / "integration" / "engine" / "project"
PASSPHRASE = "kubeshift-engine-tests"  # a test-only secret for throw-away stacks
STACK = "dev"


def kill_tree(root: int) -> set[int]:
    """SIGKILL ``root`` and every process below it at once, as a crash or an OOM kill
    would; return them. A process group is not enough: the engine starts each plugin
    (the language host, a dynamic provider) in a group of its own, and a provider whose
    engine died keeps serving, for ever. ``root`` goes first: a plugin killed before its
    engine would fail the engine's call, and the engine, still running, would record the
    failure in the state (a pending create cleared) before its own kill arrived."""
    family = descendants(root)
    for pid in [root, *sorted(family - {root})]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return family


@dataclass(frozen=True)
class EngineProject:
    """A private copy of the test project, its backend and its record store."""

    engine: PulumiInstall
    dir: Path
    backend: Path
    store: Path
    stack: str
    env: dict[str, str]

    def pulumi(
        self, *args: str, check: bool = True, timeout: float = 300
    ) -> subprocess.CompletedProcess[str]:
        """Run the engine's CLI on this project and stack, as a user would by hand."""
        proc = subprocess.run(
            [str(self.engine.pulumi), *args, "--stack", self.stack, "--non-interactive"],
            cwd=self.dir,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"`pulumi {' '.join(args)}` exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
            )
        return proc

    def records(self) -> dict[str, dict[str, object]]:
        """What the dynamic provider really holds: record id -> stored properties."""
        import json

        return {p.stem: json.loads(p.read_text()) for p in sorted(self.store.glob("*.json"))}


def engine_environment(
    engine: PulumiInstall, root: Path, base: Mapping[str, str]
) -> dict[str, str]:
    """Environment for a CLI run confined to ``root``: no network, no user state."""
    env = dict(base)
    env.update(
        PATH=engine.env_path(base.get("PATH", "")),
        PULUMI_BACKEND_URL=(root / "backend").as_uri(),
        PULUMI_CONFIG_PASSPHRASE=PASSPHRASE,
        PULUMI_HOME=str(root / "pulumi-home"),
        PULUMI_SKIP_UPDATE_CHECK="true",
        PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION="true",
        PULUMI_SKIP_CONFIRMATIONS="true",
        PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK="true",
    )
    env.pop("PULUMI_ACCESS_TOKEN", None)
    env.pop("PULUMI_CONFIG_PASSPHRASE_FILE", None)
    return env


def copy_project(dest: Path) -> Path:
    """Copy the test project to ``dest`` and point its runtime at this interpreter's venv."""
    shutil.copytree(PROJECT_SRC, dest, ignore=shutil.ignore_patterns("__pycache__"))
    pulumi_yaml = dest / "Pulumi.yaml"
    text = pulumi_yaml.read_text()
    marker = "  name: python\n"
    if marker not in text:
        raise AssertionError(f"{pulumi_yaml} no longer declares `runtime: name: python`.")
    pulumi_yaml.write_text(
        text.replace(marker, f"{marker}  options:\n    virtualenv: {sys.prefix}\n")
    )
    return dest


@pytest.fixture(scope="session")
def pulumi_engine() -> PulumiInstall:
    """The real engine, or a FAILED test that says how to build it."""
    try:
        return find_engine()
    except MissingEngine as exc:
        problem = str(exc)
    pytest.fail(f"Pulumi engine missing: {problem}", pytrace=False)


@pytest.fixture
def engine_project(
    pulumi_engine: PulumiInstall, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[EngineProject]:
    """A fresh copy of the test project with stack ``dev`` created on a tmp backend.

    The process environment is pointed at the same backend so in-process Automation
    API calls and ``kubeshift`` subprocesses see exactly what ``project.pulumi`` sees.
    """
    import os

    (tmp_path / "backend").mkdir()
    store = tmp_path / "store"
    store.mkdir()
    env = engine_environment(pulumi_engine, tmp_path, os.environ)
    for key, value in env.items():
        if os.environ.get(key) != value:
            monkeypatch.setenv(key, value)
    for key in ("PULUMI_ACCESS_TOKEN", "PULUMI_CONFIG_PASSPHRASE_FILE"):
        monkeypatch.delenv(key, raising=False)
    project = EngineProject(
        engine=pulumi_engine,
        dir=copy_project(tmp_path / "project"),
        backend=tmp_path / "backend",
        store=store,
        stack=STACK,
        env=env,
    )
    subprocess.run(
        [str(pulumi_engine.pulumi), "stack", "init", STACK, "--non-interactive"],
        cwd=project.dir,
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    project.pulumi("config", "set", "kubeshift-test:store", str(store))
    yield project
