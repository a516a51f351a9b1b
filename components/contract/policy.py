"""Policy checks over every resource a program declares, as plain functions.

pulumi-policy's ``PolicyPack`` starts a server when constructed, so the rules live
here as functions over recorded resources (type, logical name, id, engine inputs).
``kubeshift render`` and ``diff`` run them on every render (``automation.review.diff.
policy_violations``; a violation exits 3), and the tests on every phase of the
example stacks. Each check returns violations; an empty list means compliant.
"""

from __future__ import annotations

import base64
import binascii
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from components.contract.naming import NameKind, check_name
from components.contract.tags import LEGACY_CLUSTER_TAG, block_key

ANYWHERE = ("0.0.0.0/0", "::/0")
LB_ROLES = ("ingress-lb", "api-lb")

NAMED_KINDS: dict[str, NameKind] = {
    "aws:lb/loadBalancer:LoadBalancer": NameKind.LOAD_BALANCER,
    "aws:lb/targetGroup:TargetGroup": NameKind.TARGET_GROUP,
    "aws:autoscaling/group:Group": NameKind.AUTOSCALING_GROUP,
    "aws:ec2/launchTemplate:LaunchTemplate": NameKind.LAUNCH_TEMPLATE,
    "aws:iam/role:Role": NameKind.IAM_ROLE,
    "aws:iam/instanceProfile:InstanceProfile": NameKind.INSTANCE_PROFILE,
    "aws:ec2/securityGroup:SecurityGroup": NameKind.SECURITY_GROUP,
}

SG_RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
SG = "aws:ec2/securityGroup:SecurityGroup"
ASG = "aws:autoscaling/group:Group"
SUBNET = "aws:ec2/subnet:Subnet"
TG = "aws:lb/targetGroup:TargetGroup"
ATTACHMENT = "aws:autoscaling/attachment:Attachment"
RECORD = "aws:route53/record:Record"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
LOAD_BALANCER = "aws:lb/loadBalancer:LoadBalancer"


