"""A snapshot of what runs for one cluster, read once for ``adopt --write-config``.

Everything the proposal needs comes from a handful of paginated describe calls:
the VPC tagged for the cluster and its subnets, gateways and NAT gateways; the Auto
Scaling groups tagged for it with their launch templates; the control plane's etcd
volumes and fixed interfaces; the load balancers the groups' target groups belong
to, their listeners and security-group rules; the records of the hosted zone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from automation.aws.lookup.model import Lookup, Missing, by, only, tag_map

Raw = dict[str, Any]


@dataclass
class Balancer:
    """One load balancer in front of some of the cluster's groups."""

    lb: Raw
    listeners: list[Raw]
    target_groups: dict[str, Raw]
    """Target group ARN -> target group."""
    rules: list[Raw]
    """Ingress rules of its security groups."""

    @property
    def internal(self) -> bool:
        return bool(self.lb.get("Scheme") == "internal")


@dataclass
class LiveCluster:
    name: str
    vpc: Raw
    subnets: list[Raw]
    nat_gateways: int
    internet_gateway: bool
    groups: list[Raw]
    templates: dict[str, Raw]
    """Launch template id -> the version the group runs (``LaunchTemplateData``)."""
    volumes: list[Raw]
    interfaces: list[Raw]
    balancers: dict[str, Balancer] = field(default_factory=dict)
    """Load balancer ARN -> balancer."""
    records: list[Raw] = field(default_factory=list)
    template_names: dict[str, str] = field(default_factory=dict)
    """Launch template id -> its name."""
    group_names: dict[str, str] = field(default_factory=dict)
    """Security group id -> its name (the groups the templates and balancers use)."""
    group_descriptions: dict[str, str] = field(default_factory=dict)
    """Security group id -> its description (the same groups)."""
    profile_roles: dict[str, str] = field(default_factory=dict)
    """Instance profile name -> the name of its role."""
    attached_policies: dict[str, list[str]] = field(default_factory=dict)
    """Role name -> the ARNs of the policies attached to it."""


def _pages(client: Any, operation: str, key: str, **args: Any) -> list[Raw]:
    pages = client.get_paginator(operation).paginate(**args)
    return [dict(item) for page in pages for item in page[key]]


def template_spec(group: Raw) -> Raw:
    """The launch template (``LaunchTemplateId``, ``Version``) a group launches from."""
    spec = group.get("LaunchTemplate")
    if spec:
        return dict(spec)
    policy = group.get("MixedInstancesPolicy") or {}
    return dict(policy.get("LaunchTemplate", {}).get("LaunchTemplateSpecification", {}))


def _members_own(attachments: list[Raw]) -> bool:
    """Whether a volume or interface tagged for the cluster (and nothing else: a cluster
    a Terraform module built) is made apart from any instance, as a member's etcd volume
    or fixed interface is: unattached, or attached as no instance's own (a root volume,
    a primary interface, anything its template made, goes with the instance)."""
    return all(
        not a.get("DeleteOnTermination") and a.get("DeviceIndex", 1) != 0 for a in attachments
    )


