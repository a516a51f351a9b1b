"""Node lookup by cluster tag and VPC, against moto; name matching as a table."""

from __future__ import annotations

import pytest

from automation.aws.clients import AwsClients
from automation.aws.nodes import (
    ClusterInstance,
    cluster_node_names,
    find_cluster_instances,
    instance_id_from_provider_id,
    match_nodes,
)
from tests.support.moto_world import make_network, run_instances


@pytest.mark.moto
def test_finds_running_instances_of_both_tag_styles_in_one_vpc(aws: AwsClients) -> None:
    old = make_network(aws.ec2, "10.0.0.0/16")
    new = make_network(aws.ec2, "10.1.0.0/16")
    legacy = run_instances(aws.ec2, old, 2, {"KubernetesCluster": "prod"})
    current = run_instances(aws.ec2, old, 1, {"kubernetes.io/cluster/prod": "owned"})
    both = run_instances(
        aws.ec2, old, 1, {"KubernetesCluster": "prod", "kubernetes.io/cluster/prod": "shared"}
    )
    run_instances(aws.ec2, old, 1, {"KubernetesCluster": "staging"})  # other cluster
    run_instances(aws.ec2, new, 2, {"KubernetesCluster": "prod"})  # other VPC
    stopped = run_instances(aws.ec2, old, 1, {"KubernetesCluster": "prod"})
    aws.ec2.stop_instances(InstanceIds=[stopped[0]["InstanceId"]])

    found = find_cluster_instances(aws.ec2, cluster="prod", vpc_id=old.vpc_id)

    expected = sorted(i["InstanceId"] for i in legacy + current + both)
    assert [i.instance_id for i in found] == expected
    assert {i.vpc_id for i in found} == {old.vpc_id}
    first = found[0]
    assert first.provider_id == f"aws:///{first.availability_zone}/{first.instance_id}"
    assert first.network_interface_ids and first.network_interface_ids[0].startswith("eni-")


@pytest.mark.moto
def test_node_names_default_to_private_dns_names(aws: AwsClients) -> None:
    net = make_network(aws.ec2)
    instances = run_instances(aws.ec2, net, 2, {"KubernetesCluster": "prod"})
    match = cluster_node_names(aws.ec2, cluster="prod", vpc_id=net.vpc_id)
    assert match.names == tuple(sorted(i["PrivateDnsName"] for i in instances))
    assert match.unmatched == ()


@pytest.mark.moto
def test_node_names_follow_provider_ids_when_nodes_are_given(aws: AwsClients) -> None:
    net = make_network(aws.ec2)
    a, b = run_instances(aws.ec2, net, 2, {"KubernetesCluster": "prod"})
    nodes = {
        "worker-a": f"aws:///{a['Placement']['AvailabilityZone']}/{a['InstanceId']}",
        "unrelated": "aws:///eu-west-1a/i-0000000000",
    }
    match = cluster_node_names(aws.ec2, cluster="prod", vpc_id=net.vpc_id, nodes=nodes)
    assert match.names == ("worker-a",)
    assert [i.instance_id for i in match.unmatched] == [b["InstanceId"]]


def _instance(iid: str, dns: str) -> ClusterInstance:
    return ClusterInstance(iid, "eu-west-1a", "vpc-1", "subnet-1", dns, "10.0.1.5")


@pytest.mark.parametrize(
    ("nodes", "expected"),
    [
        ({"n1": "aws:///eu-west-1a/i-1"}, {"n1": "i-1"}),
        ({"ip-10-0-1-5.ec2.internal": None}, {"ip-10-0-1-5.ec2.internal": "i-1"}),
        ({"ip-10-0-1-5": ""}, {"ip-10-0-1-5": "i-1"}),
        ({"n1": "gce://p/z/i-1"}, {}),
        ({}, {}),
    ],
    ids=["provider-id", "full-dns-name", "short-dns-name", "other-cloud", "no-nodes"],
)
def test_match_nodes(nodes: dict[str, str | None], expected: dict[str, str]) -> None:
    match = match_nodes([_instance("i-1", "ip-10-0-1-5.ec2.internal")], nodes)
    assert {name: i.instance_id for name, i in match.nodes.items()} == expected
    assert len(match.unmatched) == (0 if expected else 1)


@pytest.mark.parametrize(
    ("provider_id", "expected"),
    [
        ("aws:///eu-west-1a/i-0abc", "i-0abc"),
        ("aws:///eu-west-1a/i-0abc/", "i-0abc"),
        ("aws://eu-west-1a/i-0abc", "i-0abc"),
        ("kwok://node-1", None),
        (None, None),
    ],
    ids=["canonical", "trailing-slash", "two-slashes", "kwok", "none"],
)
def test_instance_id_from_provider_id(provider_id: str | None, expected: str | None) -> None:
    assert instance_id_from_provider_id(provider_id) == expected
