"""``aws:lb``: ELBv2 load balancers, target groups and listeners.

``force_new`` is what the Terraform AWS provider's schema marks ``ForceNew``
(hashicorp/terraform-provider-aws ``internal/service/elbv2/``), which is what pulumi-aws
replaces on; every other declared property changes in place. Creates and updates wait
for the load balancer to be ``active`` and deletes wait for its network interfaces to
go, as Terraform does. Ids are ARNs.

moto gaps: it accepts names longer than 32 characters (``check`` refuses them as AWS
does), gives network load balancers ``app/`` ARNs (so ``arnSuffix`` reads ``app/...``
there) and creates no network interfaces.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from botocore.exceptions import ClientError

from automation.sandbox.provider.diffing import contains_unknown
from automation.sandbox.provider.model import (
    MOTO_LACKS,
    NAME_PREFIX,
    OPTIONAL_COMPUTED,
    REGION,
    UNTRIED,
    Aws,
    ForceNew,
    NotFound,
    Props,
    Request,
    ResourceType,
    register,
    tags_dict,
    tags_list,
)

T = TypeVar("T")
Raw = dict[str, Any]

_LB_GO = "internal/service/elbv2/load_balancer.go"
_TG_GO = "internal/service/elbv2/target_group.go"
_LISTENER_GO = "internal/service/elbv2/listener.go"
_TIMEOUT = 600.0  # Terraform's 10-minute create/update/delete timeouts
_ENI_TIMEOUT = 300.0  # how long Terraform waits for a deleted LB's interfaces
_TG_IN_USE = 120.0  # how long Terraform retries deleting a target group still in use
_POLL = 2.0
_NAME_LIMIT = 32
_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$")
log = logging.getLogger(__name__)


# --- AWS plumbing ---------------------------------------------------------------------


def _code(err: ClientError) -> str:
    return str(err.response.get("Error", {}).get("Code", ""))


def _gone(err: ClientError) -> bool:
    """``LoadBalancerNotFound``, ``TargetGroupNotFound``, ``ListenerNotFound``."""
    return _code(err).endswith("NotFound")


def _one(describe: Callable[[], list[Raw]]) -> Raw:
    """The single resource a Describe call names, or :class:`NotFound`."""
    try:
        found = describe()
    except ClientError as err:
        if _gone(err):
            raise NotFound(str(err)) from err
        raise
    if not found:
        raise NotFound("not found")
    return found[0]


def _ignore_gone(call: Callable[[], object]) -> None:
    try:
        call()
    except ClientError as err:
        if not _gone(err):
            raise


def _wait(fetch: Callable[[], T], done: Callable[[T], bool], what: str, timeout: float) -> T:
    """Poll ``fetch()`` until ``done`` holds; a resource not visible yet (AWS is
    eventually consistent) is polled again."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = fetch()
            if done(value):
                return value
        except NotFound:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: still waiting after {timeout:.0f}s")
        time.sleep(_POLL)


def _refuse_existing(describe: Callable[[], list[Raw]], code: str, what: str, op: str) -> None:
    """Create calls answer an existing resource of the same name and settings with that
    resource; refuse instead, as Terraform does, rather than adopt it."""
    try:
        _one(describe)
    except NotFound:
        return
    raise ClientError({"Error": {"Code": code, "Message": f"{what} already exists"}}, op)


def _covers(live: Any, declared: Any) -> bool:
    """Whether ``live`` already holds every value ``declared`` sets (AWS fills in the
    fields a declaration leaves out, as Terraform's Optional+Computed ones)."""
    if declared is None:
        return True
    if isinstance(declared, dict):
        return isinstance(live, dict) and all(_covers(live.get(k), v) for k, v in declared.items())
    if isinstance(declared, list):
        return (
            isinstance(live, list)
            and len(live) == len(declared)
            and all(map(_covers, live, declared))
        )
    return bool(live == declared)