def read(lookup: Lookup, zone_id: str | None) -> LiveCluster:
    """Read what runs for ``lookup.cluster`` (one sentence when the VPC is ambiguous)."""
    ec2, clients = lookup.clients.ec2, lookup.clients
    tag = lookup.cluster_tag
    vpcs = ec2.describe_vpcs(Filters=[by("tag-key", tag)])["Vpcs"]
    if not vpcs and not lookup.cluster_id:
        _refuse_dotted_id(lookup)
    vpc_id = only("the cluster", f"VPC tagged {tag}", [v["VpcId"] for v in vpcs])
    vpc = dict(next(v for v in vpcs if v["VpcId"] == vpc_id))
    subnets = _pages(ec2, "describe_subnets", "Subnets", Filters=[by("vpc-id", vpc_id)])
    nats = _pages(ec2, "describe_nat_gateways", "NatGateways",
                  Filter=[by("vpc-id", vpc_id), by("state", "available", "pending")])  # fmt: skip
    gateways = ec2.describe_internet_gateways(Filters=[by("attachment.vpc-id", vpc_id)])
    groups = _pages(
        clients.autoscaling,
        "describe_auto_scaling_groups",
        "AutoScalingGroups",
        Filters=[{"Name": "tag-key", "Values": [tag]}],
    )
    templates: dict[str, Raw] = {}
    template_names: dict[str, str] = {}
    for group in groups:
        spec = template_spec(group)
        if spec.get("LaunchTemplateId") and spec["LaunchTemplateId"] not in templates:
            versions = ec2.describe_launch_template_versions(
                LaunchTemplateId=spec["LaunchTemplateId"], Versions=[str(spec.get("Version"))]
            )["LaunchTemplateVersions"]
            templates[spec["LaunchTemplateId"]] = dict(versions[0]["LaunchTemplateData"])
            template_names[spec["LaunchTemplateId"]] = versions[0]["LaunchTemplateName"]
    masters = [by("tag-key", tag), by("tag-key", "k8s.io/role/master")]
    volumes = _pages(ec2, "describe_volumes", "Volumes", Filters=masters)
    if not volumes:  # a Terraform module's: the cluster tag alone (see _members_own)
        tagged = _pages(ec2, "describe_volumes", "Volumes", Filters=[by("tag-key", tag)])
        volumes = [v for v in tagged if _members_own(v.get("Attachments") or [])]
    # the control plane's role tag, which kops gives too; kubeshift's member tag is
    # kubeshift's own, and a cluster another tool built lacks it
    members = [by("vpc-id", vpc_id), by("tag-key", "k8s.io/role/master")]
    interfaces = _pages(ec2, "describe_network_interfaces", "NetworkInterfaces", Filters=members)
    if not interfaces:
        tagged = _pages(ec2, "describe_network_interfaces", "NetworkInterfaces",
                        Filters=[by("vpc-id", vpc_id), by("tag-key", tag)])  # fmt: skip
        interfaces = [i for i in tagged if _members_own([i["Attachment"]] if i.get("Attachment")
                                                         else [])]  # fmt: skip
    live = LiveCluster(
        name=lookup.cluster, vpc=vpc, subnets=subnets, nat_gateways=len(nats),
        internet_gateway=bool(gateways["InternetGateways"]), groups=groups,
        templates=templates, volumes=volumes, interfaces=interfaces,
    )  # fmt: skip
    live.template_names = template_names
    live.balancers = _balancers(lookup, groups)
    security_groups = _security_groups(lookup, live)
    live.group_names = {g["GroupId"]: g["GroupName"] for g in security_groups}
    live.group_descriptions = {g["GroupId"]: g.get("Description", "") for g in security_groups}
    live.profile_roles = _profile_roles(lookup, live)
    live.attached_policies = _attached_policies(lookup, set(live.profile_roles.values()))
    if zone_id:
        live.records = _pages(
            clients.route53, "list_resource_record_sets", "ResourceRecordSets",
            HostedZoneId=zone_id,
        )  # fmt: skip
    return live


def _refuse_dotted_id(lookup: Lookup) -> None:
    """Where no VPC carries the cluster's tag but one carries it under a DNS name that
    starts with the cluster's name (kops's ``<name>.k8s.local``, ``<name>.example.com``),
    say which ``cluster_id`` to set."""
    prefix = f"{lookup.cluster_tag}."
    found = lookup.clients.ec2.describe_vpcs(Filters=[by("tag-key", f"{prefix}*")])["Vpcs"]
    ids = sorted({
        t["Key"].removeprefix("kubernetes.io/cluster/")
        for v in found for t in v.get("Tags", []) if t["Key"].startswith(prefix)
    })  # fmt: skip
    if ids:
        raise Missing(
            f"the cluster: no live VPC tagged {lookup.cluster_tag}, but {len(ids)} tagged as "
            f"cluster {' or '.join(ids)}: set kubeshift:cluster.cluster_id to the one that "
            "is this cluster's ID (kops tags a cluster with its DNS name)."
        )


