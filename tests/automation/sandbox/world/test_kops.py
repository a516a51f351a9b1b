"""kops's names for the sandbox's foreign-built cluster: valid for AWS, one per resource."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from automation.render import render_program
from automation.sandbox.world.kops import as_kops_makes, domain, kops_names
from components.config import load_stack_file
from components.naming import NameKind, check_name

LOCAL = Path(__file__).resolve().parents[4] / "stacks" / "Pulumi.local.yaml"
KINDS = {kind.value.key: kind for kind in NameKind}


def _names(values: dict[str, Any]) -> dict[str, str]:
    cluster = values["kubeshift:cluster"]["name"]
    rendered = render_program(values, "baseline").resources
    return kops_names(cluster, [(r.type, r.inputs) for r in rendered])


@pytest.fixture(scope="module")
def local() -> dict[str, Any]:
    return load_stack_file(LOCAL)


def test_every_named_resource_gets_a_kops_name_aws_accepts(local: dict[str, Any]) -> None:
    names = _names(local)
    kinds = Counter(key.split(":", 1)[0] for key in names)
    assert kinds == {
        "autoscaling-group": 5, "launch-template": 5, "security-group": 5,
        "iam-role": 2, "instance-profile": 2, "load-balancer": 2, "target-group": 3,
        "tag": 3,  # the members' etcd volumes, as etcd-manager names them
    }  # fmt: skip
    for key, name in names.items():
        check_name(name, KINDS[key.split(":", 1)[0]])  # raises on a name AWS refuses
    per_kind = Counter((key.split(":", 1)[0], name) for key, name in names.items())
    # kops gives a profile its role's name
    roles_share = {"iam-role", "instance-profile"}
    assert all(n == 1 or kind in roles_share for (kind, _), n in per_kind.items()), per_kind
    assert sum(name == f"nodes.{domain('local-demo')}" for name in names.values()) == 3
    masters = f"masters.{domain('local-demo')}"
    assert names["iam-role:local-demo-control-plane-role"] == masters
    assert names["tag:local-demo-etcd-2"] == f"2.etcd-main.{domain('local-demo')}"


def test_a_member_is_an_instance_group_named_after_its_zone(local: dict[str, Any]) -> None:
    names = _names(local)
    groups = {k: v for k, v in names.items() if k.startswith("autoscaling-group:")}
    members = sorted(v for k, v in groups.items() if "control-plane" in k)
    assert members == [
        "master-us-west-2a-1.masters.local-demo.k8s.local",
        "master-us-west-2a-3.masters.local-demo.k8s.local",
        "master-us-west-2b-2.masters.local-demo.k8s.local",
    ]
    # its launch template is named as its group, as kops names one template per group
    for key, name in groups.items():
        template = names.get(key.replace("autoscaling-group:", "launch-template:"))
        assert template in (None, name)


def test_load_balancer_names_stay_within_32_characters_for_a_long_cluster_name(
    local: dict[str, Any],
) -> None:
    values = {**local, "kubeshift:cluster": {**local["kubeshift:cluster"]}}
    values["kubeshift:cluster"]["name"] = "payments-platform-production-eu-central"
    names = _names(values)
    balancers = {k: v for k, v in names.items() if k.startswith(("load-balancer", "target-group"))}
    assert len(balancers) == 5
    assert all(len(name) <= 32 for name in balancers.values()), balancers
    assert len(set(balancers.values())) == 5  # the hash tells the trimmed names apart


def _template(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "metadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 2},
        "blockDeviceMappings": [{"deviceName": "/dev/xvda",
                                 "ebs": {"volumeSize": 100, "volumeType": "gp3"}}],
    }  # fmt: skip


def test_a_node_template_has_kops_root_volume_and_hop_limit_and_a_members_is_left() -> None:
    token = "aws:ec2/launchTemplate:LaunchTemplate"
    node = as_kops_makes(token, _template("nodes.c.k8s.local"))
    assert node["metadataOptions"] == {"httpTokens": "required", "httpPutResponseHopLimit": 1}
    assert node["blockDeviceMappings"] == [
        {"deviceName": "/dev/xvda", "ebs": {"volumeSize": 128, "volumeType": "gp3"}}
    ]
    member = as_kops_makes(token, _template("master-a-1.masters.c.k8s.local"))
    assert member["metadataOptions"]["httpPutResponseHopLimit"] == 2
    assert member["blockDeviceMappings"][0]["ebs"]["volumeSize"] == 100
