"""What ``kubeshift sandbox up`` builds once the supervisor's services answer: the world
the stack's baseline describes. :func:`build_world` aims this process at the sandbox,
installs the stand-in ``aws`` plugin in the sandbox's ``PULUMI_HOME``, writes the
rehearsal workspace, builds the live cluster as kops would have built it (boto3, kops's
names, no Pulumi state; the node bridge turns its instances into Nodes) or applies
baseline through the engine (``--built-by kubeshift``), stands in cni-swap's dependency
groups, and seeds the workloads the migration moves once every instance is a Ready Node.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from automation.config.project import StackInfo
from automation.core.errors import KubeshiftError
from automation.sandbox.layout import SandboxPaths
from automation.sandbox.state import SandboxState, StateBackend
from automation.sandbox.workspace import (
    STATE_BUCKET,
    rehearsal_config,
    sandbox_env,
    unset_for_sandbox,
    write_workspace,
    zone_name,
)
from automation.sandbox.world import BuiltBy, cluster_tag_id
from components.contract import keys as stack_keys

NODES_DEADLINE = 180.0
WORLD_BUILDER = "kubeshift sandbox up (stands in for the live cluster; no hook ran)"
Say = Callable[[str], None]


class SandboxError(KubeshiftError):
    """The sandbox could not start or build its world."""


def activate(paths: SandboxPaths, state: SandboxState) -> dict[str, str]:
    """Aim this process (and the engine it starts) at the sandbox; return the exports."""
    env = sandbox_env(paths, state)
    for name in unset_for_sandbox():
        os.environ.pop(name, None)
    os.environ.update(env)
    return env


def build_world(
    project: Path,
    paths: SandboxPaths,
    info: StackInfo,
    state: SandboxState,
    say: Say,
    *,
    built_by: BuiltBy = "kops",
    backend: StateBackend = "file",
) -> SandboxState:
    """Plugin, workspace, the live cluster, workloads; idempotent. ``kops`` builds the
    cluster with boto3 under kops's names and leaves no state, for ``kubeshift adopt``;
    ``kubeshift`` applies baseline through the engine and keeps the stack's state.
    ``backend``: where the engine keeps that state (a directory, or moto's S3)."""
    from automation.sandbox.provider.install import install

    state.backend = backend
    state.save(paths.state_file)
    activate(paths, state)
    install(Path(state.pulumi_bin), paths.pulumi_home, paths.run / "plugin")
    config, mappings = rehearsal_config(
        info.values, state, _hosted_zone(state.region, state.moto_endpoint), project=project
    )
    if built_by == "terraform-modules":  # the modules tag the cluster with its name
        config[stack_keys.CLUSTER_KEY].pop("cluster_id", None)
        # as a user names the state Terraform keeps of it, so adopt and every phase
        # check what Terraform still manages
        runtime = dict(config.get(stack_keys.RUNTIME_KEY) or {})
        config[stack_keys.RUNTIME_KEY] = {**runtime, "terraform_state": str(paths.terraform_state)}
    paths.backend.mkdir(parents=True, exist_ok=True)
    if state.backend == "s3":
        _state_bucket(state)
    workspace = write_workspace(project, paths, info.name, config)
    for line in mappings:
        say(f"  {line}")
    began = time.monotonic()
    if built_by == "kubeshift":
        _apply_baseline(workspace, info, say)
    else:
        _build_live(config, paths, state, say, built_by)
    say(f"  built in {time.monotonic() - began:.0f}s")
    stack_file = workspace / "stacks" / f"Pulumi.{info.name}.yaml"
    mappings += _stand_in_dependencies(stack_file, state, say)
    tag = cluster_tag_id(info.config.cluster, built_by)
    probe = _seed_workloads(workspace, info, state, say, tag)
    state.world_ready = True
    state.mappings = mappings
    state.probe_services = probe
    state.save(paths.state_file)
    _write_probe_services(stack_file, probe)
    return state


def _state_bucket(state: SandboxState) -> None:
    """The bucket the engine keeps the stack's state in (``--backend s3``), made once."""
    import boto3

    s3 = boto3.client("s3", region_name=state.region, endpoint_url=state.moto_endpoint)
    if STATE_BUCKET in {b["Name"] for b in s3.list_buckets().get("Buckets", [])}:
        return
    if state.region == "us-east-1":  # the one region that takes no location constraint
        s3.create_bucket(Bucket=STATE_BUCKET)
    else:
        s3.create_bucket(
            Bucket=STATE_BUCKET,
            CreateBucketConfiguration={"LocationConstraint": state.region},  # type: ignore[typeddict-item]
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


def _build_live(
    config: dict[str, Any], paths: SandboxPaths, state: SandboxState, say: Say, built_by: BuiltBy
) -> None:
    """The live cluster as kops, or seed 001's Terraform modules, would have left it:
    boto3 calls, the tool's names, no Pulumi state (the modules' Terraform state
    written beside). A cluster built whole before (an ``up`` cut short later) is kept;
    one whose build was cut short cannot be finished, only built again."""
    from automation.sandbox.provider.model import Aws
    from automation.sandbox.world.build import WorldError, build
    from automation.sandbox.world.modules.build import build_modules

    block = config[stack_keys.CLUSTER_KEY]
    cluster = str(block["name"])
    done = paths.world_built
    if done.exists():
        say(f"  the live cluster {cluster} is already built")
        return
    again = "Run `kubeshift sandbox down`, then `up` again."
    if _cluster_vpcs(state, str(block.get("cluster_id") or cluster)):  # tagged by its ID
        raise SandboxError(f"The build of the live cluster {cluster} was cut short. {again}")
    aws = Aws(state.region, state.moto_endpoint)
    if built_by == "terraform-modules":
        say(f"building the live cluster {cluster} as seed 001's Terraform modules name it, "
            "with boto3 (no engine, no Pulumi state)")  # fmt: skip
        count = len(build_modules(config, aws, paths.terraform_state).built)
        say(
            f"  Terraform's state of it: {paths.terraform_state} (the stack file names it in "
            "kubeshift:runtime.terraform_state: adopt says what Terraform still manages, and "
            "a phase refuses to change it until `terraform state rm` lets it go)"
        )
    else:
        say(f"building the live cluster {cluster} as kops names it, with boto3 (no engine, "
            "no state)")  # fmt: skip
        try:
            count = len(build(config, aws))
        except WorldError as exc:
            raise SandboxError(f"{exc} {again}") from None
    done.write_text(f"{count}\n")
    say(
        f"  {count} AWS resources; `kubeshift adopt --write-config FILE` proposes the "
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


def _seed_workloads(
    workspace: Path, info: StackInfo, state: SandboxState, say: Say, cluster_tag: str
) -> list[str]:
    """Workloads behind PodDisruptionBudgets, once each instance tagged for
    ``cluster_tag`` is a Ready Node; the availability probe's services."""
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
        expected = _cluster_instances(state, cluster_tag)
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
    cluster = document["config"][stack_keys.CLUSTER_KEY]
    made = stand_in(ec2, str(cluster.get("cluster_id") or cluster["name"]), declared)
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
