"""``kubeshift sandbox up | down | status | env``, and aiming other commands at it.

``up`` starts the supervisor detached, waits (with a deadline and a spinner) until its
services answer, then builds the world the stack's baseline describes: the stand-in
``aws`` plugin in the sandbox's ``PULUMI_HOME``, the rehearsal workspace, the live
cluster as kops would have built it (boto3, kops's names, no Pulumi state; the node
bridge turns its instances into Nodes), and the workloads the migration moves. Every
user error is one sentence, raised before anything starts.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from automation.cli.doors import SANDBOX_VARIABLE
from automation.config.project import StackInfo, load_stack
from automation.core.errors import KubeshiftError, UserError
from automation.sandbox.layout import SandboxPaths
from automation.sandbox.member_plan import plan_members
from automation.sandbox.state import SandboxState, alive, load_state
from automation.sandbox.workspace import (
    rehearsal_config,
    sandbox_env,
    unset_for_sandbox,
    write_workspace,
    zone_name,
)
from automation.sandbox.world import BuiltBy
from components.contract import keys as stack_keys

STARTUP_DEADLINE = 300.0
STOP_GRACE = 30.0
NODES_DEADLINE = 180.0
WORLD_BUILDER = "kubeshift sandbox up (stands in for the live cluster; no hook ran)"
Say = Callable[[str], None]


class SandboxError(KubeshiftError):
    """The sandbox could not start or build its world."""


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


def activate(paths: SandboxPaths, state: SandboxState) -> dict[str, str]:
    """Aim this process (and the engine it starts) at the sandbox; return the exports."""
    env = sandbox_env(paths, state)
    for name in unset_for_sandbox():
        os.environ.pop(name, None)
    os.environ.update(env)
    return env


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
    state = build_world(project, paths, info, state, say, built_by=built_by)
    return UpReport(state, started=True, seconds=time.monotonic() - started_at)


def _images_argv(info: StackInfo, built_by: BuiltBy) -> list[str]:
    """What the stack's images run at boot (:mod:`automation.sandbox.boots`)."""
    from automation.sandbox.boots import declared_images, images_argument

    mirror = info.config.migration.mirror
    images = declared_images(
        info.config.cluster.image_id,
        mirror.image_id if mirror else None,
        kubeshift_built=built_by == "kubeshift",
    )
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
        "--moto-port", str(moto_port), "--pulumi-bin", str(pulumi), *_mirror_argv(info),
        "--cloud-controllers", ",".join(cloud_controllers(info)), *_pod_cidr_argv(info),
        *_images_argv(info, built_by),
    ]  # fmt: skip
    plan = plan_members(info.config)
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


def _hosted_zone(region: str, endpoint: str) -> Callable[[str], str]:
    import boto3

    route53 = boto3.client("route53", region_name=region, endpoint_url=endpoint)

    def ensure(name: str) -> str:
        for zone in route53.list_hosted_zones_by_name(DNSName=name)["HostedZones"]:
            if zone["Name"].rstrip(".") == name:
                return str(zone["Id"]).rsplit("/", 1)[-1]
        made = route53.create_hosted_zone(Name=name, CallerReference=f"kubeshift-{name}")
        return str(made["HostedZone"]["Id"]).rsplit("/", 1)[-1]

    return ensure


def build_world(
    project: Path,
    paths: SandboxPaths,
    info: StackInfo,
    state: SandboxState,
    say: Say,
    *,
    built_by: BuiltBy = "kops",
) -> SandboxState:
    """Plugin, workspace, the live cluster, workloads; idempotent. ``kops`` builds the
    cluster with boto3 under kops's names and leaves no state, for ``kubeshift adopt``;
    ``kubeshift`` applies baseline through the engine and keeps the stack's state."""
    from automation.sandbox.provider.install import install

    activate(paths, state)
    install(Path(state.pulumi_bin), paths.pulumi_home, paths.run / "plugin")
    config, mappings = rehearsal_config(
        info.values, state, _hosted_zone(state.region, state.moto_endpoint), project=project
    )
    paths.backend.mkdir(parents=True, exist_ok=True)
    workspace = write_workspace(project, paths, info.name, config)
    for line in mappings:
        say(f"  {line}")
    began = time.monotonic()
    if built_by == "kubeshift":
        _apply_baseline(workspace, info, say)
    else:
        _build_as_kops(config, paths, state, say)
    say(f"  built in {time.monotonic() - began:.0f}s")
    stack_file = workspace / "stacks" / f"Pulumi.{info.name}.yaml"
    mappings += _stand_in_dependencies(stack_file, state, say)
    probe = _seed_workloads(workspace, info, state, say)
    state.world_ready = True
    state.mappings = mappings
    state.probe_services = probe
    state.save(paths.state_file)
    _write_probe_services(stack_file, probe)
    return state


