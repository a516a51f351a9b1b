"""Taking cni-swap back on a real control plane: the old CNI from the operator's manifest,
the new one out, the old generation schedulable, the new one drained."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes.client import AppsV1Api, CoreV1Api

from automation.config.clients import StaticClients
from automation.config.mirror_settings import GENERATION_LABEL
from automation.config.settings import RuntimeSettings
from automation.core.errors import PreconditionFailed
from automation.kube.drain.filters import DrainOptions
from automation.kube.drain.run import DrainLimits
from automation.model.context import HookContext
from automation.sandbox.controlplane import Cluster
from automation.steps import mirror_cni_back, mirror_copy
from automation.steps.mirror import parse_settings
from components.contract.scenarios import cni_swap as ids
from tests.support.kube_fixtures import clients_of
from tests.support.nodes import NodePools, NodePoolSpec
from tests.support.waiting import eventually
from tests.support.workloads import cni_daemonset, deployment, label_selector

pytestmark = pytest.mark.controlplane


def test_the_swap_goes_back_to_the_old_cni_on_the_old_generation(
    primary_cluster: Cluster, namespace: str, node_pools: NodePools, tmp_path: Path
) -> None:
    kube = clients_of(primary_cluster)
    core, apps = CoreV1Api(kube.api_client), AppsV1Api(kube.api_client)
    group = {"kubeshift.io/test-group": namespace}
    old_labels = {**group, GENERATION_LABEL: "original"}
    new_labels = {**group, GENERATION_LABEL: "cni"}
    # the primary as cni-swap left it: Calico on both generations, Weave gone, the old
    # generation cordoned, the workload on the new generation
    old = node_pools.create(NodePoolSpec("back-original", count=2, labels=old_labels))
    new = node_pools.create(NodePoolSpec("back-cni", count=2, labels=new_labels))
    for name in old.node_names:
        core.patch_node(name, {"spec": {"unschedulable": True}})
    apps.create_namespaced_daemon_set(
        namespace, cni_daemonset("calico-node", {"k8s-app": "calico-node"}, group)
    )
    apps.create_namespaced_deployment(namespace, deployment("web", 2, node_selector=group))

    manifest = tmp_path / "weave.yaml"
    weave = cni_daemonset("weave-net", {"name": "weave-net"}, group)
    manifest.write_text(
        yaml.safe_dump({**weave, "metadata": {**weave["metadata"], "namespace": namespace}})
    )
    mirror = {
        "namespaces": [namespace],
        "old_cni": {"namespace": namespace, "name": "weave-net"},
        "new_cni": {"namespace": namespace, "name": "calico-node"},
        "new_nodes_selector": label_selector(new_labels),
        "old_nodes_selector": label_selector(old_labels),
    }

    def ctx(dry_run: bool = False, **more: Any) -> HookContext:
        return HookContext(
            stack="test",
            scenario=ids.ID,
            phase="back-from-cni-swap",
            clients=StaticClients(kube={"primary": kube}),
            settings=RuntimeSettings(
                mirror=parse_settings({**mirror, **more}),
                drain=DrainOptions(),
                drain_limits=DrainLimits(timeout=120),
            ),
            dry_run=dry_run,
        )

    def web_nodes() -> list[str | None]:
        """Where each live web pod runs (None: not scheduled yet)."""
        pods = core.list_namespaced_pod(namespace, label_selector="app=web").items
        return [p.spec.node_name for p in pods if p.metadata.deletion_timestamp is None]

    def both_scheduled(nodes: list[str | None]) -> bool:
        return len(nodes) == 2 and None not in nodes

    eventually("web scheduled on the new generation", web_nodes, until=both_scheduled, timeout=60)
    assert set(web_nodes()) <= set(new.node_names)

    # without the old CNI's manifest there is no way back: one sentence, nothing changed
    with pytest.raises(PreconditionFailed, match="without the old CNI's manifest"):
        mirror_cni_back.reinstall_old_cni(ctx())
    # nor is the new CNI removed while the old one is not back
    with pytest.raises(PreconditionFailed, match="reinstall the old CNI"):
        mirror_cni_back.remove_new_cni(ctx(old_cni_manifest=str(manifest)))
    assert not mirror_cni_back.new_cni_gone(ctx()).done

    back = ctx(old_cni_manifest=str(manifest))
    assert not mirror_cni_back.reinstall_old_cni(ctx(True, old_cni_manifest=str(manifest))).changed
    assert mirror_cni_back.reinstall_old_cni(back).changed
    assert not mirror_cni_back.reinstall_old_cni(back).changed  # idempotent
    assert mirror_cni_back.remove_new_cni(back).changed
    assert not mirror_cni_back.remove_new_cni(back).changed
    eventually(
        "Calico gone", lambda: mirror_cni_back.new_cni_gone(back), until=lambda p: p.done,
        timeout=90,
    )  # fmt: skip
    eventually(
        "Weave on every node",
        lambda: mirror_cni_back.old_cni_on_every_node(back),
        until=lambda p: p.done,
        timeout=90,
    )

    uncordoned = mirror_cni_back.uncordon_old_generation(back)
    assert uncordoned.changed and "uncordon 2 node(s)" in uncordoned.message, uncordoned.message
    assert not mirror_cni_back.uncordon_old_generation(back).changed
    assert not any(core.read_node(n).spec.unschedulable for n in old.node_names)

    assert not mirror_cni_back.drain_new_generation(
        ctx(True, old_cni_manifest=str(manifest))
    ).changed
    drained = mirror_cni_back.drain_new_generation(back)
    assert drained.changed and "evicted 2 pod(s)" in drained.message, drained.message
    assert all(core.read_node(n).spec.unschedulable for n in new.node_names)
    eventually(
        "web available on the old generation",
        lambda: mirror_copy.primary_workloads_available(back),
        until=lambda p: p.done,
        timeout=90,
    )
    assert set(web_nodes()) <= set(old.node_names)
