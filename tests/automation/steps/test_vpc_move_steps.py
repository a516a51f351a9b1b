"""vpc-move's node steps across real services: EC2 on moto, nodes on a real apiserver.

The seed's loop — ``describe-instances`` by cluster tag and ``vpc-id``, then
``kubectl taint`` each PrivateDnsName — runs here as the ``taint-old-nodes`` hook:
only the cluster's nodes in the source VPC are tainted, twice is the same as once,
and a dry run changes nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from kubernetes import client

from automation.aws.clients import AwsAccess, AwsClients
from automation.config.clients import StaticClients
from automation.config.settings import RuntimeSettings
from automation.kube.clients import KubeClients
from automation.model.context import HookContext
from automation.steps import nodes
from components.contract.loading import load_config, load_stack_file

REPO = Path(__file__).resolve().parents[3]
pytestmark = [pytest.mark.controlplane, pytest.mark.moto]


@dataclass
class World:
    source_vpc: str
    target_vpc: str
    source_nodes: list[str]
    target_nodes: list[str]
    foreign_node: str
    member_node: str


def _instances(ec2, subnet: str, count: int, cluster: str | None) -> list[dict]:  # type: ignore[no-untyped-def]
    tags = [{"Key": "KubernetesCluster", "Value": cluster}] if cluster else []
    reply = ec2.run_instances(
        ImageId="ami-0123456789abcdef0",
        MinCount=count,
        MaxCount=count,
        InstanceType="m5.large",
        SubnetId=subnet,
        TagSpecifications=[
            {"ResourceType": "instance", "Tags": tags or [{"Key": "x", "Value": "y"}]}
        ],
    )
    return list(reply["Instances"])


@pytest.fixture
def world(moto, primary_cluster) -> Iterator[World]:  # type: ignore[no-untyped-def]
    ec2 = moto.client("ec2")
    vpcs = {}
    subnets = {}
    for side, cidr in (("source", "10.0.0.0/16"), ("target", "10.20.0.0/16")):
        vpcs[side] = ec2.create_vpc(CidrBlock=cidr)["Vpc"]["VpcId"]
        subnets[side] = ec2.create_subnet(
            VpcId=vpcs[side], CidrBlock=cidr.replace("/16", "/20"), AvailabilityZone="us-east-1a"
        )["Subnet"]["SubnetId"]
    placed = {
        "source": _instances(ec2, subnets["source"], 2, "demo"),
        "target": _instances(ec2, subnets["target"], 2, "demo"),
        "foreign": _instances(ec2, subnets["source"], 1, "other-cluster"),
        "member": _instances(ec2, subnets["source"], 1, "demo"),
    }
    core = client.CoreV1Api(primary_cluster.api_client())
    created: dict[str, list[str]] = {}
    for side, instances in placed.items():
        for instance in instances:
            name = instance["PrivateDnsName"]
            labels = {"test": "vpc-move-steps"}
            if side == "member":
                labels["node-role.kubernetes.io/control-plane"] = ""
            core.create_node(
                client.V1Node(
                    metadata=client.V1ObjectMeta(name=name, labels=labels),
                    spec=client.V1NodeSpec(
                        provider_id=f"aws:///us-east-1a/{instance['InstanceId']}"
                    ),
                )
            )
            created.setdefault(side, []).append(name)
    try:
        yield World(
            source_vpc=vpcs["source"],
            target_vpc=vpcs["target"],
            source_nodes=sorted(created["source"]),
            target_nodes=sorted(created["target"]),
            foreign_node=created["foreign"][0],
            member_node=created["member"][0],
        )
    finally:
        for names in created.values():
            for name in names:
                core.delete_node(name)


@pytest.fixture
def context(world: World, moto, primary_cluster) -> HookContext:  # type: ignore[no-untyped-def]
    values = load_stack_file(REPO / "stacks" / "Pulumi.vpc-move-small.yaml")
    return HookContext(
        stack="test",
        scenario="vpc-move",
        phase="target-workers",
        clients=StaticClients(
            kube={"primary": KubeClients(primary_cluster.api_client())},
            aws=AwsClients(AwsAccess(region=moto.region, endpoint_url=moto.endpoint_url)),
        ),
        config=load_config(values),
        settings=RuntimeSettings(),
        outputs={"source_vpc_id": world.source_vpc, "target_vpc_id": world.target_vpc},
    )


def _tainted(context: HookContext, names: list[str]) -> list[str]:
    core = context.clients.kube("primary").core
    key = context.settings.retiring_taint.key
    return sorted(
        n for n in names if any(t.key == key for t in core.read_node(n).spec.taints or [])
    )


def test_old_vpc_workers_are_found_through_ec2(context: HookContext, world: World) -> None:
    """The cluster's workers per VPC; a control-plane member moves in its own phase."""
    assert nodes.workers_in_vpc(context, "source") == world.source_nodes
    assert nodes.workers_in_vpc(context, "target") == world.target_nodes


def test_taint_hook_taints_only_the_source_vpc_and_is_idempotent(
    context: HookContext, world: World
) -> None:
    everyone = world.source_nodes + world.target_nodes + [world.foreign_node, world.member_node]

    context = dataclasses.replace(context, dry_run=True)
    preview = nodes.taint_retiring_nodes(context)
    assert not preview.changed and "would" in preview.message
    assert _tainted(context, everyone) == []

    context = dataclasses.replace(context, dry_run=False)
    first = nodes.taint_retiring_nodes(context)
    assert first.changed
    assert _tainted(context, everyone) == world.source_nodes

    second = nodes.taint_retiring_nodes(context)
    assert not second.changed
    assert _tainted(context, everyone) == world.source_nodes

    undone = nodes.untaint_retiring_nodes(context)
    assert undone.changed and _tainted(context, everyone) == []