class Recorded(Protocol):
    """What a check needs of a declared resource (``automation.review.render`` provides it)."""

    @property
    def type(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def id(self) -> str: ...
    @property
    def inputs(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Violation:
    policy: str
    resource: str
    message: str

    def __str__(self) -> str:
        return f"[{self.policy}] {self.resource}: {self.message}"


def _attr(resource: Recorded, key: str) -> Any:
    """A computed attribute (``arn``...) when the record carries outputs, else an input."""
    outputs = getattr(resource, "outputs", None) or {}
    return outputs.get(key, resource.inputs.get(key))


def _by_id(resources: Iterable[Recorded]) -> dict[str, Recorded]:
    return {r.id: r for r in resources if r.id}


def _group_role(group: Recorded) -> str | None:
    """A security group's role: its ``kubeshift.io/role`` tag, else the end of its
    logical name (``<component>-<role>``), which a cluster without kubeshift's own tags
    still has."""
    tagged = (group.inputs.get("tags") or {}).get("kubeshift.io/role")
    return tagged or next((r for r in LB_ROLES if group.name.endswith(f"-{r}")), None)


def no_open_ingress(resources: Sequence[Recorded], public_ports: Iterable[int]) -> list[Violation]:
    """0.0.0.0/0 (or ::/0) ingress only on a declared public listener port of an LB group."""
    allowed = set(public_ports)
    index = _by_id(resources)
    found = []
    for r in resources:
        if r.type != SG_RULE:
            continue
        cidr = r.inputs.get("cidrIpv4") or r.inputs.get("cidrIpv6")
        if cidr not in ANYWHERE:
            continue
        group = index.get(r.inputs.get("securityGroupId", ""))
        role = _group_role(group) if group else None
        port, to_port = r.inputs.get("fromPort"), r.inputs.get("toPort")
        if role not in LB_ROLES or port != to_port or port not in allowed:
            ports = "-".join(
                str(int(p)) if isinstance(p, int | float) else str(p) for p in (port, to_port)
            )
            found.append(Violation("no-open-ingress", r.name, f"admits {cidr} on {ports}"))
    for r in resources:
        if r.type == SG:
            for rule in r.inputs.get("ingress") or []:
                if set(rule.get("cidrBlocks") or []) & set(ANYWHERE):
                    found.append(Violation("no-open-ingress", r.name, "inline open ingress"))
    return found


def asgs_tagged(
    resources: Sequence[Recorded], cluster: str, legacy: bool = True
) -> list[Violation]:
    """Every ASG carries (and propagates) the cluster tags the runner searches by (the
    legacy one too unless the cluster's tool never wrote it)."""
    wanted = {f"kubernetes.io/cluster/{cluster}": "owned"}
    if legacy:
        wanted = {LEGACY_CLUSTER_TAG: cluster, **wanted}
    found = []
    for r in resources:
        if r.type != ASG:
            continue
        tags = {t["key"]: t for t in r.inputs.get("tags") or []}
        for key, value in wanted.items():
            tag = tags.get(key)
            if tag is None or tag.get("value") != value or not tag.get("propagateAtLaunch"):
                found.append(Violation("asg-cluster-tags", r.name, f"missing {key}={value}"))
    return found


def names_valid_and_unique(resources: Sequence[Recorded]) -> list[Violation]:
    """Physical names obey AWS's limits and are unique per kind."""
    found = []
    seen: dict[tuple[str, str], str] = {}
    for r in resources:
        kind = NAMED_KINDS.get(r.type)
        name = r.inputs.get("name")
        if kind is None:
            continue
        if not isinstance(name, str):
            found.append(Violation("names", r.name, "has no explicit physical name"))
            continue
        try:
            check_name(name, kind)
        except ValueError as exc:
            found.append(Violation("names", r.name, str(exc)))
        # IAM roles and instance profiles are different namespaces; so are all kinds.
        other = seen.setdefault((r.type, name), r.name)
        if other != r.name:
            found.append(Violation("names", r.name, f"{name!r} also used by {other}"))
    return found


def attachments_same_vpc(resources: Sequence[Recorded]) -> list[Violation]:
    """A target group only gets ASGs whose subnets are in the target group's VPC."""
    index = _by_id(resources)
    by_arn = {_attr(r, "arn"): r for r in resources if r.type == TG}
    groups = {r.inputs.get("name"): r for r in resources if r.type == ASG}
    found = []
    for r in resources:
        if r.type != ATTACHMENT:
            continue
        group = groups.get(r.inputs.get("autoscalingGroupName"))
        tg = by_arn.get(r.inputs.get("lbTargetGroupArn", ""))
        if group is None or tg is None:
            found.append(Violation("attachment-vpc", r.name, "unknown ASG or target group"))
            continue
        for subnet_id in group.inputs.get("vpcZoneIdentifiers") or []:
            subnet = index.get(subnet_id)
            if subnet is None or subnet.inputs.get("vpcId") != tg.inputs.get("vpcId"):
                found.append(
                    Violation(
                        "attachment-vpc",
                        r.name,
                        f"ASG {group.name} is not in the VPC of target group {tg.name}",
                    )
                )
    return found


def load_balancers_in_one_vpc(resources: Sequence[Recorded]) -> list[Violation]:
    """A load balancer's subnets all belong to one VPC (an LB cannot span two VPCs)."""
    index = _by_id(resources)
    found = []
    for r in resources:
        if r.type != LOAD_BALANCER:
            continue
        vpcs = {
            index[s].inputs.get("vpcId") if s in index else None
            for s in r.inputs.get("subnets") or []
        }
        if len(vpcs) != 1 or None in vpcs:
            found.append(
                Violation("lb-one-vpc", r.name, f"subnets span VPCs {sorted(map(str, vpcs))}")
            )
    return found


def records_consistent(resources: Sequence[Recorded]) -> list[Violation]:
    """No DNS name with a CNAME next to another record; CNAMEs have one value."""
    types: dict[str, list[str]] = defaultdict(list)
    found = []
    for r in resources:
        if r.type != RECORD:
            continue
        types[r.inputs.get("name", "")].append(r.inputs.get("type", ""))
        if r.inputs.get("type") == "CNAME" and len(r.inputs.get("records") or []) != 1:
            found.append(Violation("records", r.name, "CNAME needs exactly one value"))
    for name, kinds in types.items():
        if "CNAME" in kinds and len(kinds) > 1:
            found.append(Violation("records", name, f"CNAME coexists with {kinds}"))
    return found


def user_data_encoded(resources: Sequence[Recorded]) -> list[Violation]:
    """Launch template user data is base64, as EC2 requires."""
    found = []
    for r in resources:
        if r.type != LAUNCH_TEMPLATE or "userData" not in r.inputs:
            continue
        try:
            base64.b64decode(r.inputs["userData"], validate=True)
        except (binascii.Error, TypeError):
            found.append(Violation("user-data", r.name, "user data is not base64"))
    return found


TAGS_PER_RESOURCE = 50
"""AWS's limit of user tags on one resource (EC2, Auto Scaling, ELB, IAM, Route53 alike:
EC2 ``TagLimitExceeded``, the tagging best-practices page's "Maximum tags per resource")."""


def _tag_sets(r: Recorded) -> list[tuple[str, int]]:
    """Each set of tags ``r`` declares (its own, an Auto Scaling group's blocks, each of
    a launch template's tag specifications), with how many tags it holds."""
    sets: list[tuple[str, int]] = []
    tags = r.inputs.get("tags")
    if isinstance(tags, Mapping):
        sets.append(("tags", len(tags)))
    elif isinstance(tags, list):
        sets.append(("tags", len({block_key(t) for t in tags})))
    for spec in r.inputs.get("tagSpecifications") or []:
        if isinstance(spec, Mapping) and isinstance(spec.get("tags"), Mapping):
            sets.append((f"{spec.get('resourceType', '')} tags", len(spec["tags"])))
    return sets


def tags_within_aws_limit(resources: Sequence[Recorded]) -> list[Violation]:
    """No resource (nor what a template tags at launch) carries more tags than AWS takes:
    the cluster's tags, kept tags and kubeshift's own together."""
    found = []
    for r in resources:
        for what, count in _tag_sets(r):
            if count > TAGS_PER_RESOURCE:
                found.append(
                    Violation("tags", r.name, f"{count} {what}; AWS takes {TAGS_PER_RESOURCE}")
                )
    return found


def check_all(
    resources: Sequence[Recorded],
    cluster: str,
    public_ports: Iterable[int] = (),
    *,
    legacy_tags: bool = True,
) -> list[Violation]:
    """Every policy above."""
    return [
        *no_open_ingress(resources, public_ports),
        *asgs_tagged(resources, cluster, legacy_tags),
        *names_valid_and_unique(resources),
        *attachments_same_vpc(resources),
        *load_balancers_in_one_vpc(resources),
        *records_consistent(resources),
        *user_data_encoded(resources),
        *tags_within_aws_limit(resources),
    ]


def public_ports_of(
    ingress_public: bool, ingress_ports: Iterable[int], api_public: bool, api_port: int
) -> set[int]:
    """Ports a config declares public."""
    ports = set(ingress_ports) if ingress_public else set()
    if api_public:
        ports.add(api_port)
    return ports


def index_by_name(resources: Iterable[Recorded]) -> Mapping[str, Recorded]:
    return {r.name: r for r in resources}