def _check_name(kind: str, props: Props, req: Request) -> Props:
    """Fill ``name`` (from ``namePrefix`` or the logical name, stable across previews) and
    hold it to AWS's ELBv2 naming rules."""
    props = dict(props)
    if not props.get("name"):
        prefix = props.get("namePrefix") or f"{req.name[:24]}-"
        props["name"] = (prefix + hashlib.sha256(req.name.encode()).hexdigest())[:_NAME_LIMIT]
    name = props["name"]
    if len(name) > _NAME_LIMIT:
        raise ValueError(
            f"{kind} name cannot be longer than '{_NAME_LIMIT}' characters: "
            f"{name!r} has {len(name)}"
        )
    if not _NAME.match(name):
        raise ValueError(
            f"{kind} name {name!r} must be letters, digits and hyphens, "
            "not beginning or ending with a hyphen"
        )
    return props


# --- tags -------------------------------------------------------------------------------


def _tag_args(inputs: Props) -> Raw:
    return {"Tags": tags_list(inputs["tags"])} if inputs.get("tags") else {}


def _tags(elb: Any, arn: str) -> Props:
    found = elb.describe_tags(ResourceArns=[arn])["TagDescriptions"]
    tags = tags_dict(found[0]["Tags"] if found else [])
    return {"tags": tags, "tagsAll": dict(tags)}


def _retag(elb: Any, arn: str, olds: Props, news: Props) -> None:
    """Make the resource's tags go from ``olds["tags"]`` to ``news["tags"]``."""
    old: Mapping[str, str] = olds.get("tags") or {}
    new: Mapping[str, str] = news.get("tags") or {}
    if removed := [k for k in old if k not in new]:
        elb.remove_tags(ResourceArns=[arn], TagKeys=removed)
    if changed := {k: v for k, v in new.items() if old.get(k) != v}:
        elb.add_tags(ResourceArns=[arn], Tags=tags_list(changed))


# --- attributes -------------------------------------------------------------------------

# input property -> (attribute key, types it applies to, Terraform default); the default's
# type (bool or int) is the property's.
Attributes = dict[str, tuple[str, tuple[str, ...], bool | int]]

_LB_ATTRIBUTES: Attributes = {
    "enableCrossZoneLoadBalancing": (
        "load_balancing.cross_zone.enabled",
        ("network", "gateway"),  # always on for ALBs
        False,
    ),
    "enableDeletionProtection": (
        "deletion_protection.enabled",
        ("application", "network", "gateway"),
        False,
    ),
    "enableHttp2": ("routing.http2.enabled", ("application",), True),
    "idleTimeout": ("idle_timeout.timeout_seconds", ("application",), 60),
}
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


def _applicable(table: Attributes, kind: str) -> list[str]:
    return [prop for prop, (_, kinds, _) in table.items() if kind in kinds]


def _attribute_args(table: Attributes, values: Props) -> list[dict[str, str]]:
    args = []
    for prop, value in values.items():
        key, _, default = table[prop]
        text = str(bool(value)).lower() if isinstance(default, bool) else str(int(value))
        args.append({"Key": key, "Value": text})
    return args


def _attribute_outputs(table: Attributes, kind: str, live: list[dict[str, str]]) -> Props:
    values = {a["Key"]: a["Value"] for a in live}
    outputs: Props = {}
    for prop in _applicable(table, kind):
        key, _, default = table[prop]
        if key in values:
            raw = values[key]
            outputs[prop] = raw == "true" if isinstance(default, bool) else int(raw)
        # attributes AWS does not report are left out
    return outputs


def _attribute_changes(table: Attributes, kind: str, olds: Props, news: Props) -> Props:
    return {
        p: news[p]
        for p in _applicable(table, kind)
        if news.get(p) is not None and news[p] != olds.get(p)
    }


# --- aws:lb/loadBalancer:LoadBalancer -------------------------------------------------


