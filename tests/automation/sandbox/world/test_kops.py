"""kops's names, grants, rules and boot script, as the sandbox's world gives them."""

from __future__ import annotations

import json

from automation.sandbox.world.kops import (
    KOPS_RULES,
    domain,
    kops_policy,
    load_balancer_name,
    nodeup_script,
    rules_for,
)
from components.contract.naming import NameKind, check_name


def test_load_balancer_names_stay_within_32_characters_and_apart_for_a_long_cluster() -> None:
    cluster = "payments-platform-production-eu-central"
    dns = domain(cluster)
    names = {
        load_balancer_name(prefix, cluster, seed)
        for prefix, seed in (
            ("api", f"api.{dns}"), ("ingress", f"ingress.{dns}"),
            ("tcp", f"api-443.{dns}"), ("tcp", f"ingress-80.{dns}"), ("tcp", f"ingress-443.{dns}"),
        )
    }  # fmt: skip
    assert len(names) == 5  # the hash tells the trimmed names apart
    for name in names:
        assert len(name) <= 32
        check_name(name, NameKind.LOAD_BALANCER)  # raises on a name AWS refuses


def test_the_members_role_may_attach_only_the_clusters_volumes_and_nodes_only_read() -> None:
    name, document = kops_policy("masters", "c.example.com")
    assert name == "masters.c.example.com"
    statements = json.loads(document)["Statement"]
    attach = next(s for s in statements if "ec2:AttachVolume" in s["Action"])
    owned = {"aws:ResourceTag/KubernetesCluster": "c.example.com"}  # kops's tag: its DNS name
    assert attach["Condition"] == {"StringEquals": owned}
    _, nodes = kops_policy("nodes", "c.example.com")
    actions = {a for s in json.loads(nodes)["Statement"] for a in s["Action"]}
    assert not {a for a in actions if a.split(":")[1].startswith(("Attach", "Create", "Set"))}


def test_rules_are_named_as_kops_names_them_and_keep_the_nodes_off_etcds_peers() -> None:
    dns = domain("c")
    names = {rule.name(dns) for rule in KOPS_RULES}
    assert f"from-0.0.0.0/0-ingress-tcp-22to22-masters.{dns}" in names
    assert f"from-masters.{dns}-egress-all-0to0-::/0" in names
    from_nodes = [r for r in KOPS_RULES if r.group == "masters" and r.peer == "nodes"]
    peers = {2380, 2381, 4001, 4002}  # etcd's peer ports, main and events
    assert from_nodes and all(
        r.protocol != "tcp" or not set(range(r.from_port, r.to_port + 1)) & peers
        for r in from_nodes
    )
    assert [r.protocol for r in set(rules_for(True)) - set(KOPS_RULES)] == ["4"]  # IP-in-IP


def test_nodeup_reads_its_instance_group_from_the_state_store() -> None:
    script = nodeup_script("general-spot", domain("c"), "Node", config_hash="h")
    assert script.startswith("#!/bin/bash\nset -o errexit")
    assert "InstanceGroupName: general-spot\nInstanceGroupRole: Node" in script
    assert "ConfigBase: s3://kops-state-store/c.k8s.local" in script
