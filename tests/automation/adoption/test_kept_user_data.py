"""A live template's boot script is kept when it is not kubeshift's own."""

from __future__ import annotations

import base64
import gzip
from typing import Any

from automation.adoption.kept_user_data import kept_user_data
from automation.adoption.live import LiveCluster
from components.contract.userdata import node_script

NODEUP = "#!/bin/bash\nset -o errexit\necho '== nodeup node config starting =='\n"


def _encoded(script: str | bytes) -> str:
    return base64.b64encode(script.encode() if isinstance(script, str) else script).decode()


def _group(name: str, template: str, *, member: str = "") -> dict[str, Any]:
    tags = [{"Key": "kubernetes.io/cluster/shop", "Value": "owned"}]
    if member:
        tags += [{"Key": "k8s.io/role/master", "Value": "1"},
                 {"Key": "kubeshift.io/member", "Value": member}]  # fmt: skip
    else:
        tags += [{"Key": "kops.k8s.io/instancegroup", "Value": "nodes"}]
    return {
        "AutoScalingGroupName": name, "VPCZoneIdentifier": "subnet-a", "Tags": tags,
        "LaunchTemplate": {"LaunchTemplateId": template, "Version": "1"},
    }  # fmt: skip


def _live(worker_data: str, member_data: str) -> LiveCluster:
    return LiveCluster(
        name="shop",
        vpc={"VpcId": "vpc-1", "CidrBlock": "10.0.0.0/16"},
        subnets=[{"SubnetId": "subnet-a", "AvailabilityZone": "eu-west-1a"}],
        nat_gateways=1, internet_gateway=True,
        groups=[_group("nodes-eu-west-1a.shop.k8s.local", "lt-n"),
                _group("master-eu-west-1a-1.masters.shop.k8s.local", "lt-m", member="1")],
        templates={"lt-n": {"InstanceType": "m5.large", "UserData": worker_data},
                   "lt-m": {"InstanceType": "m5.large", "UserData": member_data}},
        template_names={"lt-n": "nodes-eu-west-1a.shop.k8s.local",
                        "lt-m": "master-eu-west-1a-1.masters.shop.k8s.local"},
        volumes=[], interfaces=[], balancers={},
    )  # fmt: skip


def test_each_script_another_tool_wrote_is_kept_under_kubeshifts_template_name() -> None:
    kept = kept_user_data(_live(_encoded(NODEUP), _encoded(NODEUP + "# master\n")))
    assert kept.scripts == {
        "shop-control-plane-1": NODEUP + "# master\n",
        "shop-workers-nodes-on-demand": NODEUP,
    }
    assert kept.not_text == []


def test_kubeshifts_own_script_is_not_kept() -> None:
    own = node_script(cluster_name="shop", api_endpoint="https://api.shop", labels={}, taints=[])
    kept = kept_user_data(_live(_encoded(own), ""))
    assert kept.scripts == {} and kept.not_text == []


def test_compressed_user_data_is_named_not_kept() -> None:
    kept = kept_user_data(_live(_encoded(gzip.compress(NODEUP.encode())), _encoded(NODEUP)))
    assert kept.scripts == {"shop-control-plane-1": NODEUP}
    assert kept.not_text == ["nodes-eu-west-1a.shop.k8s.local"]


def test_a_kept_script_that_seems_to_carry_a_credential_is_named_with_its_lines() -> None:
    joins = NODEUP + "kubeadm join api:6443 --token abcdef.0123456789abcdef\n"
    kept = kept_user_data(_live(_encoded(joins), _encoded(NODEUP)))
    assert kept.scripts["shop-workers-nodes-on-demand"] == joins  # kept whole: nodes need it
    assert kept.credentials == {"nodes-eu-west-1a.shop.k8s.local": [4]}
