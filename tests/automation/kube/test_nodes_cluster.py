"""Taint and cordon hooks against a real control plane: idempotent, dry-run, scheduling effect."""

from __future__ import annotations

import pytest
from kubernetes.client import AppsV1Api, CoreV1Api
from pydantic import ValidationError

from automation.core.errors import UserError
from automation.kube.nodes import (
    NodeSelection,
    Taint,
    cordon_nodes,
    taint_nodes,
    uncordon_nodes,
    untaint_nodes,
)
from tests.automation.kube.conftest import Fleet

pytestmark = pytest.mark.controlplane

MIGRATION = Taint(key="migration", value="migration", effect="NoSchedule")


def taints(fleet: Fleet, node: str) -> list[tuple[str, str | None, str]]:
    """The node's migration taints (the node controller adds and removes its own)."""
    spec = CoreV1Api(fleet.kube.api_client).read_node(node).spec
    return [(t.key, t.value, t.effect) for t in spec.taints or [] if t.key == MIGRATION.key]


def test_taint_is_idempotent_and_dry_run_changes_nothing(fleet: Fleet) -> None:
    old = fleet.pool("old", 2)
    selection = NodeSelection(label_selector=old.selector)

    dry = taint_nodes(fleet.kube.core, selection, MIGRATION, dry_run=True)
    assert dry.changed == sorted(old.node_names)
    assert dry.message.startswith("would taint migration=migration:NoSchedule 2 node(s)")
    assert all(taints(fleet, n) == [] for n in old.node_names)

    first = taint_nodes(fleet.kube.core, selection, MIGRATION)
    second = taint_nodes(fleet.kube.core, selection, MIGRATION)
    assert first.changed == sorted(old.node_names) and not first.unchanged
    assert second.unchanged == sorted(old.node_names) and not second.changed
    assert all(
        taints(fleet, n) == [("migration", "migration", "NoSchedule")] for n in old.node_names
    )

    removed = untaint_nodes(fleet.kube.core, selection, MIGRATION)
    assert removed.changed == sorted(old.node_names)
    assert all(taints(fleet, n) == [] for n in old.node_names)


def test_explicit_names_report_missing_nodes(fleet: Fleet) -> None:
    old = fleet.pool("named", 2)
    ghost = "ip-10-255-255-1.ec2.internal"
    result = cordon_nodes(fleet.kube.core, NodeSelection(names=[old.node_names[0], ghost]))
    assert result.changed == [old.node_names[0]]
    assert result.missing == [ghost]
    assert "not found: " + ghost in result.message
    core = CoreV1Api(fleet.kube.api_client)
    assert core.read_node(old.node_names[0]).spec.unschedulable
    assert not core.read_node(old.node_names[1]).spec.unschedulable
    assert uncordon_nodes(
        fleet.kube.core, NodeSelection(names=[ghost, *old.node_names])
    ).changed == [old.node_names[0]]


def test_empty_selection_is_refused(fleet: Fleet) -> None:
    with pytest.raises(ValidationError, match="needs names or a label selector"):
        NodeSelection()
    with pytest.raises(UserError, match=r"No node matches selector 'kubeshift\.io/pool=nope'"):
        taint_nodes(
            fleet.kube.core, NodeSelection(label_selector="kubeshift.io/pool=nope"), MIGRATION
        )


def test_taint_keeps_rescheduled_pods_off_old_nodes(fleet: Fleet) -> None:
    old = fleet.pool("tainted", 2)
    fleet.deploy("web", 2)
    fleet.wait_ready("web", 2)
    new = fleet.pool("untainted", 2)
    taint_nodes(fleet.kube.core, NodeSelection(names=list(old.node_names)), MIGRATION)

    AppsV1Api(fleet.kube.api_client).patch_namespaced_deployment_scale(
        "web",
        fleet.namespace,
        {"spec": {"replicas": 8}},
        _content_type="application/merge-patch+json",
    )
    pods = fleet.wait_ready("web", 8)
    added = [p for p in pods if p.spec.node_name not in old.node_names]
    assert len(added) == 6
    assert fleet.nodes_of(added) <= set(new.node_names)