def _balancers(lookup: Lookup, groups: list[Raw]) -> dict[str, Balancer]:
    """The load balancers whose target groups the groups are attached to."""
    elbv2 = lookup.clients.elbv2
    arns = sorted({arn for g in groups for arn in g.get("TargetGroupARNs", [])})
    balancers: dict[str, Balancer] = {}
    for start in range(0, len(arns), 20):  # DescribeTargetGroups takes up to 20 ARNs
        chunk = arns[start : start + 20]
        for target in elbv2.describe_target_groups(TargetGroupArns=chunk)["TargetGroups"]:
            for lb_arn in target.get("LoadBalancerArns", []):
                if lb_arn not in balancers:
                    balancers[lb_arn] = _balancer(lookup, lb_arn)
                balancers[lb_arn].target_groups[target["TargetGroupArn"]] = dict(target)
    return balancers


def _balancer(lookup: Lookup, arn: str) -> Balancer:
    elbv2, ec2 = lookup.clients.elbv2, lookup.clients.ec2
    described = elbv2.describe_load_balancers(LoadBalancerArns=[arn])["LoadBalancers"][0]
    security_groups = list(described.get("SecurityGroups", []))
    lb: Raw = dict(described)
    rules: list[Raw] = []
    if security_groups:
        filters = [by("group-id", *security_groups)]
        rules = _pages(ec2, "describe_security_group_rules", "SecurityGroupRules", Filters=filters)
    listeners = _pages(elbv2, "describe_listeners", "Listeners", LoadBalancerArn=arn)
    inbound = [r for r in rules if not r.get("IsEgress")]
    return Balancer(lb=lb, listeners=listeners, target_groups={}, rules=inbound)


def _security_groups(lookup: Lookup, live: LiveCluster) -> list[Raw]:
    """The groups the templates and balancers use."""
    ids = {g for data in live.templates.values() for g in template_groups(data)}
    ids |= {g for b in live.balancers.values() for g in b.lb.get("SecurityGroups", [])}
    if not ids:
        return []
    pages = lookup.clients.ec2.get_paginator("describe_security_groups").paginate(
        GroupIds=sorted(ids)
    )
    return [dict(g) for p in pages for g in p["SecurityGroups"]]


def _profile_roles(lookup: Lookup, live: LiveCluster) -> dict[str, str]:
    names = {profile_name(data) for data in live.templates.values() if profile_name(data)}
    roles: dict[str, str] = {}
    for name in sorted(names):
        profile = lookup.clients.iam.get_instance_profile(InstanceProfileName=name)
        attached = profile["InstanceProfile"].get("Roles", [])
        if attached:
            roles[name] = attached[0]["RoleName"]
    return roles


def _attached_policies(lookup: Lookup, roles: set[str]) -> dict[str, list[str]]:
    paginator = lookup.clients.iam.get_paginator("list_attached_role_policies")
    return {
        role: [
            policy["PolicyArn"]
            for page in paginator.paginate(RoleName=role)
            for policy in page["AttachedPolicies"]
        ]
        for role in sorted(roles)
    }


def template_groups(data: Raw) -> list[str]:
    """The security groups a template's instances run in: its own, or (as kops puts
    them) its first network interface's."""
    if data.get("SecurityGroupIds"):
        return list(data["SecurityGroupIds"])
    interfaces = data.get("NetworkInterfaces") or []
    first: Raw = next((i for i in interfaces if i.get("DeviceIndex", 0) == 0), {})
    return list(first.get("Groups") or [])


def profile_name(data: Raw) -> str:
    """The instance profile a template's instances run as (by name, or the end of its ARN)."""
    profile = data.get("IamInstanceProfile") or {}
    return str(profile.get("Name") or str(profile.get("Arn", "")).rsplit("/", 1)[-1])


def tags_of(resource: Raw) -> dict[str, str]:
    """A resource's tags as a dict (EC2 and Auto Scaling answer ``[{Key, Value}]``,
    under ``TagSet`` for a network interface)."""
    return tag_map(resource.get("Tags") or resource.get("TagSet"))