@register
class LoadBalancer(ResourceType):
    """An application, network or gateway load balancer; id = its ARN.

    Terraform's ``customizeDiffLoadBalancerNLB`` (``elbv2/load_balancer.go``) replaces a
    network load balancer whose known ``subnets`` change without growing in number, or
    whose known ``securityGroups`` go from none to some or from some to none; any other
    change of either is an in-place ``SetSubnets`` / ``SetSecurityGroups``, and an
    application load balancer's subnets always change in place (:meth:`forced_new`).
    """

    token = "aws:lb/loadBalancer:LoadBalancer"
    not_read = {
        **dict.fromkeys(
            ("clientKeepAlive", "desyncMitigationMode", "dropInvalidHeaderFields",
             "enableTlsVersionAndCipherSuiteHeaders", "enableWafFailOpen",
             "enableXffClientPort", "preserveHostHeader", "xffHeaderProcessingMode"),
            "an application load balancer's: the program's are network ones; " + UNTRIED,
        ),
        **dict.fromkeys(
            ("accessLogs", "connectionLogs", "dnsRecordClientRoutingPolicy",
             "enablePrefixForIpv6SourceNat", "enableZonalShift",
             "enforceSecurityGroupInboundRulesOnPrivateLinkTraffic", "healthCheckLogs",
             "secondaryIpsAutoAssignedPerSubnet"),
            UNTRIED,
        ),
        **dict.fromkeys(("ipamPools", "minimumLoadBalancerCapacity"), MOTO_LACKS),
        "customerOwnedIpv4Pool": "moto has no Outposts, so no sandbox load balancer has one",
        "subnetMappings": "the program places its load balancers by subnets; "
        + OPTIONAL_COMPUTED,
        "namePrefix": NAME_PREFIX,
        "region": REGION,
    }  # fmt: skip
    auto_named = "name"  # pulumi-aws autonames it: set here, replacements delete first
    force_new = (
        ForceNew("name", f"{_LB_GO}: name ForceNew"),
        ForceNew("namePrefix", f"{_LB_GO}: name_prefix ForceNew"),
        ForceNew("internal", f"{_LB_GO}: internal ForceNew"),
        ForceNew("loadBalancerType", f"{_LB_GO}: load_balancer_type ForceNew"),
        ForceNew("customerOwnedIpv4Pool", f"{_LB_GO}: customer_owned_ipv4_pool ForceNew"),
    )
    computed = ("arn", "arnSuffix", "dnsName", "zoneId", "vpcId", "ipAddressType", "tagsAll")
    sets = ("securityGroups", "subnets")

    def check(self, req: Request, news: Props) -> Props:
        props = {"loadBalancerType": "application", **news}
        kind = props["loadBalancerType"]
        defaults = {p: _LB_ATTRIBUTES[p][2] for p in _applicable(_LB_ATTRIBUTES, kind)}
        props = _check_name("LoadBalancer", {**defaults, **props}, req)
        if props["name"].startswith("internal-"):
            raise ValueError(f"LoadBalancer name {props['name']!r} cannot begin with 'internal-'")
        return props

    def forced_new(self, olds: Props, old_inputs: Props, news: Props) -> tuple[str, ...]:
        """Upstream decides on known values only: one still unknown forces nothing."""
        if news.get("loadBalancerType") != "network":
            return ()
        forced = []
        old, new = olds.get("subnets") or [], news.get("subnets") or []
        if not contains_unknown(new) and len(new) <= len(old):
            forced.append("subnets")  # removed or swapped, not only added
        old, new = olds.get("securityGroups") or [], news.get("securityGroups") or []
        if not contains_unknown(new) and bool(old) != bool(new):
            forced.append("securityGroups")  # none to some, or some to none
        return tuple(forced)

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        elb = aws.client("elbv2")
        name, kind = inputs["name"], inputs["loadBalancerType"]
        _refuse_existing(
            lambda: elb.describe_load_balancers(Names=[name])["LoadBalancers"],
            "DuplicateLoadBalancerName",
            f"load balancer {name}",
            "CreateLoadBalancer",
        )
        scheme = "internal" if inputs.get("internal") else "internet-facing"
        args: Raw = {"Name": name, "Type": kind, "Scheme": scheme, **_tag_args(inputs)}
        for prop, arg in (
            ("subnets", "Subnets"),
            ("securityGroups", "SecurityGroups"),
            ("ipAddressType", "IpAddressType"),
            ("customerOwnedIpv4Pool", "CustomerOwnedIpv4Pool"),
        ):
            if inputs.get(prop):
                args[arg] = inputs[prop]
        arn = elb.create_load_balancer(**args)["LoadBalancers"][0]["LoadBalancerArn"]
        self._active(elb, arn)
        values = {p: inputs[p] for p in _applicable(_LB_ATTRIBUTES, kind) if p in inputs}
        if values:
            elb.modify_load_balancer_attributes(
                LoadBalancerArn=arn, Attributes=_attribute_args(_LB_ATTRIBUTES, values)
            )
            self._active(elb, arn)
        return arn, self.read(aws, req, arn, inputs)

    @staticmethod
    def _active(elb: Any, arn: str) -> None:
        _wait(
            lambda: _one(
                lambda: elb.describe_load_balancers(LoadBalancerArns=[arn])["LoadBalancers"]
            ),
            lambda lb: lb["State"]["Code"] == "active",
            f"load balancer {arn} becoming active",
            _TIMEOUT,
        )

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        elb = aws.client("elbv2")
        lb = _one(lambda: elb.describe_load_balancers(LoadBalancerArns=[id_])["LoadBalancers"])
        attributes = elb.describe_load_balancer_attributes(LoadBalancerArn=id_)["Attributes"]
        subnets = sorted(z["SubnetId"] for z in lb.get("AvailabilityZones") or [])
        return {
            "arn": id_,
            "arnSuffix": id_.split(":loadbalancer/", 1)[-1],
            "dnsName": lb["DNSName"],
            "zoneId": lb["CanonicalHostedZoneId"],
            "vpcId": lb.get("VpcId"),
            "name": lb["LoadBalancerName"],
            # moto leaves Scheme out of a load balancer created without one.
            "internal": lb.get("Scheme", "internet-facing") == "internal",
            "loadBalancerType": lb["Type"],
            "ipAddressType": lb.get("IpAddressType"),
            "securityGroups": sorted(lb.get("SecurityGroups") or []),
            "subnets": subnets,
            **_attribute_outputs(_LB_ATTRIBUTES, lb["Type"], attributes),
            **_tags(elb, id_),
        }

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        elb = aws.client("elbv2")
        kind = news["loadBalancerType"]
        if values := _attribute_changes(_LB_ATTRIBUTES, kind, olds, news):
            elb.modify_load_balancer_attributes(
                LoadBalancerArn=id_, Attributes=_attribute_args(_LB_ATTRIBUTES, values)
            )
        # Both are Optional+Computed sets: left out means "keep".
        groups, subnets = news.get("securityGroups"), news.get("subnets")
        if groups is not None and set(olds.get("securityGroups") or []) != set(groups):
            elb.set_security_groups(LoadBalancerArn=id_, SecurityGroups=groups)
        if subnets and set(olds.get("subnets") or []) != set(subnets):
            elb.set_subnets(LoadBalancerArn=id_, Subnets=subnets)  # see the class note
        _retag(elb, id_, olds, news)
        self._active(elb, id_)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        _ignore_gone(lambda: aws.client("elbv2").delete_load_balancer(LoadBalancerArn=id_))
        # AWS releases the load balancer's network interfaces minutes later; until then
        # its subnets and security groups cannot be deleted. Like Terraform, wait a while
        # for them and carry on if they linger.
        described = [{"Name": "description", "Values": [f"ELB {id_.split(':loadbalancer/')[-1]}"]}]
        try:
            _wait(
                lambda: aws.ec2.describe_network_interfaces(Filters=described)["NetworkInterfaces"],
                lambda interfaces: not interfaces,
                f"network interfaces of {id_} going",
                _ENI_TIMEOUT,
            )
        except TimeoutError as exc:
            log.warning("%s", exc)


