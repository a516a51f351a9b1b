"""Build the sandbox's live cluster as another tool would have: boto3 calls, no engine.

A user's cluster was built by kops, Terraform or by hand; no Pulumi state knows it and
its resources carry that tool's names. The sandbox's world is built the same way: the
stack's baseline, as the program declares it for a cluster whose names are kops's
(:mod:`.kops`), with none of kubeshift's own tags (``own_tags: false``: kops never
writes ``managed-by: kubeshift`` or ``kubeshift.io/*``) nor its shared security group
(``shared_group: false``: kops's instances carry its ``masters`` or ``nodes`` group
only) and with the tags kops adds of its own, kops's descriptions of its
security groups and kops's boot script in its workers' launch templates, is created
resource by resource with boto3 against moto: each registration of the program, run
under the SDK's mocks, is answered by creating the resource through the stand-in
provider's calls for its type. kops's own security-group rules, which the program does
not declare, are then added as kops adds them (:data:`.kops.KOPS_RULES`, and
:data:`.kops.CALICO_RULES` where the cluster runs Calico), and so is each member's
second etcd volume, for events (:func:`add_events_volumes`). Nothing is recorded
anywhere but in moto: ``kubeshift adopt`` has to find it all, as on a real account.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pulumi
from botocore.exceptions import ClientError

from automation.adoption.live import template_spec
from automation.aws.lookup.model import tag_map
from automation.errors import KubeshiftError
from automation.render import render_program
from automation.sandbox.provider import types as _types  # noqa: F401 - registers the types
from automation.sandbox.provider.model import REGISTRY, Aws, Props, Request
from automation.sandbox.provider.types.autoscaling import launch_argument
from automation.sandbox.world.kops import (
    ETCD_MAIN_TAG,
    EVENTS_VOLUME_SIZE,
    KopsRule,
    as_kops_makes,
    domain,
    events_volume_tags,
    kops_boot_scripts,
    kops_names,
    kops_policy,
    rules_for,
)
from components import config as stack_config

GROUP = "aws:autoscaling/group:Group"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
VPC = "aws:ec2/vpc:Vpc"
KOPS_RULE = "kops:security-group-rule"
"""What :func:`open_as_kops` built: a rule kops adds and the program does not declare."""
KOPS_POLICY = "kops:role-policy"
"""What :func:`grant_as_kops` built: a role's inline policy, kops's grants."""
EVENTS_VOLUME = "kops:etcd-events-volume"
"""What :func:`add_events_volumes` built: a member's volume of kops's events etcd."""


class WorldError(KubeshiftError):
    """The sandbox could not build its live cluster."""


@dataclass(frozen=True)
class Built:
    type: str
    name: str
    id: str


class BuildingMocks(pulumi.runtime.Mocks):
    """Answers each AWS resource the program registers by creating it in moto."""

    def __init__(self, aws: Aws, members: int) -> None:
        self.aws = aws
        self.members = members
        self.instance_groups: dict[str, str] = {}
        """Launch template id -> the instance group kops named it after."""
        self.built: list[Built] = []
        self.groups: list[tuple[Request, str, Props, Props]] = []
        """Each group made empty: its request, name, inputs as made, inputs declared."""
        self._lock = threading.Lock()

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        inputs = dict(args.inputs)
        if not args.custom:
            return "", inputs
        kind = REGISTRY.get(args.typ)
        if kind is None:
            raise WorldError(f"The sandbox cannot build {args.typ} ({args.name}).")
        request = Request(name=args.name, token=args.typ)
        group = None
        if args.typ == GROUP:  # kops's instance group is its launch template's
            template = template_spec(launch_argument(inputs)).get("LaunchTemplateId", "")
            group = self.instance_groups.get(template)
        made = as_kops_makes(args.typ, inputs, self.members, instance_group=group)
        live = kind.check(request, made)
        declared = live
        if args.typ == GROUP:  # empty until every fixed address is taken (launch_groups)
            live = {**live, "minSize": 0, "desiredCapacity": 0}
        id_, outputs = kind.create(self.aws, request, live)
        with self._lock:
            self.built.append(Built(args.typ, args.name, id_))
            if args.typ == GROUP:
                self.groups.append((request, id_, live, declared))
            if args.typ == TEMPLATE:
                self.instance_groups[id_] = str(inputs.get("name", "")).split(".", 1)[0]
        return id_, outputs

    def launch_groups(self) -> None:
        """Give each group its declared capacity, as the provider's update does, and
        wait until it is in service. Instances launch last, as a cluster's do after its
        subnets' fixed addresses (the members' interfaces) are taken, so none is given
        one of them."""
        kind = REGISTRY[GROUP]
        for request, name, made, declared in sorted(self.groups, key=lambda g: g[1]):
            kind.update(self.aws, request, name, made, declared)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[Any]]:
        return {}, []  # no stack to read back: the program skips its progress check


def _baseline(values: Mapping[str, Any]) -> tuple[str, list[tuple[str, Mapping[str, Any]]]]:
    """The cluster's name, and (type, inputs) of what the first phase declares of a
    cluster built as kops builds it (:func:`as_kops_groups`)."""
    values = as_kops_groups(values)
    config = stack_config.load_config(values)
    rendered = render_program(values, config.phase_ids[0]).resources
    return config.cluster.name, [(r.type, r.inputs) for r in rendered]


def foreign_names(values: Mapping[str, Any]) -> dict[str, str]:
    """The names kops would have given the baseline's named resources."""
    return kops_names(*_baseline(values))


