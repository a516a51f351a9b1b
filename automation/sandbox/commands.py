"""``kubeshift sandbox up | down | status | env``, and aiming other commands at it.

``up`` starts the supervisor detached, waits (with a deadline and a spinner) until its
services answer, then builds the world the stack's baseline describes
(:func:`automation.sandbox.world_up.build_world`). Every user error is one sentence,
raised before anything starts.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from automation.cli.doors import SANDBOX_VARIABLE
from automation.config.project import StackInfo, load_stack
from automation.core.errors import UserError
from automation.sandbox.layout import SandboxPaths
from automation.sandbox.member_plan import plan_members
from automation.sandbox.state import SandboxState, StateBackend, alive, load_state
from automation.sandbox.world import BuiltBy, cluster_tag_id
from automation.sandbox.world_up import SandboxError, Say, build_world

STARTUP_DEADLINE = 300.0
STOP_GRACE = 30.0


@dataclass(frozen=True)
class UpReport:
    state: SandboxState
    started: bool
    seconds: float


def sandbox_paths(project: Path) -> SandboxPaths:
    """The sandbox of this project (or the one a sourced ``sandbox env`` names)."""
    named = os.environ.get(SANDBOX_VARIABLE)
    return SandboxPaths(Path(named)) if named else SandboxPaths.for_project(project)


def _port_taken(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def cloud_controllers(info: StackInfo) -> list[str]:
    """The cloud-controller-manager's controllers a stack's scenario reads: cni-swap
    moves DNS to Services' load balancers; overlay-switch waits for node routes."""
    from automation.sandbox.cloud_controller import LOAD_BALANCERS, ROUTES

    return {"cni-swap": [LOAD_BALANCERS], "overlay-switch": [ROUTES]}.get(info.scenario, [])


def _pod_cidr_argv(info: StackInfo) -> list[str]:
    """overlay-switch: node pod CIDRs from the stack's pod CIDR (the routes' destinations)."""
    overlay = info.config.migration.overlay
    if overlay is None:
        return []
    prefix = str(overlay.node_pod_prefix)
    return ["--cluster-cidr", str(overlay.pod_cidr), "--node-cidr-prefix", prefix]


def _binaries(info: StackInfo) -> Path:
    """The pulumi CLI the sandbox uses; control-plane binaries (and the cloud controller
    the scenario needs) must exist too."""
    from automation.sandbox.binaries import (
        MissingBinaries,
        MissingEngine,
        cloud_controller_manager,
        find_engine,
        locate,
    )

    try:
        locate()
        if cloud_controllers(info):
            cloud_controller_manager()
        return Path(find_engine().pulumi)
    except (MissingBinaries, MissingEngine) as exc:
        raise UserError(f"The sandbox cannot start: {exc}") from None


def _mirror_argv(info: StackInfo) -> list[str]:
    """A cni-swap stack's mirror: its name and the API host its nodes' kubelets join."""
    from components.cni_swap import mirror_api_record

    migration = info.config.migration
    if migration.mirror is None:
        return []
    name = f"{info.config.cluster.name}-{migration.suffix}"
    return ["--mirror-name", name, "--mirror-api-host", mirror_api_record(migration.mirror)]


def check_aimed(root: Path) -> None:
    """Before a command runs in a shell aimed at the sandbox at ``root`` (by ``kubeshift
    sandbox env``): the sandbox must be up and its world built; else one sentence naming
    the command that starts it (nothing is changed)."""
    paths = SandboxPaths(root)
    state = load_state(paths.state_file)
    if state is None:
        raise UserError(
            f"This shell is aimed at a sandbox that is not running ({root}); start it with "
            "`kubeshift --stack <stack> sandbox up`, or open a shell without its exports."
        )
    if not state.supervisor_running():
        raise UserError(
            f"The sandbox rehearsing stack '{state.stack}' is down; start it with "
            f"`kubeshift --stack {state.stack} sandbox up` (or clear it with "
            "`kubeshift sandbox down`)."
        )
    if not state.world_ready:
        raise UserError(
            f"The sandbox for stack '{state.stack}' is still building its world; wait for "
            "`kubeshift sandbox up` to finish."
        )


