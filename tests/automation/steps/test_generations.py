"""cni-swap's new generation is labelled by its Auto Scaling groups, whatever labels its
boot script registered (an adopted kops cluster's nodes boot nodeup, which registers its
instance group's labels, never kubeshift's generation)."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import pytest

from automation.aws.clients import AwsAccess, AwsClients
from automation.config.clients import StaticClients
from automation.config.settings import RuntimeSettings
from automation.core.errors import PreconditionFailed
from automation.kube.clients import KubeClients
from automation.model.context import HookContext
from automation.steps.generations import label_new_generation
from components.contract import userdata
from components.contract.loading import load_config, load_stack_file
from components.contract.tags import cluster_tags
from tests.support.ec2_world import World
from tests.support.moto_fixtures import MotoServer
from tests.support.nodes import unique_name
from tests.support.waiting import eventually

pytestmark = [pytest.mark.controlplane, pytest.mark.moto]

REPO = Path(__file__).resolve().parents[3]
GROUP_LABEL = {"kops.k8s.io/instancegroup": "nodes"}


def _context(world: World, moto: MotoServer, kube: KubeClients, groups: list[str]) -> HookContext:
    """cni-swap at its phase, one on-demand group of two per generation."""
    values = copy.deepcopy(load_stack_file(REPO / "stacks" / "Pulumi.cni-swap-example.yaml"))
    pool = values["kubeshift:cluster"]["worker_pools"][0]
    pool.update(capacity_types=["on-demand"], min_size=1, desired_size=2, group_per="capacity")
    return HookContext(
        stack="t", scenario="cni-swap", phase="cni-swap",
        clients=StaticClients(
            kube={"primary": kube},
            aws=AwsClients(AwsAccess(region=moto.region, endpoint_url=moto.endpoint_url)),
        ),
        config=load_config(values), settings=RuntimeSettings(),
        outputs={"primary": {"worker_asg_names": {"original": [], "cni": groups}}},
    )  # fmt: skip


def _generation(world: World, name: str) -> str | None:
    labels = world.core.read_node(name).metadata.labels or {}
    return labels.get(userdata.GENERATION_LABEL)


def test_the_new_generations_nodes_are_labelled_by_their_groups(
    bridged: World, moto: MotoServer, kube: KubeClients
) -> None:
    world = bridged
    script = userdata.node_script(
        cluster_name=world.cluster, api_endpoint="https://api.example.internal",
        labels=GROUP_LABEL, taints=[],
    )  # fmt: skip
    [old] = world.run(1, cluster_tags(world.cluster), UserData=script)
    template = world.launch_template(unique_name("cni"), script)
    group = unique_name("cni")
    launch = {"LaunchTemplate": {"LaunchTemplateId": template, "Version": "1"}}
    world.group(group, 2, cluster_tags(world.cluster), **launch)
    nodes = eventually("3 nodes", world.nodes, until=lambda n: len(n) == 3, timeout=60)
    by_instance = {n.spec.provider_id.rsplit("/", 1)[-1]: name for name, n in nodes.items()}
    new = sorted(name for iid, name in by_instance.items() if iid != old)
    ctx = _context(world, moto, kube, [group])

    preview = label_new_generation(dataclasses.replace(ctx, dry_run=True))
    assert not preview.changed and preview.message.startswith("would label 2 node(s)")
    assert [_generation(world, n) for n in new] == [None, None]

    done = label_new_generation(ctx)

    assert done.changed and done.message == "labelled 2 of 2 node(s) kubeshift.io/generation=cni"
    assert [_generation(world, n) for n in new] == ["cni", "cni"]
    assert _generation(world, by_instance[old]) is None  # the old generation is left alone
    again = label_new_generation(ctx)
    assert (
        not again.changed and again.message == "labelled 0 of 2 node(s) kubeshift.io/generation=cni"
    )


def test_no_group_of_the_new_generation_is_one_sentence(
    world: World, moto: MotoServer, kube: KubeClients
) -> None:
    with pytest.raises(PreconditionFailed, match="exports no Auto Scaling group of generation"):
        label_new_generation(_context(world, moto, kube, []))
