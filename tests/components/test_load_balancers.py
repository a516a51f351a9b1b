"""Load balancer component: NLB, one target group + listener per port, ASG attachments."""

from __future__ import annotations

from automation.review.render import record
from components.contract.naming import Namer
from components.load_balancers import LbListener, LoadBalancer, LoadBalancerArgs
from tests.components.conftest import by_type


def test_listeners_target_groups_and_attachments() -> None:
    def program() -> None:
        LoadBalancer(
            "ing",
            LoadBalancerArgs(
                namer=Namer("prod", "mig"),
                role="ingress",
                vpc_id="vpc-1",
                subnet_ids=["s-a", "s-b"],
                security_group_ids=["sg-lb"],
                listeners=[LbListener(80, 30080), LbListener(443, 30443)],
                attachments={"a": "asg-a", "b": "asg-b", "c": "asg-c"},
            ),
        )

    resources = record(program).resources
    (lb,) = by_type(resources, "aws:lb/loadBalancer:LoadBalancer")
    assert lb.inputs["name"] == "prod-ingress-mig"
    assert lb.inputs["loadBalancerType"] == "network"
    assert lb.inputs["internal"] is True
    assert lb.inputs["securityGroups"] == ["sg-lb"]
    tgs = {r.inputs["port"]: r for r in by_type(resources, "aws:lb/targetGroup:TargetGroup")}
    assert sorted(tgs) == [30080, 30443]
    assert {t.inputs["vpcId"] for t in tgs.values()} == {"vpc-1"}
    assert tgs[30443].inputs["name"] == "prod-ingress-443-mig"
    listeners = by_type(resources, "aws:lb/listener:Listener")
    assert sorted(r.inputs["port"] for r in listeners) == [80, 443]
    attachments = by_type(resources, "aws:autoscaling/attachment:Attachment")
    assert len(attachments) == 6
    assert {a.inputs["autoscalingGroupName"] for a in attachments} == {"asg-a", "asg-b", "asg-c"}
