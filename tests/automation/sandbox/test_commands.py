"""The errors a user meets around the sandbox, through the console script.

Each is one sentence and a non-zero exit, before anything starts: no process is
spawned, no state file is written, the stack file is untouched.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from automation.sandbox.layout import SandboxPaths
from automation.sandbox.state import ProcessInfo, SandboxState, process_start
from tests.support.user_env import user_environment

REPO = Path(__file__).resolve().parents[3]
KUBESHIFT = str(Path(sys.executable).with_name("kubeshift"))


def _kubeshift(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KUBESHIFT, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )


def _one_sentence(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr + proc.stdout
    text = " ".join(proc.stderr.split())
    assert text.startswith("error:"), proc.stderr
    return text


def _aimed(env: dict[str, str]) -> dict[str, str]:
    """The shell after ``eval "$(kubeshift sandbox env)"``, as far as it names the sandbox."""
    return {**env, "KUBESHIFT_SANDBOX": str(Path(env["KUBESHIFT_STATE_DIR"]) / "sandbox")}


def _aimed_sentence(proc: subprocess.CompletedProcess[str]) -> str:
    """An aimed command's refusal: the line saying where it is aimed, then one sentence."""
    first, _, rest = proc.stderr.partition("\n")
    assert first.startswith("aimed at the sandbox in "), proc.stderr
    return _one_sentence(subprocess.CompletedProcess(proc.args, proc.returncode, "", rest))


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    clean = user_environment(tmp_path / "state")
    clean["COLUMNS"] = "200"
    return clean


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _write_state(
    env: dict[str, str],
    *,
    stack: str,
    pid: int,
    ready: bool = True,
    started: int | None = None,
    processes: list[ProcessInfo] | None = None,
) -> Path:
    paths = SandboxPaths(Path(env["KUBESHIFT_STATE_DIR"]) / "sandbox")
    SandboxState(
        stack=stack,
        scenario="vpc-move",
        region="us-west-2",
        supervisor_pid=pid,
        supervisor_started=started if started is not None else process_start(pid),
        moto_endpoint="http://127.0.0.1:1",
        processes=processes or [],
        clusters=[],
        pulumi_bin="/nonexistent/pulumi",
        started_at=time.time(),
        world_ready=ready,
    ).save(paths.state_file)
    return paths.state_file


@pytest.fixture
def listening_port() -> Iterator[int]:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def test_run_against_a_dead_sandbox_names_the_command_that_restarts_it(
    env: dict[str, str],
) -> None:
    state = _write_state(env, stack="local", pid=_dead_pid())
    before = state.read_text()

    text = _aimed_sentence(_kubeshift(_aimed(env), "--stack", "local", "run", "--yes"))

    assert "kubeshift --stack local sandbox up" in text
    assert state.read_text() == before


def test_a_shell_not_aimed_at_the_sandbox_runs_against_the_project(
    env: dict[str, str],
) -> None:
    """The sandbox's state says it rehearses `local`, but this shell never loaded its
    exports: the command runs against the project as configured, and says nothing of it."""
    _write_state(env, stack="local", pid=os.getpid(), ready=True)

    text = _one_sentence(_kubeshift(env, "--stack", "local", "status"))

    assert "no journal yet" in text and "sandbox" not in text


def test_a_shell_aimed_at_a_sandbox_that_is_not_running_says_so(env: dict[str, str]) -> None:
    text = _aimed_sentence(_kubeshift(_aimed(env), "--stack", "local", "status"))

    assert "not running" in text and "sandbox up" in text


def test_status_of_another_stack_ignores_the_sandbox(env: dict[str, str]) -> None:
    _write_state(env, stack="local", pid=_dead_pid())

    text = _one_sentence(_kubeshift(env, "--stack", "vpc-move-small", "status"))

    assert "no journal yet" in text and "sandbox" not in text


def test_up_refuses_while_another_stacks_sandbox_runs(env: dict[str, str]) -> None:
    _write_state(env, stack="vpc-move-small", pid=os.getpid())

    text = _one_sentence(_kubeshift(env, "--stack", "local", "sandbox", "up"))

    assert "'vpc-move-small' is already running" in text
    assert "kubeshift sandbox down" in text


def test_up_without_binaries_says_which_script_builds_them(
    env: dict[str, str], tmp_path: Path
) -> None:
    env["KUBESHIFT_TESTBIN_DIR"] = str(tmp_path / "empty-cache")
    env.pop("KUBEBUILDER_ASSETS", None)
    env["KUBESHIFT_PULUMI_BIN_DIR"] = str(tmp_path / "no-pulumi")
    env["PATH"] = "/usr/bin:/bin"

    text = _one_sentence(_kubeshift(env, "--stack", "local", "sandbox", "up"))

    assert "The sandbox cannot start" in text and "scripts/testbin" in text
    assert not (Path(env["KUBESHIFT_STATE_DIR"]) / "sandbox" / "state.json").exists()


@pytest.mark.controlplane
@pytest.mark.engine
def test_up_on_a_taken_port_starts_nothing(env: dict[str, str], listening_port: int) -> None:
    text = _one_sentence(
        _kubeshift(env, "--stack", "local", "sandbox", "up", "--moto-port", str(listening_port))
    )

    assert f"Port {listening_port}" in text and "--moto-port" in text
    assert not (Path(env["KUBESHIFT_STATE_DIR"]) / "sandbox" / "state.json").exists()


def test_a_damaged_state_file_is_one_sentence(env: dict[str, str]) -> None:
    state = Path(env["KUBESHIFT_STATE_DIR"]) / "sandbox" / "state.json"
    state.parent.mkdir(parents=True)
    state.write_text('{"stack": ')

    text = _one_sentence(_kubeshift(env, "sandbox", "status"))

    assert "damaged" in text and "kubeshift sandbox down" in text


def test_down_with_nothing_running_says_so(env: dict[str, str]) -> None:
    proc = _kubeshift(env, "sandbox", "down")

    assert proc.returncode == 0, proc.stderr
    assert "no sandbox was running" in proc.stdout + proc.stderr


def test_a_reused_pid_is_neither_trusted_nor_killed(env: dict[str, str]) -> None:
    """The sandbox died and the kernel gave its pids to other processes: here, ours."""
    me = os.getpid()
    stale = (process_start(me) or 0) + 1
    bystander = ProcessInfo(name="kube-apiserver", pid=me, started=stale)
    _write_state(env, stack="local", pid=me, started=stale, processes=[bystander])

    text = _aimed_sentence(_kubeshift(_aimed(env), "--stack", "local", "run", "--yes"))
    assert "is down" in text

    down = _kubeshift(env, "sandbox", "down")
    assert down.returncode == 0, down.stderr
    os.kill(me, 0)  # still here
    assert not (Path(env["KUBESHIFT_STATE_DIR"]) / "sandbox" / "state.json").exists()
