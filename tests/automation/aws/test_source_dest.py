"""The source/destination check of the cluster's instances, switched off and checked on moto."""

from __future__ import annotations

import pytest

from automation.aws.clients import AwsClients
from automation.aws.nodes import find_cluster_instances
from automation.aws.source_dest import checks_off, checks_on, switch_off, switch_on
from tests.support.moto_world import make_network, run_instances

pytestmark = pytest.mark.moto


def _check(aws: AwsClients, instance_id: str) -> bool:
    reply = aws.ec2.describe_instance_attribute(InstanceId=instance_id, Attribute="sourceDestCheck")
    return bool(reply["SourceDestCheck"]["Value"])


def test_instances_that_booted_with_the_check_on_are_switched_off_once(aws: AwsClients) -> None:
    net = make_network(aws.ec2, "10.0.0.0/16")
    ours = [i["InstanceId"] for i in run_instances(aws.ec2, net, 3, {"KubernetesCluster": "prod"})]
    other = run_instances(aws.ec2, net, 1, {"KubernetesCluster": "staging"})[0]["InstanceId"]
    aws.ec2.modify_instance_attribute(InstanceId=ours[0], SourceDestCheck={"Value": False})

    def instances():  # type: ignore[no-untyped-def]
        return find_cluster_instances(aws.ec2, cluster="prod", vpc_id=net.vpc_id)

    waiting = checks_off(instances())
    assert not waiting.done and len(waiting.items) == 2
    assert all(ours[0] not in item for item in waiting.items)

    planned = switch_off(aws.ec2, instances(), dry_run=True)
    assert set(planned.switched) == set(ours[1:]) and "would switch" in planned.message
    assert _check(aws, ours[1])  # a dry run changes nothing

    done = switch_off(aws.ec2, instances())
    assert set(done.switched) == set(ours[1:]) and done.already == 1
    assert not any(_check(aws, i) for i in ours)
    assert _check(aws, other)  # another cluster's instance is left alone
    assert checks_off(instances()).done
    again = switch_off(aws.ec2, instances())
    assert again.switched == () and "already off on all 3" in again.message

    back = switch_on(aws.ec2, instances())
    assert set(back.switched) == set(ours) and "switched the source/destination check on" in (
        back.message
    )
    assert all(_check(aws, i) for i in ours) and checks_on(instances()).done
    assert switch_on(aws.ec2, instances()).switched == ()
