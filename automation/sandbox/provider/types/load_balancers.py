"""``aws:lb`` load balancers (``aws:lb/loadBalancer:LoadBalancer``): application,
network or gateway; id = the ARN.

``force_new`` is what the Terraform AWS provider's schema marks ``ForceNew``
(``internal/service/elbv2/load_balancer.go``), which is what pulumi-aws replaces on, with
its CustomizeDiff's conditional replacement of a network load balancer; every other
declared property changes in place. Creates and updates wait for the load balancer to be
``active`` and deletes wait for its network interfaces to go, as Terraform does.

moto gaps: it gives network load balancers ``app/`` ARNs (so ``arnSuffix`` reads
``app/...`` there) and creates no network interfaces.
"""

from __future__ import annotations

import logging
from typing import Any

from automation.sandbox.provider.diffing import contains_unknown
from automation.sandbox.provider.model import (
    MOTO_LACKS,
    NAME_PREFIX,
    OPTIONAL_COMPUTED,
    REGION,
    UNTRIED,
    Aws,
    ForceNew,
    Props,
    Request,
    ResourceType,
    register,
)
from automation.sandbox.provider.types.elbv2_calls import (
    TIMEOUT,
    Attributes,
    Raw,
    applicable,
    attribute_args,
    attribute_changes,
    attribute_outputs,
    check_name,
    ignore_gone,
    one,
    read_tags,
    refuse_existing,
    retag,
    tag_args,
    wait,
)

_LB_GO = "internal/service/elbv2/load_balancer.go"
_ENI_TIMEOUT = 300.0  # how long Terraform waits for a deleted LB's interfaces
log = logging.getLogger(__name__)


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

    def check(self, req: Request, news: Props) -> Props:
        props = {"loadBalancerType": "application", **news}
        kind = props["loadBalancerType"]
        defaults = {p: _LB_ATTRIBUTES[p][2] for p in applicable(_LB_ATTRIBUTES, kind)}
        props = check_name("LoadBalancer", {**defaults, **props}, req)
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
        refuse_existing(
            lambda: elb.describe_load_balancers(Names=[name])["LoadBalancers"],
            "DuplicateLoadBalancerName",
            f"load balancer {name}",
            "CreateLoadBalancer",
        )
        scheme = "internal" if inputs.get("internal") else "internet-facing"
        args: Raw = {"Name": name, "Type": kind, "Scheme": scheme, **tag_args(inputs)}
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
        values = {p: inputs[p] for p in applicable(_LB_ATTRIBUTES, kind) if p in inputs}
        if values:
            elb.modify_load_balancer_attributes(
                LoadBalancerArn=arn, Attributes=attribute_args(_LB_ATTRIBUTES, values)
            )
            self._active(elb, arn)
        return arn, self.read(aws, req, arn, inputs)

    @staticmethod
    def _active(elb: Any, arn: str) -> None:
        wait(
            lambda: one(
                lambda: elb.describe_load_balancers(LoadBalancerArns=[arn])["LoadBalancers"]
            ),
            lambda lb: lb["State"]["Code"] == "active",
            f"load balancer {arn} becoming active",
            TIMEOUT,
        )

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        elb = aws.client("elbv2")
        lb = one(lambda: elb.describe_load_balancers(LoadBalancerArns=[id_])["LoadBalancers"])
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
            **attribute_outputs(_LB_ATTRIBUTES, lb["Type"], attributes),
            **read_tags(elb, id_),
        }

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        elb = aws.client("elbv2")
        kind = news["loadBalancerType"]
        if values := attribute_changes(_LB_ATTRIBUTES, kind, olds, news):
            elb.modify_load_balancer_attributes(
                LoadBalancerArn=id_, Attributes=attribute_args(_LB_ATTRIBUTES, values)
            )
        # Both are Optional+Computed sets: left out means "keep".
        groups, subnets = news.get("securityGroups"), news.get("subnets")
        if groups is not None and set(olds.get("securityGroups") or []) != set(groups):
            elb.set_security_groups(LoadBalancerArn=id_, SecurityGroups=groups)
        if subnets and set(olds.get("subnets") or []) != set(subnets):
            elb.set_subnets(LoadBalancerArn=id_, Subnets=subnets)  # see the class note
        retag(elb, id_, olds, news)
        self._active(elb, id_)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        ignore_gone(lambda: aws.client("elbv2").delete_load_balancer(LoadBalancerArn=id_))
        # AWS releases the load balancer's network interfaces minutes later; until then
        # its subnets and security groups cannot be deleted. Like Terraform, wait a while
        # for them and carry on if they linger.
        described = [{"Name": "description", "Values": [f"ELB {id_.split(':loadbalancer/')[-1]}"]}]
        try:
            wait(
                lambda: aws.ec2.describe_network_interfaces(Filters=described)["NetworkInterfaces"],
                lambda interfaces: not interfaces,
                f"network interfaces of {id_} going",
                _ENI_TIMEOUT,
            )
        except TimeoutError as exc:
            log.warning("%s", exc)