def _build_as_kops(
    config: dict[str, Any], paths: SandboxPaths, state: SandboxState, say: Say
) -> None:
    """The live cluster as kops would have left it: boto3 calls, kops's names, no state.
    A cluster built whole before (an ``up`` cut short later) is kept; one whose build
    was cut short cannot be finished, only built again."""
    from automation.sandbox.provider.model import Aws
    from automation.sandbox.world.build import WorldError, build

    cluster = str(config[stack_keys.CLUSTER_KEY]["name"])
    done = paths.world_built
    if done.exists():
        say(f"  the live cluster {cluster} is already built")
        return
    again = "Run `kubeshift sandbox down`, then `up` again."
    if _cluster_vpcs(state, cluster):
        raise SandboxError(f"The build of the live cluster {cluster} was cut short. {again}")
    say(f"building the live cluster {cluster} as kops names it, with boto3 (no engine, no state)")
    try:
        built = build(config, Aws(state.region, state.moto_endpoint))
    except WorldError as exc:
        raise SandboxError(f"{exc} {again}") from None
    done.write_text(f"{len(built)}\n")
    say(
        f"  {len(built)} AWS resources; `kubeshift adopt --write-config FILE` proposes the "
        "stack file that keeps their names, `kubeshift adopt` then takes them"
    )


def _apply_baseline(workspace: Path, info: StackInfo, say: Say) -> None:
    """Baseline through the engine, the stack's state kept (``--built-by kubeshift``)."""
    from automation.engine.adapter import PulumiEngine
    from automation.run.steps import step_layout
    from automation.scenarios import build_scenario
    from components.contract.progress import Mark, Record

    say("building the baseline through the engine (pulumi up of phase 'baseline')")
    engine = PulumiEngine(workspace, info.name, create=True)
    engine.set_phase("baseline")
    # The stand-in for a cluster built before kubeshift: no kubeshift hook ran before
    # it, and the stack's progress record says so (components.contract.progress).
    world = Mark(phase="baseline", milestone="before", by=WORLD_BUILDER)
    layout = step_layout(build_scenario(info.config).phases)
    engine.carry(Record(marks=(world,), steps=layout))
    outcome = engine.up()
    engine.carry(None)
    say(f"  baseline: {outcome.summary}")


def _cluster_vpcs(state: SandboxState, cluster: str) -> list[str]:
    import boto3

    ec2 = boto3.client("ec2", region_name=state.region, endpoint_url=state.moto_endpoint)
    vpcs = ec2.describe_vpcs(
        Filters=[{"Name": "tag-key", "Values": [f"kubernetes.io/cluster/{cluster}"]}]
    )["Vpcs"]
    return [str(v["VpcId"]) for v in vpcs]


def _cluster_instances(state: SandboxState, cluster: str) -> int:
    """Running instances moto holds for ``cluster`` (what the node bridge turns into Nodes)."""
    import boto3

    ec2 = boto3.client("ec2", region_name=state.region, endpoint_url=state.moto_endpoint)
    pages = ec2.get_paginator("describe_instances").paginate(
        Filters=[
            {"Name": "tag-key", "Values": [f"kubernetes.io/cluster/{cluster}"]},
            {"Name": "instance-state-name", "Values": ["running"]},
        ]
    )
    return sum(len(r["Instances"]) for page in pages for r in page["Reservations"])


def _wait_ready_nodes(client: Any, expected: int, *, timeout: float) -> None:
    """Until ``expected`` Nodes are Ready: pods seeded earlier would pile onto the first."""
    from kubernetes.client import CoreV1Api

    def ready() -> int:
        nodes = CoreV1Api(client).list_node().items
        return sum(
            any(c.type == "Ready" and c.status == "True" for c in n.status.conditions or [])
            for n in nodes
            if n.status is not None
        )

    deadline = time.monotonic() + timeout
    while (count := ready()) < expected:
        if time.monotonic() > deadline:
            raise SandboxError(
                f"Only {count} of {expected} sandbox Nodes became Ready within {timeout:.0f}s; "
                "see the node bridge in the supervisor log."
            )
        time.sleep(1.0)


