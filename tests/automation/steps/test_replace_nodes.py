"""Replacing a broken node: drained, terminated through its group, a fresh node Ready.

moto's Auto Scaling group launches the replacement; the node bridge plays the cloud
controller and the kubelet (the old Node goes when its instance stops, the fresh
instance registers), running in the background as they would.
"""

from __future__ import annotations

import dataclasses
import time

import pytest
from kubernetes.client import AppsV1Api, PolicyV1Api

from automation.aws.clients import AwsAccess, AwsClients
from automation.config.clients import StaticClients
from automation.config.settings import RuntimeSettings
from automation.core.errors import GateTimeoutError, PreconditionFailed
from automation.kube.clients import KubeClients
from automation.model.context import HookContext
from automation.steps.replace_nodes import Replacement, replace_node, replace_node_hooks
from components.contract import userdata
from components.contract.tags import cluster_tags
from tests.support.ec2_world import World
from tests.support.moto_fixtures import MotoServer
from tests.support.waiting import eventually
from tests.support.workloads import deployment, pdb

QUICK = Replacement(timeout=90, interval=0.3)


@pytest.fixture
def ctx(kube: KubeClients, moto: MotoServer) -> HookContext:
    aws = AwsClients(AwsAccess(region=moto.region))
    return HookContext(
        stack="t", scenario="cni-swap", phase="cni-swap",
        clients=StaticClients(kube={"primary": kube}, aws=aws), settings=RuntimeSettings(),
    )  # fmt: skip


def _ready(world: World, count: int) -> dict[str, str]:
    """Ready bridged node name -> its instance id, once there are ``count``."""

    def ready() -> dict[str, str]:
        return {
            name: node.spec.provider_id.rsplit("/", 1)[-1]
            for name, node in world.nodes().items()
            if any(c.type == "Ready" and c.status == "True" for c in node.status.conditions or [])
        }

    return eventually(f"{count} Ready nodes", ready, until=lambda n: len(n) == count, timeout=60)


def _worker_group(world: World, name: str, size: int) -> None:
    """A group of ``size`` workers booting kubeshift's node script, pool ``name``."""
    script = userdata.node_script(
        cluster_name=world.cluster, api_endpoint="https://api.example.internal",
        labels={userdata.POOL_LABEL: name}, taints=[],
    )  # fmt: skip
    template = world.launch_template(name, script)
    world.group(
        name, size, cluster_tags(world.cluster),
        LaunchTemplate={"LaunchTemplateId": template, "Version": "1"},
    )  # fmt: skip


@pytest.mark.moto
@pytest.mark.controlplane
def test_a_named_node_is_replaced_through_its_group_once(bridged: World, ctx: HookContext) -> None:
    world = bridged
    _worker_group(world, "workers", 2)
    before = _ready(world, 2)
    victim = sorted(before)[0]

    assert (
        "would be drained and terminated"
        in replace_node(dataclasses.replace(ctx, dry_run=True), victim, QUICK).message
    )
    result = replace_node(ctx, victim, QUICK)

    assert result.changed
    old_instance = before[victim]
    assert result.details["instance"] == old_instance
    assert result.details["group"] == "workers"
    after = _ready(world, 2)
    assert victim not in after and old_instance not in after.values()
    (fresh,) = set(after) - set(before)
    assert result.details["fresh_nodes"] == [fresh]
    state = world.ec2.describe_instances(InstanceIds=[old_instance])["Reservations"][0]
    assert state["Instances"][0]["State"]["Name"] in {"shutting-down", "terminated"}

    # Resumed after a crash: the Node is gone and the instance terminated — nothing is
    # terminated again, the wait finds the group whole.
    again = replace_node(ctx, victim, QUICK)
    assert not again.changed and "found already terminated" in again.message
    assert _ready(world, 2) == after


@pytest.mark.moto
@pytest.mark.controlplane
def test_a_drain_a_budget_never_allows_ends_at_the_timeout_and_terminates_nothing(
    bridged: World, ctx: HookContext, namespace: str
) -> None:
    """`replace-nodes --timeout` bounds the drain as well as the wait for the fresh node:
    the stack's drain deadline (half an hour) would otherwise hold the command."""
    world = bridged
    _worker_group(world, "held", 1)
    ((victim, instance),) = _ready(world, 1).items()
    AppsV1Api(world.api).create_namespaced_deployment(
        namespace, deployment("held", 1, node_selector={"kubernetes.io/hostname": victim})
    )
    PolicyV1Api(world.api).create_namespaced_pod_disruption_budget(
        namespace, pdb("held", "held", min_available=1)
    )
    eventually(
        "the held pod Running on the victim",
        lambda: world.core.list_namespaced_pod(namespace).items,
        until=lambda pods: len(pods) == 1 and pods[0].status.phase == "Running",
        timeout=60,
    )

    started = time.monotonic()
    with pytest.raises(GateTimeoutError, match="held"):
        replace_node(ctx, victim, Replacement(timeout=4, interval=0.3))
    assert time.monotonic() - started < 60
    assert [i["InstanceId"] for i in world.instances("running")] == [instance]


@pytest.mark.moto
@pytest.mark.controlplane
def test_a_node_outside_any_group_is_refused(bridged: World, ctx: HookContext) -> None:
    world = bridged
    world.run(1, cluster_tags(world.cluster))
    (lone,) = _ready(world, 1)
    with pytest.raises(PreconditionFailed, match="belongs to no Auto Scaling group"):
        replace_node(ctx, lone, QUICK)
    with pytest.raises(PreconditionFailed, match="is not in the cluster"):
        replace_node(ctx, "ip-10-9-9-9.ec2.internal", QUICK)
    assert len(world.nodes()) == 1


def test_one_step_per_node_named_once() -> None:
    hooks = replace_node_hooks(["b", "a", "b"], QUICK)
    assert [h.name for h in hooks] == ["replace-node b", "replace-node a"]
    assert all(h.destructive and h.retries == 0 for h in hooks)
