"""``aws:lb`` target groups (``aws:lb/targetGroup:TargetGroup``); id = the ARN.

``force_new`` is what the Terraform AWS provider's schema marks ``ForceNew``
(``internal/service/elbv2/target_group.go``), which is what pulumi-aws replaces on;
health check settings, attributes and tags change in place. A delete retries while a
listener just deleted still holds the group, as Terraform does.
"""

from __future__ import annotations

import time
from typing import Any

from botocore.exceptions import ClientError

from automation.sandbox.provider.model import (
    MOTO_LACKS,
    NAME_PREFIX,
    OPTIONAL_COMPUTED,
    REGION,
    Aws,
    ForceNew,
    Props,
    Request,
    ResourceType,
    register,
)
from automation.sandbox.provider.types.elbv2_calls import (
    POLL,
    TIMEOUT,
    Attributes,
    Raw,
    applicable,
    attribute_args,
    attribute_changes,
    attribute_outputs,
    check_name,
    covers,
    error_code,
    is_gone,
    one,
    read_tags,
    refuse_existing,
    retag,
    tag_args,
    wait,
)

_TG_GO = "internal/service/elbv2/target_group.go"
_TG_IN_USE = 120.0  # how long Terraform retries deleting a target group still in use

_TG_ATTRIBUTES: Attributes = {
    "deregistrationDelay": ("deregistration_delay.timeout_seconds", ("instance", "ip"), 300),
    "slowStart": ("slow_start.duration_seconds", ("instance", "ip"), 0),
}
# A network load balancer's target groups' attributes, by the group's protocol. Check
# fills in none of these (a group made before they were served keeps its inputs): the
# type's ``defaults`` stand for them, and a value AWS does not report is unset.
_NLB_PROTOCOLS = ("TCP", "TLS", "UDP", "TCP_UDP")
_TG_PROTOCOL_ATTRIBUTES: Attributes = {
    "connectionTermination": (
        "deregistration_delay.connection_termination.enabled",
        _NLB_PROTOCOLS,
        False,
    ),
    "proxyProtocolV2": ("proxy_protocol_v2.enabled", _NLB_PROTOCOLS, False),
}

_HEALTH_DEFAULTS: Props = {  # Terraform's, for the fields of a declared healthCheck
    "enabled": True,
    "healthyThreshold": 3,
    "interval": 30,
    "port": "traffic-port",
    "protocol": "HTTP",
    "unhealthyThreshold": 3,
}


def _health_args(props: Props) -> Raw:
    """The HealthCheck* arguments of CreateTargetGroup/ModifyTargetGroup."""
    if not props.get("healthCheck"):
        return {}
    health = {**_HEALTH_DEFAULTS, **props["healthCheck"]}
    args: Raw = {
        "HealthCheckEnabled": bool(health["enabled"]),
        "HealthCheckIntervalSeconds": int(health["interval"]),
        "HealthyThresholdCount": int(health["healthyThreshold"]),
        "UnhealthyThresholdCount": int(health["unhealthyThreshold"]),
    }
    if health.get("timeout"):
        args["HealthCheckTimeoutSeconds"] = int(health["timeout"])
    if health["protocol"] != "TCP":
        if health.get("path"):
            args["HealthCheckPath"] = health["path"]
        if health.get("matcher"):
            code = "GrpcCode" if props.get("protocolVersion") == "GRPC" else "HttpCode"
            args["Matcher"] = {code: health["matcher"]}
    if props.get("targetType") != "lambda":
        args["HealthCheckPort"] = str(health["port"])
        args["HealthCheckProtocol"] = health["protocol"]
    return args


