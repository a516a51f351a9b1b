"""Stand-ins for cni-swap's dependency security groups, made in moto once the cluster runs."""

from __future__ import annotations

import pytest

from automation.sandbox.dependencies import DATABASE_PORT, stand_in
from components.contract.tags import cluster_tags
from tests.support.moto_fixtures import MotoServer
from tests.support.moto_world import make_network, run_instances
from tests.support.nodes import unique_name


@pytest.mark.moto
def test_a_stand_in_admits_the_workers_as_the_real_group_would(moto: MotoServer) -> None:
    ec2 = moto.client("ec2")
    cluster = unique_name("deps")
    net = make_network(ec2, "10.71.0.0/16")
    tagged = [{"ResourceType": "security-group",
               "Tags": [{"Key": f"kubernetes.io/cluster/{cluster}", "Value": "owned"}]}]
    node_group = ec2.create_security_group(
        GroupName=f"{cluster}-node", Description="workers", VpcId=net.vpc_id,
        TagSpecifications=tagged,
    )["GroupId"]  # fmt: skip
    shared = ec2.create_security_group(
        GroupName=f"{cluster}-shared", Description="every instance", VpcId=net.vpc_id
    )["GroupId"]
    [worker] = run_instances(ec2, net, 1, cluster_tags(cluster))
    ec2.modify_instance_attribute(InstanceId=worker["InstanceId"], Groups=[node_group, shared])
    run_instances(ec2, net, 1, {**cluster_tags(cluster), "kubeshift.io/member": "1"})
    declared = ["sg-0123456789abcdef0"]

    [made] = stand_in(ec2, cluster, declared)

    assert made.declared == declared[0] and made.group_id != declared[0]
    [group] = ec2.describe_security_groups(GroupIds=[made.group_id])["SecurityGroups"]
    assert group["VpcId"] == net.vpc_id
    [rule] = group["IpPermissions"]
    assert (rule["FromPort"], rule["ToPort"]) == (DATABASE_PORT, DATABASE_PORT)
    # The workers' own group only: not the shared one, not the control plane's.
    assert [p["GroupId"] for p in rule["UserIdGroupPairs"]] == [node_group]
    # Again (a second `sandbox up`): the same stand-in, nothing new.
    assert stand_in(ec2, cluster, declared) == [made]
    assert stand_in(ec2, cluster, [made.group_id]) == []
