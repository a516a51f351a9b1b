"""Which declared resources nothing live matches adoption may add beside what runs."""

from __future__ import annotations

from automation.adoption.additions import (
    ADDED,
    ATTACHMENT,
    INGRESS_RULE,
    LISTENER,
    LOAD_BALANCER,
    RECORD,
    SECURITY_GROUP,
    TARGET_GROUP,
    addable,
    looked_up,
    refers_to_added,
)

LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
SUBNET = "aws:ec2/subnet:Subnet"
NEW_GROUP = f"{ADDED}shop-common-sg-ingress-lb"
NEW_TARGETS = f"arn:aws:elasticloadbalancing:us-west-2:1:targetgroup/{ADDED}shop-tg-80"


def test_a_reference_to_an_addition_is_seen_however_deep() -> None:
    assert refers_to_added({"securityGroups": [NEW_GROUP]})
    assert refers_to_added({"defaultActions": [{"targetGroupArn": NEW_TARGETS}]})
    assert not refers_to_added({"securityGroups": ["sg-0abc"], "port": 80, "internal": True})


def test_rules_target_groups_and_listeners_are_added_wherever_nothing_matches() -> None:
    """They admit more or offer a new port; no client uses them yet."""
    for typ in (INGRESS_RULE, TARGET_GROUP, LISTENER):
        assert addable(typ, "shop-anything", {"vpcId": "vpc-1"})


def test_only_the_ingress_load_balancers_group_is_added() -> None:
    assert addable(SECURITY_GROUP, "shop-common-sg-ingress-lb", {})
    assert not addable(SECURITY_GROUP, "shop-common-sg-node", {})


def test_a_balancer_attachment_or_record_is_added_only_beside_an_addition() -> None:
    """An attachment to a live target group would send it live traffic; a record or a
    balancer of what runs already is missing, not new."""
    assert addable(LOAD_BALANCER, "shop-ingress-lb", {"securityGroups": [NEW_GROUP]})
    assert not addable(LOAD_BALANCER, "shop-api-lb", {"securityGroups": ["sg-0abc"]})
    assert addable(ATTACHMENT, "shop-attach", {"lbTargetGroupArn": NEW_TARGETS})
    assert not addable(ATTACHMENT, "shop-attach", {"lbTargetGroupArn": "arn:…/live-tg"})
    assert not addable(RECORD, "shop-dns-api", {"records": ["api-shop.elb.amazonaws.com"]})


def test_what_the_cluster_runs_on_is_never_added() -> None:
    assert not addable(LAUNCH_TEMPLATE, "shop-workers", {"vpcSecurityGroupIds": [NEW_GROUP]})
    assert not addable(SUBNET, "shop-private-a", {"vpcId": "vpc-1"})


def test_what_only_an_addition_can_lead_to_is_not_looked_for() -> None:
    """A rule of a new group cannot be live; a balancer, a record or a target group is
    found by its own name, whatever it refers to."""
    assert not looked_up(INGRESS_RULE, {"securityGroupId": NEW_GROUP})
    assert not looked_up(LISTENER, {"loadBalancerArn": f"arn:…/{ADDED}shop-ingress-lb"})
    assert looked_up(LOAD_BALANCER, {"securityGroups": [NEW_GROUP]})
    assert looked_up(INGRESS_RULE, {"securityGroupId": "sg-0abc"})
