"""The stand-in provider's ``aws:lb`` types against a real moto server.

Each type is created from the program's shapes (an internal NLB, TCP instance target
groups, TCP listeners), checked against what boto3 sees, updated in place where AWS can,
read back (also from the declared inputs alone, as an import does), deleted twice and
then read as gone. Declared values travel through the engine's wire format first, so
numbers arrive as doubles as they do from the engine. Replacement is judged by the
servicer's own rule over ``replace_props()``.
"""

from __future__ import annotations

from typing import Any

import pytest
from pulumi.runtime import rpc

from automation.sandbox.provider.model import REGISTRY, Aws, NotFound, Props, Request, ResourceType
from automation.sandbox.provider.servicer import props_of, struct_of
from automation.sandbox.provider.types.listeners import Listener
from automation.sandbox.provider.types.load_balancers import LoadBalancer
from automation.sandbox.provider.types.target_groups import TargetGroup
from tests.support.moto_fixtures import MotoServer

pytestmark = pytest.mark.moto


def replaces(kind: type[ResourceType], olds: Props, changes: Props) -> bool:
    """Whether the servicer would replace a ``kind`` whose inputs go ``olds`` -> + ``changes``
    (static ForceNew and the type's conditional rules)."""
    return REGISTRY[kind.token].diff(olds, {**olds, **changes}).replace


def request(kind: type[ResourceType]) -> Request:
    return Request(name="test", token=kind.token)


def create(aws: Aws, kind: type[ResourceType], declared: Props) -> tuple[str, Props, Props]:
    """Check and create through the registered type; reading it back, from its outputs or
    from the checked inputs alone (an import), gives the same outputs."""
    resource = REGISTRY[kind.token]
    assert isinstance(resource, kind)
    inputs = resource.check(request(kind), props_of(struct_of(declared)))
    id_, outputs = resource.create(aws, request(kind), inputs)
    assert resource.read(aws, request(kind), id_, outputs) == outputs
    assert resource.read(aws, request(kind), id_, inputs) == outputs
    return id_, inputs, outputs


def update(
    aws: Aws, kind: type[ResourceType], id_: str, inputs: Props, outputs: Props, changes: Props
) -> tuple[Props, Props]:
    """Update in place (only legal when nothing replace-worthy changed)."""
    assert not replaces(kind, inputs, changes)
    resource = REGISTRY[kind.token]
    news = resource.check(request(kind), props_of(struct_of({**inputs, **changes})))
    outputs = resource.update(aws, request(kind), id_, outputs, news)
    assert resource.read(aws, request(kind), id_, outputs) == outputs
    return news, outputs


def delete(aws: Aws, kind: type[ResourceType], id_: str, state: Props) -> None:
    """Delete twice (the second finds it gone and succeeds), then read it as gone."""
    resource = REGISTRY[kind.token]
    resource.delete(aws, request(kind), id_, state)
    resource.delete(aws, request(kind), id_, state)
    with pytest.raises(NotFound):
        resource.read(aws, request(kind), id_, state)


@pytest.fixture
def aws(moto: MotoServer) -> Aws:
    return Aws(region="eu-west-1", endpoint_url=moto.endpoint_url)


@pytest.fixture
def elbv2(moto: MotoServer) -> Any:
    return moto.client("elbv2")


@pytest.fixture
def network(moto: MotoServer) -> dict[str, Any]:
    """A VPC with two subnets and two security groups."""
    ec2 = moto.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    subnets = [
        ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.0.{i}.0/24", AvailabilityZone=f"eu-west-1{az}")[
            "Subnet"
        ]["SubnetId"]
        for i, az in enumerate("abc", start=1)
    ]
    groups = [
        ec2.create_security_group(GroupName=n, Description=n, VpcId=vpc)["GroupId"]
        for n in ("lb", "extra")
    ]
    return {"vpc": vpc, "subnets": subnets, "groups": groups}