@register
class TargetGroup(ResourceType):
    """A target group; id = its ARN."""

    token = "aws:lb/targetGroup:TargetGroup"
    not_read = {
        **dict.fromkeys(
            ("loadBalancingAlgorithmType", "loadBalancingAnomalyMitigation",
             "loadBalancingCrossZoneEnabled", "preserveClientIp", "stickiness"),
            OPTIONAL_COMPUTED,
        ),
        "lambdaMultiValueHeadersEnabled": "a Lambda target group's: the program's targets "
        "are instances",
        **dict.fromkeys(
            ("targetControlPort", "targetFailovers", "targetGroupHealth", "targetHealthStates"),
            MOTO_LACKS,
        ),
        "namePrefix": NAME_PREFIX,
        "region": REGION,
    }  # fmt: skip
    auto_named = "name"  # pulumi-aws autonames it: set here, replacements delete first
    force_new = (
        ForceNew("name", f"{_TG_GO}: name ForceNew"),
        ForceNew("namePrefix", f"{_TG_GO}: name_prefix ForceNew"),
        ForceNew("port", f"{_TG_GO}: port ForceNew"),
        ForceNew("protocol", f"{_TG_GO}: protocol ForceNew"),
        ForceNew("protocolVersion", f"{_TG_GO}: protocol_version ForceNew"),
        ForceNew("ipAddressType", f"{_TG_GO}: ip_address_type ForceNew"),
        ForceNew("targetType", f"{_TG_GO}: target_type ForceNew"),
        ForceNew("vpcId", f"{_TG_GO}: vpc_id ForceNew"),
    )
    computed = ("arn", "arnSuffix", "ipAddressType", "loadBalancerArns", "tagsAll")
    optional_computed = ("healthCheck.timeout", "healthCheck.matcher", "healthCheck.path")
    defaults = {p: default for p, (_, _, default) in _TG_PROTOCOL_ATTRIBUTES.items()}

    def check(self, req: Request, news: Props) -> Props:
        props = {"targetType": "instance", **news}
        kind = props["targetType"]
        defaults = {p: _TG_ATTRIBUTES[p][2] for p in applicable(_TG_ATTRIBUTES, kind)}
        props = check_name("Target group", {**defaults, **props}, req)
        if kind != "lambda" and not all(props.get(k) for k in ("port", "protocol", "vpcId")):
            raise ValueError(f"port, protocol and vpcId are required when targetType is {kind}")
        if props.get("healthCheck"):
            health = {**_HEALTH_DEFAULTS, **props["healthCheck"]}
            props["healthCheck"] = {**health, "protocol": str(health["protocol"]).upper()}
        return props

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        elb = aws.client("elbv2")
        name, kind = inputs["name"], inputs["targetType"]
        refuse_existing(
            lambda: elb.describe_target_groups(Names=[name])["TargetGroups"],
            "DuplicateTargetGroupName",
            f"target group {name}",
            "CreateTargetGroup",
        )
        args: Raw = {"Name": name, "TargetType": kind, **_health_args(inputs), **tag_args(inputs)}
        if kind != "lambda":
            args.update(
                Port=int(inputs["port"]), Protocol=inputs["protocol"], VpcId=inputs["vpcId"]
            )
            if inputs.get("protocolVersion") and inputs["protocol"] in ("HTTP", "HTTPS"):
                args["ProtocolVersion"] = inputs["protocolVersion"]
            if inputs.get("ipAddressType"):
                args["IpAddressType"] = inputs["ipAddressType"]
        arn = elb.create_target_group(**args)["TargetGroups"][0]["TargetGroupArn"]
        wait(lambda: self._group(elb, arn), lambda _: True, f"target group {arn}", TIMEOUT)
        for table, applies in self._attribute_tables(inputs):
            values = {p: inputs[p] for p in applicable(table, applies) if p in inputs}
            if values:
                elb.modify_target_group_attributes(
                    TargetGroupArn=arn, Attributes=attribute_args(table, values)
                )
        return arn, self.read(aws, req, arn, inputs)

    @staticmethod
    def _attribute_tables(props: Props) -> tuple[tuple[Attributes, str], ...]:
        """Each table of attributes with what its entries apply to for this group."""
        return (
            (_TG_ATTRIBUTES, props.get("targetType") or "instance"),
            (_TG_PROTOCOL_ATTRIBUTES, props.get("protocol") or ""),
        )

    @staticmethod
    def _group(elb: Any, arn: str) -> Raw:
        return one(lambda: elb.describe_target_groups(TargetGroupArns=[arn])["TargetGroups"])

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        elb = aws.client("elbv2")
        tg = self._group(elb, id_)
        attributes = elb.describe_target_group_attributes(TargetGroupArn=id_)["Attributes"]
        matcher = tg.get("Matcher") or {}
        health = {
            "enabled": tg.get("HealthCheckEnabled"),
            "healthyThreshold": tg.get("HealthyThresholdCount"),
            "interval": tg.get("HealthCheckIntervalSeconds"),
            "matcher": matcher.get("HttpCode") or matcher.get("GrpcCode"),
            "path": tg.get("HealthCheckPath"),
            "port": tg.get("HealthCheckPort"),
            "protocol": tg.get("HealthCheckProtocol"),
            "timeout": tg.get("HealthCheckTimeoutSeconds"),
            "unhealthyThreshold": tg.get("UnhealthyThresholdCount"),
        }
        outputs: Props = {
            "arn": id_,
            "arnSuffix": "targetgroup/" + id_.split(":targetgroup/", 1)[-1],
            "name": tg["TargetGroupName"],
            "targetType": tg["TargetType"],
            "healthCheck": {k: v for k, v in health.items() if v is not None},
            "loadBalancerArns": sorted(tg.get("LoadBalancerArns") or []),
            **attribute_outputs(_TG_ATTRIBUTES, tg["TargetType"], attributes),
            **attribute_outputs(_TG_PROTOCOL_ATTRIBUTES, tg.get("Protocol") or "", attributes),
            **read_tags(elb, id_),
        }
        for prop, key in (
            ("port", "Port"),
            ("protocol", "Protocol"),
            ("protocolVersion", "ProtocolVersion"),
            ("vpcId", "VpcId"),
            ("ipAddressType", "IpAddressType"),
        ):
            if tg.get(key) is not None:
                outputs[prop] = tg[key]
        return outputs

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        elb = aws.client("elbv2")
        if news.get("healthCheck") and not covers(olds.get("healthCheck"), news["healthCheck"]):
            elb.modify_target_group(TargetGroupArn=id_, **_health_args(news))
        for table, applies in self._attribute_tables(news):
            if values := attribute_changes(table, applies, olds, news):
                elb.modify_target_group_attributes(
                    TargetGroupArn=id_, Attributes=attribute_args(table, values)
                )
        retag(elb, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        elb = aws.client("elbv2")
        deadline = time.monotonic() + _TG_IN_USE
        while True:  # a listener just deleted may still hold it for a while
            try:
                elb.delete_target_group(TargetGroupArn=id_)
                return
            except ClientError as err:
                if is_gone(err):
                    return
                if error_code(err) != "ResourceInUse" or time.monotonic() > deadline:
                    raise
            time.sleep(POLL)