def test_missing_output_is_a_clear_precondition(context: HookContext) -> None:
    from automation.core.errors import PreconditionFailed

    context = dataclasses.replace(context, outputs={})
    with pytest.raises(PreconditionFailed, match="needs the stack output 'source_vpc_id'"):
        nodes.taint_retiring_nodes(context)


def _kwok_node(core, instance: dict, labels: dict[str, str]) -> str:  # type: ignore[no-untyped-def]
    from automation.sandbox.kwok import MANAGED_LABEL

    name = instance["PrivateDnsName"]
    core.create_node(
        client.V1Node(
            metadata=client.V1ObjectMeta(name=name, labels={MANAGED_LABEL: "true", **labels}),
            spec=client.V1NodeSpec(provider_id=f"aws:///us-east-1a/{instance['InstanceId']}"),
            status={
                "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
            },
        )
    )
    return name


def test_taint_then_drain_moves_a_service_to_the_new_vpc_without_downtime(
    moto,
    primary_cluster,
    namespace: str,  # type: ignore[no-untyped-def]
) -> None:
    """drain-workers as the runner runs it: EC2 finds the old nodes, pods move, probe watches."""
    from tests.support.waiting import eventually
    from tests.support.workloads import deployment, pdb, service

    ec2 = moto.client("ec2")
    subnets = {}
    vpcs = {}
    for side, cidr in (("source", "10.0.0.0/16"), ("target", "10.20.0.0/16")):
        vpcs[side] = ec2.create_vpc(CidrBlock=cidr)["Vpc"]["VpcId"]
        subnets[side] = ec2.create_subnet(
            VpcId=vpcs[side], CidrBlock=cidr.replace("/16", "/20"), AvailabilityZone="us-east-1a"
        )["Subnet"]["SubnetId"]
    api = primary_cluster.api_client()
    core = client.CoreV1Api(api)
    group = {"kubeshift.io/test-group": namespace}
    old = [
        _kwok_node(core, i, {**group, "kubeshift.io/generation": "original"})
        for i in _instances(ec2, subnets["source"], 2, "demo")
    ]
    created = list(old)
    try:
        apps = client.AppsV1Api(api)
        apps.create_namespaced_deployment(namespace, deployment("web", 4, node_selector=group))
        client.PolicyV1Api(api).create_namespaced_pod_disruption_budget(
            namespace, pdb("web", "web", min_available=3)
        )
        core.create_namespaced_service(namespace, service("web", "web"))

        def ready_on(nodes: list[str]) -> int:
            pods = core.list_namespaced_pod(namespace, label_selector="app=web").items
            return sum(
                1
                for p in pods
                if p.spec.node_name in nodes
                and p.metadata.deletion_timestamp is None
                and any(c.type == "Ready" and c.status == "True" for c in p.status.conditions or [])
            )

        eventually("4 web pods Ready on old nodes", lambda: ready_on(old), until=lambda n: n == 4)
        discovery = client.DiscoveryV1Api(api)

        def ready_endpoints() -> int:
            slices = discovery.list_namespaced_endpoint_slice(
                namespace, label_selector="kubernetes.io/service-name=web"
            ).items
            return sum(
                1
                for es in slices
                for e in es.endpoints or []
                if e.conditions and e.conditions.ready
            )

        # The probe's baseline: the EndpointSlice lags pod readiness, so wait for it too.
        eventually("4 ready endpoints", ready_endpoints, until=lambda n: n == 4)
        new = [
            _kwok_node(core, i, {**group, "kubeshift.io/generation": "mig"})
            for i in _instances(ec2, subnets["target"], 2, "demo")
        ]
        created += new

        values = load_stack_file(REPO / "stacks" / "Pulumi.vpc-move-small.yaml")
        ctx = HookContext(
            stack="test",
            scenario="vpc-move",
            phase="drain-workers",
            clients=StaticClients(
                kube={"primary": KubeClients(primary_cluster.api_client())},
                aws=AwsClients(AwsAccess(region=moto.region, endpoint_url=moto.endpoint_url)),
            ),
            config=load_config(values),
            settings=RuntimeSettings(probe_services=[f"{namespace}/web"]),
            outputs={"source_vpc_id": vpcs["source"], "target_vpc_id": vpcs["target"]},
        )
        assert nodes.taint_retiring_nodes(ctx).changed
        drained = nodes.drain_retiring_nodes(ctx)

        assert drained.changed
        availability = drained.details["availability"]
        assert "Availability" in drained.message
        assert availability["services"][f"{namespace}/web"]["min_ready"] >= 3
        assert nodes.no_pods_left_on_retiring_nodes(ctx).done
        eventually("4 web pods Ready on new nodes", lambda: ready_on(new), until=lambda n: n == 4)
        again = nodes.drain_retiring_nodes(ctx)
        assert not again.changed  # a resumed drain finds nothing left to do
    finally:
        for name in created:
            core.delete_node(name)


def test_new_workers_are_those_in_the_target_vpc_whatever_labels_they_carry(
    context: HookContext, world: World
) -> None:
    """An adopted kops cluster's new workers boot nodeup and carry their instance group's
    labels, not kubeshift's generation: the gate counts the workers in the target VPC."""
    status = nodes.target_workers_ready(context)

    expected = nodes.expected_target_workers(context)
    assert status.detail == f"2/{expected} nodes present"
    assert {f"node {name}: no Ready condition yet" for name in world.target_nodes} <= set(
        status.items
    )
    assert not [i for i in status.items for n in world.source_nodes if n in i]
    assert f"{expected - 2} more worker(s) in the target VPC" in status.items
