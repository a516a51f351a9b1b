"""Which live tags a proposed stack keeps: those the program does not declare, and the
``Name`` another tool gave a resource."""

from __future__ import annotations

from automation.adoption.live_tags import declared_tags, tags_to_keep


def test_only_the_tags_the_program_does_not_declare_are_kept() -> None:
    live = {
        "vpc": {"Name": "shop.k8s.local", "KubernetesCluster": "shop", "SubnetType": "Public"},
        "group": {"kops.k8s.io/instancegroup": "nodes-a", "Name": "nodes-a"},
        "role": {"Name": "nodes"},
        "gone": {"x": "y"},  # not declared at all: not the program's to keep
    }
    declared = {
        "vpc": declared_tags({"Name": "shop-source", "KubernetesCluster": "shop-x"}),
        "group": declared_tags([{"key": "Name", "value": "nodes-a", "propagateAtLaunch": True}]),
        "role": declared_tags(None),
    }
    assert tags_to_keep(live, declared) == {
        # a declared key keeps kubeshift's value, but for the Name another tool gave it
        "vpc": {"Name": "shop.k8s.local", "SubnetType": "Public"},
        "group": {"kops.k8s.io/instancegroup": "nodes-a"},
        "role": {"Name": "nodes"},  # the program declares no tags for it: all are kept
    }