def foreign_boot_scripts(values: Mapping[str, Any]) -> dict[str, str]:
    """The boot scripts kops would have written into the baseline's worker templates."""
    return kops_boot_scripts(*_baseline(values))


def with_names(values: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    """``values`` whose cluster block keeps ``names`` (``kubeshift:cluster.names``)."""
    cluster = dict(values[stack_config.CLUSTER_KEY])
    cluster["names"] = {**dict(cluster.get("names") or {}), **names}
    return {**values, stack_config.CLUSTER_KEY: cluster}


def with_boot_scripts(values: Mapping[str, Any], scripts: Mapping[str, str]) -> dict[str, Any]:
    """``values`` whose launch templates keep the boot scripts ``scripts``
    (``kubeshift:cluster.user_data``): the program then grants nothing for its own."""
    cluster = dict(values[stack_config.CLUSTER_KEY])
    cluster["user_data"] = {**dict(cluster.get("user_data") or {}), **scripts}
    return {**values, stack_config.CLUSTER_KEY: cluster}


def as_kops_tags(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` whose program declares none of kubeshift's own tags, which kops never
    writes (``kubeshift:cluster.own_tags: false``)."""
    cluster = {**dict(values[stack_config.CLUSTER_KEY]), "own_tags": False}
    return {**values, stack_config.CLUSTER_KEY: cluster}


def as_kops(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` as the program declares the cluster kops built: kops's names, boot
    scripts (nodeup: nothing of kubeshift's runs, to need kubeshift's grants), tags and
    groups."""
    baseline = _baseline(values)  # one render gives both
    named = with_names(values, kops_names(*baseline))
    return as_kops_groups(as_kops_tags(with_boot_scripts(named, kops_boot_scripts(*baseline))))


def as_kops_groups(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` whose instances carry no group in common, as kops's carry its
    ``masters`` or ``nodes`` group only (``kubeshift:cluster.shared_group: false``)."""
    cluster = {**dict(values[stack_config.CLUSTER_KEY]), "shared_group": False}
    return {**values, stack_config.CLUSTER_KEY: cluster}


def _permission(rule: KopsRule, group_ids: Mapping[str, str]) -> dict[str, Any]:
    permission: dict[str, Any] = {"IpProtocol": rule.protocol}
    if rule.ported:
        permission |= {"FromPort": rule.from_port, "ToPort": rule.to_port}
    if rule.peer in group_ids:
        permission["UserIdGroupPairs"] = [{"GroupId": group_ids[rule.peer]}]
    elif ":" in rule.peer:
        permission["Ipv6Ranges"] = [{"CidrIpv6": rule.peer}]
    else:
        permission["IpRanges"] = [{"CidrIp": rule.peer}]
    return permission


def open_as_kops(aws: Aws, cluster: str, vpc_id: str, *, calico: bool) -> list[Built]:
    """Add kops's own rules to its groups in ``vpc_id`` (Calico's too when the cluster
    runs it), tagged as kops tags them; a rule the program also declares is there
    already and is left as it is."""
    dns = domain(cluster)
    names = [f"{role}.{dns}" for role in ("masters", "nodes", "api-elb")]
    listed = aws.ec2.describe_security_groups(
        Filters=[{"Name": "vpc-id", "Values": [vpc_id]}, {"Name": "group-name", "Values": names}]
    )["SecurityGroups"]
    group_ids = {g["GroupName"].removesuffix(f".{dns}"): g["GroupId"] for g in listed}
    added = []
    for rule in rules_for(calico):
        if rule.group not in group_ids:
            continue
        tags = {
            "KubernetesCluster": cluster, f"kubernetes.io/cluster/{cluster}": "owned",
            "Name": rule.name(dns),
        }  # fmt: skip
        authorize = (
            aws.ec2.authorize_security_group_egress
            if rule.egress
            else aws.ec2.authorize_security_group_ingress
        )
        try:
            answer = authorize(
                GroupId=group_ids[rule.group],
                IpPermissions=[_permission(rule, group_ids)],
                TagSpecifications=[{
                    "ResourceType": "security-group-rule",
                    "Tags": [{"Key": k, "Value": v} for k, v in tags.items()],
                }],
            )  # fmt: skip
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "InvalidPermission.Duplicate":
                continue  # the program declares it too: built already
            raise
        added += [
            Built(KOPS_RULE, rule.name(dns), r["SecurityGroupRuleId"])
            for r in answer.get("SecurityGroupRules", [])
        ]
    return added


def grant_as_kops(aws: Aws, cluster: str) -> list[Built]:
    """Give the cluster's two roles the inline policies kops gives them
    (:func:`.kops.kops_policy`), which nothing of kubeshift's declares."""
    added = []
    for role in ("masters", "nodes"):
        name, document = kops_policy(role, cluster)
        aws.client("iam").put_role_policy(RoleName=name, PolicyName=name, PolicyDocument=document)
        added.append(Built(KOPS_POLICY, name, f"{name}:{name}"))
    return added


def add_events_volumes(aws: Aws, cluster: str, members: int) -> list[Built]:
    """Give each member the second etcd volume kops gives it, for events, in its main
    volume's AZ, as kops sizes and tags it; the member's boot attaches it beside the
    main one (as etcd-manager does), and nothing of kubeshift's declares it."""
    mains = aws.ec2.describe_volumes(
        Filters=[
            {"Name": "tag-key", "Values": [ETCD_MAIN_TAG]},
            {"Name": f"tag:kubernetes.io/cluster/{cluster}", "Values": ["owned"]},
        ]
    )["Volumes"]
    added = []
    for main in sorted(mains, key=lambda v: tag_map(v.get("Tags"))[ETCD_MAIN_TAG]):
        member = tag_map(main.get("Tags"))[ETCD_MAIN_TAG].split("/", 1)[0]
        tags = events_volume_tags(cluster, member, members)
        made = aws.ec2.create_volume(
            AvailabilityZone=main["AvailabilityZone"], Size=EVENTS_VOLUME_SIZE,
            VolumeType="gp3", Encrypted=True,
            TagSpecifications=[{
                "ResourceType": "volume",
                "Tags": [{"Key": k, "Value": v} for k, v in tags.items()],
            }],
        )  # fmt: skip
        added.append(Built(EVENTS_VOLUME, tags["Name"], made["VolumeId"]))
    return added


def build(values: Mapping[str, Any], aws: Aws) -> list[Built]:
    """Create the first phase of the stack ``values`` in moto, named as kops names it;
    return what was created, in the order it was."""
    named = as_kops(values)
    config = stack_config.load_config(named)
    mocks = BuildingMocks(aws, config.cluster.control_plane.members)
    try:
        render_program(named, config.phase_ids[0], mocks=mocks)
        vpc_id = next(b.id for b in mocks.built if b.type == VPC)
        # the sandbox runs Calico (on IPIP) where the stack switches its overlay
        calico = config.migration.overlay is not None
        mocks.built += open_as_kops(aws, config.cluster.name, vpc_id, calico=calico)
        mocks.built += grant_as_kops(aws, config.cluster.name)
        mocks.built += add_events_volumes(aws, config.cluster.name, mocks.members)
        mocks.launch_groups()
    except WorldError:
        raise
    except Exception as exc:  # a boto3 refusal surfaces through the SDK's registration
        raise WorldError(
            f"Building the live cluster stopped after {len(mocks.built)} resources: {exc}"
        ) from exc
    return mocks.built