def live_tags(elbv2: Any, arn: str) -> dict[str, str]:
    (found,) = elbv2.describe_tags(ResourceArns=[arn])["TagDescriptions"]
    return {t["Key"]: t["Value"] for t in found["Tags"]}


def attributes(elbv2: Any, arn: str) -> dict[str, str]:
    if ":targetgroup/" in arn:
        found = elbv2.describe_target_group_attributes(TargetGroupArn=arn)
    else:
        found = elbv2.describe_load_balancer_attributes(LoadBalancerArn=arn)
    return {a["Key"]: a["Value"] for a in found["Attributes"]}


def nlb(network: dict[str, Any], **changes: Any) -> Props:
    """The program's load balancer."""
    return {
        "name": "shop-ingress-lb",
        "loadBalancerType": "network",
        "internal": True,
        "subnets": network["subnets"][:2],
        "securityGroups": network["groups"][:1],
        "enableCrossZoneLoadBalancing": True,
        "tags": {"Name": "shop-ingress-lb", "kubeshift.io/cluster": "shop"},
        **changes,
    }


def target_group(network: dict[str, Any], **changes: Any) -> Props:
    """The program's target group."""
    return {
        "name": "shop-ingress-443",
        "port": 30443,
        "protocol": "TCP",
        "targetType": "instance",
        "vpcId": network["vpc"],
        "deregistrationDelay": 30,
        "healthCheck": {
            "protocol": "TCP",
            "port": "traffic-port",
            "interval": 10,
            "healthyThreshold": 2,
            "unhealthyThreshold": 2,
        },
        "tags": {"Name": "shop-ingress-443"},
        **changes,
    }


def test_load_balancer(aws: Aws, elbv2: Any, network: dict[str, Any]) -> None:
    id_, inputs, outputs = create(aws, LoadBalancer, nlb(network))

    (lb,) = elbv2.describe_load_balancers(LoadBalancerArns=[id_])["LoadBalancers"]
    assert (lb["LoadBalancerName"], lb["Type"], lb["Scheme"]) == (
        "shop-ingress-lb",
        "network",
        "internal",
    )
    assert lb["State"]["Code"] == "active"
    assert {z["SubnetId"] for z in lb["AvailabilityZones"]} == set(network["subnets"][:2])
    assert lb["SecurityGroups"] == network["groups"][:1]
    assert attributes(elbv2, id_)["load_balancing.cross_zone.enabled"] == "true"
    assert live_tags(elbv2, id_) == {"Name": "shop-ingress-lb", "kubeshift.io/cluster": "shop"}
    # What the program reads: arn, dnsName and zoneId (for its DNS records).
    assert outputs["arn"] == id_
    assert outputs["arnSuffix"] == id_.split(":loadbalancer/")[1]
    assert (outputs["dnsName"], outputs["zoneId"], outputs["vpcId"]) == (
        lb["DNSName"],
        lb["CanonicalHostedZoneId"],
        network["vpc"],
    )
    assert outputs["tagsAll"] == outputs["tags"] == inputs["tags"]

    for change in (
        {"name": "shop-ingress-lb-2"},
        {"internal": False},
        {"loadBalancerType": "application"},
        {"subnets": network["subnets"][1:]},
    ):
        assert replaces(LoadBalancer, inputs, change), change
    assert not replaces(LoadBalancer, inputs, {"tags": {"Name": "other"}})
    assert not replaces(LoadBalancer, inputs, {"securityGroups": network["groups"]})
    # customizeDiffLoadBalancerNLB: subnets that do not grow in number, and security
    # groups from some to none, replace; growing subnets change in place, and values a
    # preview does not know yet force nothing.
    subnets = network["subnets"]
    assert replaces(LoadBalancer, inputs, {"subnets": [subnets[0], subnets[2]]})  # swapped
    assert not replaces(LoadBalancer, inputs, {"subnets": subnets[:3]})  # one added
    assert replaces(LoadBalancer, inputs, {"securityGroups": []})
    assert not replaces(LoadBalancer, inputs, {"subnets": [rpc.UNKNOWN]})
    assert not replaces(LoadBalancer, inputs, {"securityGroups": [rpc.UNKNOWN]})
    groupless = {**inputs, "securityGroups": []}
    assert replaces(LoadBalancer, groupless, {"securityGroups": network["groups"][:1]})
    application = {**inputs, "loadBalancerType": "application"}
    assert not replaces(LoadBalancer, application, {"subnets": subnets[1:2]})

    inputs, outputs = update(
        aws,
        LoadBalancer,
        id_,
        inputs,
        outputs,
        {
            "securityGroups": network["groups"],
            "enableCrossZoneLoadBalancing": False,
            "tags": {"Name": "shop-ingress-lb", "kubeshift.io/phase": "vpc-move"},
        },
    )
    (lb,) = elbv2.describe_load_balancers(LoadBalancerArns=[id_])["LoadBalancers"]
    assert set(lb["SecurityGroups"]) == set(network["groups"])
    assert attributes(elbv2, id_)["load_balancing.cross_zone.enabled"] == "false"
    assert live_tags(elbv2, id_) == {"Name": "shop-ingress-lb", "kubeshift.io/phase": "vpc-move"}
    assert set(outputs["securityGroups"]) == set(network["groups"])  # order: the servicer
    assert outputs["enableCrossZoneLoadBalancing"] is False

    delete(aws, LoadBalancer, id_, outputs)