def up(
    project: Path,
    stack: str,
    *,
    moto_port: int = 0,
    built_by: BuiltBy = "kops",
    backend: StateBackend = "file",
    say: Say = print,
) -> UpReport:
    started_at = time.monotonic()
    info = load_stack(project, stack)
    paths = sandbox_paths(project)
    state = load_state(paths.state_file)
    if state is not None and state.supervisor_running():
        if state.stack != stack:
            raise UserError(
                f"A sandbox for stack '{state.stack}' is already running; stop it with "
                "`kubeshift sandbox down` before rehearsing another stack."
            )
        if state.world_ready and state.backend != backend:
            raise UserError(
                f"The sandbox for '{stack}' keeps its state in a {state.backend} backend, not "
                f"{backend}; stop it with `kubeshift sandbox down` to change backends."
            )
        if state.world_ready:
            say(f"sandbox for '{stack}' already running since {time.ctime(state.started_at)}")
            return UpReport(state, started=False, seconds=time.monotonic() - started_at)
    elif state is not None:
        say("clearing a sandbox whose supervisor is gone")
        down(project, say=lambda _m: None)
        state = None
    pulumi = _binaries(info)
    if moto_port and _port_taken(moto_port):
        raise UserError(f"Port {moto_port} on 127.0.0.1 is taken; choose another --moto-port.")
    if state is None:
        state = _start_supervisor(paths, info, pulumi, moto_port, say, built_by)
    state = build_world(project, paths, info, state, say, built_by=built_by, backend=backend)
    return UpReport(state, started=True, seconds=time.monotonic() - started_at)


def _images_argv(info: StackInfo, built_by: BuiltBy) -> list[str]:
    """What the stack's images run at boot (:mod:`automation.sandbox.boots`)."""
    from automation.sandbox.boots import ImageBoot, declared_images, images_argument

    mirror = info.config.migration.mirror
    boots: dict[BuiltBy, ImageBoot] = {
        "kops": "cloud-init", "kubeshift": "node-env", "terraform-modules": "join",
    }  # fmt: skip
    images = declared_images(
        info.config.cluster.image_id, mirror.image_id if mirror else None,
        cluster_boot=boots[built_by],
    )  # fmt: skip
    return ["--images", images_argument(images)]


def _start_supervisor(
    paths: SandboxPaths,
    info: StackInfo,
    pulumi: Path,
    moto_port: int,
    say: Say,
    built_by: BuiltBy,
) -> SandboxState:
    paths.logs.mkdir(parents=True, exist_ok=True)
    (paths.root / "supervisor.failed").unlink(missing_ok=True)
    region = str(info.values.get("aws:region") or os.environ.get("AWS_REGION") or "us-east-1")
    argv = [
        sys.executable, "-m", "automation.sandbox.supervisor",
        "--root", str(paths.root), "--stack", info.name, "--scenario", info.scenario,
        "--region", region, "--cluster-name", str(info.config.cluster.name),
        "--cluster-id", cluster_tag_id(info.config.cluster, built_by),
        "--moto-port", str(moto_port), "--pulumi-bin", str(pulumi), *_mirror_argv(info),
        "--cloud-controllers", ",".join(cloud_controllers(info)), *_pod_cidr_argv(info),
        *_images_argv(info, built_by),
    ]  # fmt: skip
    plan = plan_members(info.config, etcd_manager=built_by == "kops")
    if plan is not None:
        argv += ["--members", plan.model_dump_json()]
    with (paths.logs / "supervisor.out").open("ab") as out:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True
        )
    say(f"starting moto, etcd, {info.name}'s cluster(s), kwok, the node bridge (pid {proc.pid})")
    deadline = time.monotonic() + STARTUP_DEADLINE
    while time.monotonic() < deadline:
        state = load_state(paths.state_file)
        if state is not None and state.supervisor_pid == proc.pid:
            say(f"services ready in {STARTUP_DEADLINE - (deadline - time.monotonic()):.0f}s")
            return state
        if proc.poll() is not None or (paths.root / "supervisor.failed").exists():
            break
        time.sleep(0.5)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    raise SandboxError(
        f"The sandbox did not start within {STARTUP_DEADLINE:.0f}s; see "
        f"{paths.logs / 'supervisor.log'}."
    )


def down(project: Path, *, say: Say = print) -> list[str]:
    """Stop every sandbox process and wipe its world; return what was stopped."""
    import shutil

    paths = sandbox_paths(project)
    try:
        state = load_state(paths.state_file)
    except UserError:
        state = None
    stopped: list[str] = []
    if state is not None:
        # Only the processes the sandbox started: a pid the kernel has since given to
        # another process (its start time differs) is left alone.
        pids = {(p.pid, p.started) for p in state.processes}
        pids.add((state.supervisor_pid, state.supervisor_started))
        if state.supervisor_running():
            os.kill(state.supervisor_pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE
        while any(alive(*p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.2)
        for pid, started in pids:
            if alive(pid, started):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        stopped = [f"{p.name} (pid {p.pid})" for p in state.processes]
    for path in paths.wipeable():
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    say(f"stopped {len(stopped)} sandbox processes" if stopped else "no sandbox was running")
    return stopped