def _seed_workloads(workspace: Path, info: StackInfo, state: SandboxState, say: Say) -> list[str]:
    import kubernetes

    from automation.config.mirror_settings import DaemonSetRef
    from automation.config.settings import load_runtime_settings
    from automation.sandbox import workloads

    settings = load_runtime_settings(info.values)

    primary = state.cluster("primary")
    if primary is None:
        return []
    client = kubernetes.config.new_client_from_config(
        config_file=primary.kubeconfig, context=primary.context
    )
    with client:
        expected = _cluster_instances(state, primary.name)
        say(f"waiting for the {expected} instances of {primary.name} to join as Ready Nodes")
        _wait_ready_nodes(client, expected, timeout=NODES_DEADLINE)
        mirrored = info.scenario == "cni-swap"
        overlay = info.config.migration.overlay
        calico = DaemonSetRef(
            namespace=settings.calico.namespace,
            name=settings.calico.daemonset,
            pod_selector="k8s-app=calico-node",
        )
        cni = settings.mirror.old_cni if mirrored else calico if overlay else None
        spec = workloads.spec_for(
            info.config,
            settings.ingress,
            cni=cni,
            dns_zone=zone_name(info.config.cluster.dns.api_record) if mirrored else None,
        )
        seeded = workloads.seed(client, spec)
        say(f"seeding workloads: {', '.join(seeded.probe_services)}; waiting until Available")
        workloads.wait_available(client, seeded, timeout=300.0)
        if overlay is not None:
            from automation.kube.clients import KubeClients
            from automation.sandbox.calico import seed_ip_pool

            pool = settings.calico.ip_pool
            say(f"Calico: IPPool {pool} on IPIP over {overlay.pod_cidr}, calico-node on every node")
            seed_ip_pool(KubeClients(client), pool, str(overlay.pod_cidr))
        if spec.dns_zone:
            zone_id = stack_zone_id(workspace, info)
            _publish_service_records(client, state, zone_id, seeded.namespaces, say)
    return list(seeded.probe_services)


def stack_zone_id(workspace: Path, info: StackInfo) -> str:
    """The hosted zone the workspace's stack file names (the sandbox's own)."""
    document = yaml.safe_load((workspace / "stacks" / f"Pulumi.{info.name}.yaml").read_text())
    return str(document["config"][stack_keys.CLUSTER_KEY]["dns"]["zone_id"])


def _publish_service_records(
    api_client: Any, state: SandboxState, zone_id: str, namespaces: tuple[str, ...], say: Say
) -> None:
    import boto3
    from kubernetes.client import CoreV1Api

    from automation.sandbox.service_records import publish

    route53 = boto3.client("route53", region_name=state.region, endpoint_url=state.moto_endpoint)
    say("waiting for the cloud controller to give each Service with DNS names a load balancer")
    records = publish(CoreV1Api(api_client), route53, zone_id, namespaces)
    for record in records:
        say(f"  record {record}")


def _stand_in_dependencies(stack_file: Path, state: SandboxState, say: Say) -> list[str]:
    """cni-swap's dependency security groups, made in moto and written into the
    workspace's stack file; one mapping line each."""
    import boto3

    from automation.sandbox.dependencies import stand_in

    document = yaml.safe_load(stack_file.read_text())
    migration = document["config"].get(stack_keys.MIGRATION_KEY) or {}
    mirror = migration.get("mirror") or {}
    declared = list(mirror.get("dependency_security_group_ids") or [])
    if not declared:
        return []
    ec2 = boto3.client("ec2", region_name=state.region, endpoint_url=state.moto_endpoint)
    made = stand_in(ec2, str(document["config"][stack_keys.CLUSTER_KEY]["name"]), declared)
    if made:
        aimed = {m.declared: m.group_id for m in made}
        mirror["dependency_security_group_ids"] = [aimed.get(d, d) for d in declared]
        stack_file.write_text(yaml.safe_dump(document, sort_keys=False))
    lines = [str(m) for m in made]
    for line in lines:
        say(f"  {line}")
    return lines


def _write_probe_services(stack_file: Path, services: list[str]) -> None:
    document = yaml.safe_load(stack_file.read_text())
    runtime = document["config"].setdefault("kubeshift:runtime", {})
    if not runtime.get("probe_services"):
        runtime["probe_services"] = services
    stack_file.write_text(yaml.safe_dump(document, sort_keys=False))


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