def test_names_are_held_to_aws_limits(network: dict[str, Any]) -> None:
    long = "shop-ingress-0123456789-abcdefghi"  # 33 characters
    for kind, declared in ((LoadBalancer, nlb(network)), (TargetGroup, target_group(network))):
        with pytest.raises(ValueError, match="cannot be longer than '32' characters"):
            REGISTRY[kind.token].check(request(kind), {**declared, "name": long})
        with pytest.raises(ValueError, match="hyphen"):
            REGISTRY[kind.token].check(request(kind), {**declared, "name": "-shop"})
        named = REGISTRY[kind.token].check(request(kind), {**declared, "name": None})
        assert named["name"].startswith("test-") and len(named["name"]) <= 32
    checked = REGISTRY[LoadBalancer.token].check(request(LoadBalancer), nlb(network))
    assert checked["enableDeletionProtection"] is False  # Terraform's defaults
    assert "idleTimeout" not in checked  # an ALB-only attribute


def test_target_group(aws: Aws, elbv2: Any, network: dict[str, Any]) -> None:
    id_, inputs, outputs = create(aws, TargetGroup, target_group(network))

    (tg,) = elbv2.describe_target_groups(TargetGroupArns=[id_])["TargetGroups"]
    assert (tg["TargetGroupName"], tg["Port"], tg["Protocol"], tg["VpcId"]) == (
        "shop-ingress-443",
        30443,
        "TCP",
        network["vpc"],
    )
    assert (tg["HealthCheckProtocol"], tg["HealthCheckIntervalSeconds"]) == ("TCP", 10)
    assert (tg["HealthyThresholdCount"], tg["UnhealthyThresholdCount"]) == (2, 2)
    assert attributes(elbv2, id_)["deregistration_delay.timeout_seconds"] == "30"
    assert live_tags(elbv2, id_) == {"Name": "shop-ingress-443"}
    assert outputs["arn"] == id_
    assert outputs["arnSuffix"] == "targetgroup/" + id_.split(":targetgroup/")[1]
    assert outputs["deregistrationDelay"] == 30
    assert outputs["healthCheck"]["enabled"] is True  # Terraform's default, sent
    assert outputs["tagsAll"] == {"Name": "shop-ingress-443"}

    for change in (
        {"name": "shop-ingress-8443"},
        {"port": 30444},
        {"protocol": "TLS"},
        {"vpcId": "vpc-0123456789abcdef0"},
        {"targetType": "ip"},
    ):
        assert replaces(TargetGroup, inputs, change), change
    assert not replaces(TargetGroup, inputs, {"tags": {}, "deregistrationDelay": 0})

    health = {**inputs["healthCheck"], "interval": 30, "healthyThreshold": 3}
    inputs, outputs = update(
        aws,
        TargetGroup,
        id_,
        inputs,
        outputs,
        {
            "healthCheck": health,
            "deregistrationDelay": 60,
            "tags": {"Name": "x", "Role": "ingress"},
        },
    )
    (tg,) = elbv2.describe_target_groups(TargetGroupArns=[id_])["TargetGroups"]
    assert (tg["HealthCheckIntervalSeconds"], tg["HealthyThresholdCount"]) == (30, 3)
    assert attributes(elbv2, id_)["deregistration_delay.timeout_seconds"] == "60"
    assert live_tags(elbv2, id_) == {"Name": "x", "Role": "ingress"}
    assert outputs["healthCheck"]["interval"] == 30

    delete(aws, TargetGroup, id_, outputs)