# --- aws:lb/targetGroup:TargetGroup ---------------------------------------------------

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
    sets = ("loadBalancerArns",)
    optional_computed = ("healthCheck.timeout", "healthCheck.matcher", "healthCheck.path")
    defaults = {p: default for p, (_, _, default) in _TG_PROTOCOL_ATTRIBUTES.items()}

    def check(self, req: Request, news: Props) -> Props:
        props = {"targetType": "instance", **news}
        kind = props["targetType"]
        defaults = {p: _TG_ATTRIBUTES[p][2] for p in _applicable(_TG_ATTRIBUTES, kind)}
        props = _check_name("Target group", {**defaults, **props}, req)
        if kind != "lambda" and not all(props.get(k) for k in ("port", "protocol", "vpcId")):
            raise ValueError(f"port, protocol and vpcId are required when targetType is {kind}")
        if props.get("healthCheck"):
            health = {**_HEALTH_DEFAULTS, **props["healthCheck"]}
            props["healthCheck"] = {**health, "protocol": str(health["protocol"]).upper()}
        return props

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        elb = aws.client("elbv2")
        name, kind = inputs["name"], inputs["targetType"]
        _refuse_existing(
            lambda: elb.describe_target_groups(Names=[name])["TargetGroups"],
            "DuplicateTargetGroupName",
            f"target group {name}",
            "CreateTargetGroup",
        )
        args: Raw = {"Name": name, "TargetType": kind, **_health_args(inputs), **_tag_args(inputs)}
        if kind != "lambda":
            args.update(
                Port=int(inputs["port"]), Protocol=inputs["protocol"], VpcId=inputs["vpcId"]
            )
            if inputs.get("protocolVersion") and inputs["protocol"] in ("HTTP", "HTTPS"):
                args["ProtocolVersion"] = inputs["protocolVersion"]
            if inputs.get("ipAddressType"):
                args["IpAddressType"] = inputs["ipAddressType"]
        arn = elb.create_target_group(**args)["TargetGroups"][0]["TargetGroupArn"]
        _wait(lambda: self._group(elb, arn), lambda _: True, f"target group {arn}", _TIMEOUT)
        for table, applies in self._attribute_tables(inputs):
            values = {p: inputs[p] for p in _applicable(table, applies) if p in inputs}
            if values:
                elb.modify_target_group_attributes(
                    TargetGroupArn=arn, Attributes=_attribute_args(table, values)
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
        return _one(lambda: elb.describe_target_groups(TargetGroupArns=[arn])["TargetGroups"])

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
            **_attribute_outputs(_TG_ATTRIBUTES, tg["TargetType"], attributes),
            **_attribute_outputs(_TG_PROTOCOL_ATTRIBUTES, tg.get("Protocol") or "", attributes),
            **_tags(elb, id_),
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
        if news.get("healthCheck") and not _covers(olds.get("healthCheck"), news["healthCheck"]):
            elb.modify_target_group(TargetGroupArn=id_, **_health_args(news))
        for table, applies in self._attribute_tables(news):
            if values := _attribute_changes(table, applies, olds, news):
                elb.modify_target_group_attributes(
                    TargetGroupArn=id_, Attributes=_attribute_args(table, values)
                )
        _retag(elb, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        elb = aws.client("elbv2")
        deadline = time.monotonic() + _TG_IN_USE
        while True:  # a listener just deleted may still hold it for a while
            try:
                elb.delete_target_group(TargetGroupArn=id_)
                return
            except ClientError as err:
                if _gone(err):
                    return
                if _code(err) != "ResourceInUse" or time.monotonic() > deadline:
                    raise
            time.sleep(_POLL)


# --- aws:lb/listener:Listener ---------------------------------------------------------


def _actions(declared: list[Props]) -> list[Raw]:
    """Declared ``defaultActions`` (forward to one target group) -> API actions."""
    return [
        {
            "Type": "forward",
            "TargetGroupArn": action["targetGroupArn"],
            "Order": int(action.get("order") or i),  # Terraform's default: the position
        }
        for i, action in enumerate(declared, start=1)
    ]


def _action_outputs(live: list[Raw]) -> list[Props]:
    outputs = []
    for action in sorted(live, key=lambda a: a.get("Order", 0)):
        groups = (action.get("ForwardConfig") or {}).get("TargetGroups") or []
        arn = action.get("TargetGroupArn") or (groups[0]["TargetGroupArn"] if groups else None)
        output: Props = {"type": action["Type"], "targetGroupArn": arn}
        if action.get("Order") is not None:
            output["order"] = action["Order"]
        outputs.append({k: v for k, v in output.items() if v is not None})
    return outputs


# An HTTPS listener's header settings (listener attributes ``routing.http.*``), by the
# names pulumi-aws gives them.
_HEADER_SETTINGS = tuple(
    f"routingHttp{name}"
    for name in (
        *(f"RequestXAmznMtlsClientcert{h}HeaderName"
          for h in ("", "Issuer", "Leaf", "SerialNumber", "Subject", "Validity")),
        "RequestXAmznTlsCipherSuiteHeaderName",
        "RequestXAmznTlsVersionHeaderName",
        *(f"ResponseAccessControl{h}HeaderValue"
          for h in ("AllowCredentials", "AllowHeaders", "AllowMethods", "AllowOrigin",
                    "ExposeHeaders", "MaxAge")),
        "ResponseContentSecurityPolicyHeaderValue",
        "ResponseServerEnabled",
        "ResponseStrictTransportSecurityHeaderValue",
        "ResponseXContentTypeOptionsHeaderValue",
        "ResponseXFrameOptionsHeaderValue",
    )
)  # fmt: skip


@register
class Listener(ResourceType):
    """A listener; id = its ARN. Only ``forward`` default actions to one target group
    (the program's shape) are served."""

    token = "aws:lb/listener:Listener"
    not_read = {
        **dict.fromkeys(
            ("alpnPolicy", "mutualAuthentication", *_HEADER_SETTINGS),
            "an HTTPS listener's setting: the program's listeners are TCP; " + UNTRIED,
        ),
        "tcpIdleTimeoutSeconds": OPTIONAL_COMPUTED,
        "region": REGION,
    }  # fmt: skip
    force_new = (ForceNew("loadBalancerArn", f"{_LISTENER_GO}: load_balancer_arn ForceNew"),)
    computed = ("arn", "tagsAll")
    optional_computed = ("defaultActions[].order", "protocol")

    def check(self, req: Request, news: Props) -> Props:
        actions = news.get("defaultActions") or []
        if not actions:
            raise ValueError("defaultActions is required")
        for action in actions:
            if str(action.get("type", "")).lower() != "forward" or not action.get("targetGroupArn"):
                raise ValueError(
                    "the sandbox serves only default actions of type forward with a targetGroupArn"
                )
        props = dict(news)
        if props.get("protocol"):
            props["protocol"] = str(props["protocol"]).upper()
        return props

    @staticmethod
    def _settings(props: Props) -> Raw:
        """What CreateListener and ModifyListener take besides the ARNs."""
        args: Raw = {"DefaultActions": _actions(props["defaultActions"])}
        if props.get("port"):
            args["Port"] = int(props["port"])
        if props.get("protocol"):
            args["Protocol"] = props["protocol"]
        elif "loadbalancer/app/" in props.get("loadBalancerArn", ""):
            args["Protocol"] = "HTTP"  # Terraform's default for ALBs
        if props.get("sslPolicy"):
            args["SslPolicy"] = props["sslPolicy"]
        if props.get("certificateArn"):
            args["Certificates"] = [{"CertificateArn": props["certificateArn"]}]
        return args

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        elb = aws.client("elbv2")
        listener = elb.create_listener(
            LoadBalancerArn=inputs["loadBalancerArn"], **self._settings(inputs), **_tag_args(inputs)
        )["Listeners"][0]
        arn = listener["ListenerArn"]
        _wait(lambda: self._listener(elb, arn), lambda _: True, f"listener {arn}", _TIMEOUT)
        return arn, self.read(aws, req, arn, inputs)

    @staticmethod
    def _listener(elb: Any, arn: str) -> Raw:
        return _one(lambda: elb.describe_listeners(ListenerArns=[arn])["Listeners"])

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        elb = aws.client("elbv2")
        listener = self._listener(elb, id_)
        outputs: Props = {
            "arn": id_,
            "loadBalancerArn": listener["LoadBalancerArn"],
            "port": listener.get("Port"),
            "protocol": listener.get("Protocol"),
            "defaultActions": _action_outputs(listener.get("DefaultActions") or []),
            **_tags(elb, id_),
        }
        if listener.get("Protocol") in ("HTTPS", "TLS"):  # the only ones with TLS settings
            outputs["sslPolicy"] = listener.get("SslPolicy")
            certificates = listener.get("Certificates") or []
            if len(certificates) == 1:
                outputs["certificateArn"] = certificates[0]["CertificateArn"]
        return {k: v for k, v in outputs.items() if v is not None}

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        elb = aws.client("elbv2")
        settings = ("port", "protocol", "defaultActions", "sslPolicy", "certificateArn")
        if any(not _covers(olds.get(p), news.get(p)) for p in settings):
            elb.modify_listener(ListenerArn=id_, **self._settings(news))
        _retag(elb, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        _ignore_gone(lambda: aws.client("elbv2").delete_listener(ListenerArn=id_))
