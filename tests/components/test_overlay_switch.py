"""overlay-switch: from the routes phase nodes disable source/dest check and a
route-managing identity exists; route tables are tagged for the cloud provider."""

from __future__ import annotations

import base64
import json

import pytest

from components.contract import policy
from components.contract.loading import load_config
from tests.components.conftest import by_type, rendered, stack_values

STACK = "overlay-switch-example"
PHASES = load_config(stack_values(STACK)).phase_ids


@pytest.mark.parametrize("phase", PHASES)
def test_source_dest_check_follows_the_phase(phase: str) -> None:
    rendering = rendered(STACK, phase)
    resources = rendering.resources
    routed = PHASES.index(phase) >= PHASES.index("routes")
    templates = [
        base64.b64decode(r.inputs["userData"]).decode()
        for r in by_type(resources, "aws:ec2/launchTemplate:LaunchTemplate")
        if r.parent == "data-use1-primary-workers"
    ]
    assert templates
    assert all(("--no-source-dest-check" in t) is routed for t in templates)
    # The route controller runs on the control plane: its role may write routes.
    inline = {
        r.inputs["name"]: json.loads(r.inputs["policy"])
        for r in by_type(resources, "aws:iam/rolePolicy:RolePolicy")
    }
    actions = {
        a for s in inline["control-plane-inline"]["Statement"] for a in s["Action"]
    }  # fmt: skip
    assert ("ec2:CreateRoute" in actions) is routed
    # the workers' boot script switches the check off: their role may, and a group
    # launches only once it does
    node_grants = [p for p in by_type(resources, "aws:iam/rolePolicy:RolePolicy")
                   if p.inputs["name"] == "node-inline"]  # fmt: skip
    assert len(node_grants) == int(routed)
    groups = [g for g in by_type(resources, "aws:autoscaling/group:Group")
              if g.parent == "data-use1-primary-workers"]  # fmt: skip
    assert groups
    for grant in node_grants:
        assert all(grant.name in g.options.get("dependsOn", []) for g in groups)
    assert not any("routes" in r.inputs["name"] for r in by_type(resources, "aws:iam/role:Role"))
    assert rendering.outputs["native_routing"] is routed
    assert policy.check_all(resources, "data-use1.k8s.local") == []


@pytest.mark.parametrize("phase", PHASES)
def test_from_routes_one_table_serves_every_node_subnet_and_alone_is_tagged(phase: str) -> None:
    """The AWS cloud-controller-manager writes pod routes to one table per cluster (it
    refuses several); before ``routes`` each subnet keeps its own table."""
    resources = rendered(STACK, phase).resources
    routed = PHASES.index(phase) >= PHASES.index("routes")
    tables = {t.name: t for t in by_type(resources, "aws:ec2/routeTable:RouteTable")}
    # Either tag counts for the cloud provider: the legacy KubernetesCluster too.
    tagged = sorted(
        n
        for n, t in tables.items()
        if t.inputs["tags"].get("kubernetes.io/cluster/data-use1.k8s.local") == "owned"
        or t.inputs["tags"].get("KubernetesCluster") == "data-use1.k8s.local"
    )
    shared = "data-use1-network-private-rt"
    assert tagged == ([shared] if routed else sorted(tables)), tagged
    private = [
        a for a in by_type(resources, "aws:ec2/routeTableAssociation:RouteTableAssociation")
        if "-private-rta-" in a.name
    ]  # fmt: skip
    assert private
    for association in private:
        own = association.name.replace("-private-rta-", "-private-rt-")
        expected = shared if routed else own
        assert association.inputs["routeTableId"] == tables[expected].id, association