def test_listener(aws: Aws, elbv2: Any, network: dict[str, Any]) -> None:
    lb_arn, _, lb = create(aws, LoadBalancer, nlb(network))
    tg_arns = [
        create(aws, TargetGroup, target_group(network, name=f"shop-ingress-{port}", port=port))[0]
        for port in (30443, 30444)
    ]
    declared: Props = {
        "loadBalancerArn": lb_arn,
        "port": 443,
        "protocol": "TCP",
        "defaultActions": [{"type": "forward", "targetGroupArn": tg_arns[0]}],
        "tags": {"Name": "shop-ingress-lb-443"},
    }
    id_, inputs, outputs = create(aws, Listener, declared)

    (listener,) = elbv2.describe_listeners(ListenerArns=[id_])["Listeners"]
    assert (listener["LoadBalancerArn"], listener["Port"], listener["Protocol"]) == (
        lb_arn,
        443,
        "TCP",
    )
    assert listener["DefaultActions"][0]["TargetGroupArn"] == tg_arns[0]
    assert live_tags(elbv2, id_) == {"Name": "shop-ingress-lb-443"}
    assert outputs["arn"] == id_
    assert outputs["defaultActions"] == [{**declared["defaultActions"][0], "order": 1}]
    assert "sslPolicy" not in outputs  # TCP has no TLS settings
    (tg,) = elbv2.describe_target_groups(TargetGroupArns=[tg_arns[0]])["TargetGroups"]
    assert tg["LoadBalancerArns"] == [lb_arn]

    assert replaces(Listener, inputs, {"loadBalancerArn": f"{lb_arn}0"})
    assert not replaces(Listener, inputs, {"port": 8443, "protocol": "TLS", "tags": {}})

    inputs, outputs = update(
        aws,
        Listener,
        id_,
        inputs,
        outputs,
        {
            "port": 8443,
            "defaultActions": [{"type": "forward", "targetGroupArn": tg_arns[1]}],
            "tags": {"Name": "shop-ingress-lb-8443"},
        },
    )
    (listener,) = elbv2.describe_listeners(ListenerArns=[id_])["Listeners"]
    assert listener["Port"] == 8443
    assert listener["DefaultActions"][0]["TargetGroupArn"] == tg_arns[1]
    assert live_tags(elbv2, id_) == {"Name": "shop-ingress-lb-8443"}

    with pytest.raises(ValueError, match="forward"):
        REGISTRY[Listener.token].check(
            request(Listener), {**declared, "defaultActions": [{"type": "redirect"}]}
        )

    delete(aws, Listener, id_, outputs)
    for arn in tg_arns:  # in use by no listener now
        delete(aws, TargetGroup, arn, {})
    delete(aws, LoadBalancer, lb_arn, lb)
