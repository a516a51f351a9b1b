"""Build the modules' cluster in the sandbox's moto with boto3, as ``terraform apply``
of seed 001's modules would have (the package docstring says what each module makes),
and write what Terraform would record of it as its state (:mod:`.state`)."""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from automation.sandbox.boots import JOIN_SCRIPT
from automation.sandbox.provider.model import Aws
from automation.sandbox.world.balancers import Balanced, Balancer, build_balancer, write_records
from automation.sandbox.world.compute import (
    InstanceGroup,
    first_interface,
    kubelet_labels,
    launch,
    make_group,
    make_template,
    root_device,
)
from automation.sandbox.world.firewall import authorize, create_group, permission
from automation.sandbox.world.identity import ASSUME_EC2
from automation.sandbox.world.model import Built, NetworkPart, tag_list, tag_spec
from automation.sandbox.world.modules.model import ModulesCluster, modules_cluster
from automation.sandbox.world.modules.state import Managed, state_file
from automation.sandbox.world.network import Network, build_network
from components.contract import loading as stack_loading
from components.contract.userdata import member_attach_script

ANYWHERE = "0.0.0.0/0"


@dataclass
class ModulesWorld:
    """What the modules made: each resource (:class:`Built`, as the kops world's) and
    what Terraform records of it."""

    built: list[Built] = field(default_factory=list)
    managed: list[Managed] = field(default_factory=list)

    def add(
        self, kind: str, name: str, id_: str, module: str, tf_type: str, tf_name: str,
        key: int | str | None = None, arn: str | None = None, **attributes: Any,
    ) -> str:  # fmt: skip
        self.built.append(Built(kind, name, id_))
        self.managed.append(Managed(module, tf_type, tf_name, id_, key, arn, attributes))
        return id_


def build_modules(values: Mapping[str, Any], aws: Aws, state_path: Path) -> ModulesWorld:
    """Build the cluster the stack ``values`` describes as seed 001's modules did, and
    write Terraform's state of it to ``state_path``."""
    cluster = modules_cluster(stack_loading.load_config(values))
    world = ModulesWorld()
    network = build_network(aws, cluster)
    _record_network(aws, cluster, network, world)
    groups = _security_groups(aws, cluster, network.vpc_id, world)
    _open(aws, cluster, groups, world)
    profiles = _identities(aws, cluster, world)
    members = _members(aws, cluster, groups["control-plane"], network, profiles, world)
    workers = _workers(aws, cluster, groups["workers"], network, profiles, world)
    api, ingress = _balancers(aws, cluster, network, groups, members, workers, world)
    api_record, *ingress_records = write_records(aws, cluster, api, ingress)
    world.add(api_record.kind, api_record.name, api_record.id, "common", "aws_route53_record",
              "api")  # fmt: skip
    for record in ingress_records:
        world.add(record.kind, record.name, record.id, "common", "aws_route53_record",
                  "ingress", key=record.name)  # fmt: skip
    launch(aws, members + workers)
    state_path.write_text(state_file(world.managed))
    return world


_NETWORK_TYPES = {
    "ec2:vpc": ("aws_vpc", "this"), "ec2:internet-gateway": ("aws_internet_gateway", "this"),
    "ec2:elastic-ip": ("aws_eip", "nat"), "ec2:nat-gateway": ("aws_nat_gateway", "this"),
}  # fmt: skip


def _record_network(
    aws: Aws, cluster: ModulesCluster, network: Network, world: ModulesWorld
) -> None:
    """The ``vpc`` module's resources, keyed by zone where it makes one per zone, and its
    routes and route tables' associations (Terraform manages each)."""
    kind_of: dict[NetworkPart, str] = {
        "public": "ec2:subnet", "private": "ec2:subnet", "nat": "ec2:nat-gateway",
        "private-table": "ec2:route-table",
    }  # fmt: skip
    zone_of = {(kind_of[part], cluster.network_name(part, zone)): (part, zone)
               for zone in cluster.zones for part in kind_of}  # fmt: skip
    zone_of |= {("ec2:elastic-ip", name): found for (kind, name), found in zone_of.items()
                if kind == "ec2:nat-gateway"}  # fmt: skip
    for made in network.built:
        part, zone = zone_of.get((made.kind, made.name), ("", ""))
        if made.kind == "ec2:subnet":
            tf_type, tf_name = "aws_subnet", part
        elif made.kind == "ec2:route-table":
            tf_type, tf_name = "aws_route_table", "private" if zone else "public"
        else:
            tf_type, tf_name = _NETWORK_TYPES[made.kind]
        world.add(made.kind, made.name, made.id, "vpc", tf_type, tf_name, key=zone or None)
    tables = aws.ec2.describe_route_tables(
        Filters=[{"Name": "vpc-id", "Values": [network.vpc_id]}]
    )["RouteTables"]
    subnet_zone = {id_: zone for side in (network.private, network.public)
                   for zone, id_ in side.items()}  # fmt: skip
    table_zone = {id_: zone for zone, id_ in _private_tables(network, cluster).items()}
    for table in tables:
        for route in table["Routes"]:
            target = route.get("NatGatewayId") or route.get("GatewayId", "local")
            if target == "local":
                continue  # the VPC's own: no one's to manage
            table_id, destination = table["RouteTableId"], route["DestinationCidrBlock"]
            world.managed.append(Managed(
                "vpc", "aws_route", "private" if table_id in table_zone else "public",
                f"r-{table_id}{zlib.crc32(destination.encode())}", key=table_zone.get(table_id),
                attributes={"route_table_id": table_id, "destination_cidr_block": destination},
            ))  # fmt: skip
        for association in table["Associations"]:
            subnet = association.get("SubnetId")
            if subnet is None:
                continue
            side = "private" if subnet in network.private.values() else "public"
            world.managed.append(Managed(
                "vpc", "aws_route_table_association", side,
                association["RouteTableAssociationId"], key=subnet_zone[subnet],
            ))  # fmt: skip


def _private_tables(network: Network, cluster: ModulesCluster) -> dict[str, str]:
    """Each zone's private route table, by zone."""
    names = {cluster.network_name("private-table", zone): zone for zone in cluster.zones}
    return {names[b.name]: b.id for b in network.built
            if b.kind == "ec2:route-table" and b.name in names}  # fmt: skip


_GROUPS = {
    "api-lb": ("common", "api_lb", "Kubernetes API load balancer"),
    "ingress-lb": ("common", "ingress_lb", "Ingress load balancer"),
    "control-plane": ("control-plane", "this", "Kubernetes control plane"),
    "workers": ("worker-common", "this", "Kubernetes workers"),
}
"""Each module's security groups: its module, its name there and its description."""


def _security_groups(
    aws: Aws, cluster: ModulesCluster, vpc_id: str, world: ModulesWorld
) -> dict[str, str]:
    ids = {}
    for role, (module, tf_name, description) in _GROUPS.items():
        made = create_group(aws, cluster, vpc_id, cluster.named(role), description)
        ids[role] = world.add(made.kind, made.name, made.id, module, "aws_security_group", tf_name)
    return ids


def _open(aws: Aws, cluster: ModulesCluster, groups: dict[str, str], world: ModulesWorld) -> None:
    """Each module's rules (``aws_vpc_security_group_*_rule``): every group reaches
    anywhere; members and workers reach each other on every port; the API's clients the
    API, the API group the members' API port; the ingress's clients its listeners, the
    ingress group the workers' node ports."""
    spec = cluster.spec
    api_port = spec.control_plane.api_port
    api_clients = [ANYWHERE] if not spec.api.internal else [str(spec.network.cidr)]
    ingress_clients = [ANYWHERE] if not spec.ingress.internal else [str(spec.network.cidr)]
    wanted: list[tuple[str, str, str, tuple[int, int] | None, str]] = [
        (role, f"{role}_egress", "-1", None, ANYWHERE) for role in groups
    ]
    for role, peer in (("control-plane", "workers"), ("workers", "control-plane"),
                       ("workers", "workers"), ("control-plane", "control-plane")):  # fmt: skip
        wanted.append((role, f"from_{peer}", "-1", None, peer))
    wanted += [("api-lb", "api_clients", "tcp", (api_port, api_port), c) for c in api_clients]
    wanted.append(("control-plane", "from_api_lb", "tcp", (api_port, api_port), "api-lb"))
    for listener in spec.ingress.listeners:
        port, node_port = listener.port, listener.node_port
        wanted += [("ingress-lb", f"clients_{port}", "tcp", (port, port), c)
                   for c in ingress_clients]  # fmt: skip
        wanted.append(("workers", f"from_ingress_{node_port}", "tcp", (node_port, node_port),
                       "ingress-lb"))  # fmt: skip
    for role, tf_name, protocol, ports, peer in wanted:
        egress = tf_name.endswith("_egress")
        name = cluster.named(f"{role}-{tf_name.replace('_', '-')}")
        allowed = permission(protocol, ports, peer, groups)
        module = _GROUPS[role][0]
        tf_type = f"aws_vpc_security_group_{'egress' if egress else 'ingress'}_rule"
        for rule_id in authorize(aws, groups[role], allowed, cluster.tags(name), egress=egress):
            world.add("ec2:security-group-rule", name, rule_id, module, tf_type, tf_name,
                      security_group_id=groups[role])  # fmt: skip


def _identities(aws: Aws, cluster: ModulesCluster, world: ModulesWorld) -> dict[str, str]:
    """The members' role and profile (``control-plane``) and the workers'
    (``worker-common``), each with the module's inline policy and the managed policies
    the stack lists."""
    iam = aws.client("iam")
    external = cluster.spec.managed_policies
    profiles = {}
    for role, module, policies in (("control-plane", "control-plane", external.control_plane),
                                   ("workers", "worker-common", external.node)):  # fmt: skip
        name = cluster.named(role)
        tags = tag_list(cluster.tags(name))
        made = iam.create_role(RoleName=name, AssumeRolePolicyDocument=ASSUME_EC2, Tags=tags)
        world.add("iam:role", name, name, module, "aws_iam_role", "this", arn=made["Role"]["Arn"])
        profile = iam.create_instance_profile(InstanceProfileName=name, Tags=tags)
        iam.add_role_to_instance_profile(InstanceProfileName=name, RoleName=name)
        arn = profile["InstanceProfile"]["Arn"]
        world.add("iam:instance-profile", name, name, module, "aws_iam_instance_profile", "this",
                  arn=arn)  # fmt: skip
        document = json.dumps({"Version": "2012-10-17", "Statement": [{
            "Effect": "Allow", "Resource": "*",
            "Action": ["ec2:Describe*", "ec2:AttachVolume", "ec2:AttachNetworkInterface",
                       "elasticloadbalancing:Describe*", "autoscaling:Describe*"],
        }]})  # fmt: skip
        iam.put_role_policy(RoleName=name, PolicyName=name, PolicyDocument=document)
        world.add("modules:role-policy", name, f"{name}:{name}", module, "aws_iam_role_policy",
                  "this")  # fmt: skip
        for index, policy in enumerate(policies or []):
            iam.attach_role_policy(RoleName=name, PolicyArn=policy)
            world.add("iam:role-policy-attachment", policy, f"{name}-{index}", module,
                      "aws_iam_role_policy_attachment", "managed", key=index)  # fmt: skip
        profiles[role] = name
    return profiles


def _boot_script(
    cluster: ModulesCluster,
    role: str,
    labels: Mapping[str, str],
    taints: list[str],
    attach: str = "",
) -> str:
    """The modules' user data (``data.template_file.user_data``): what a member attaches
    first (``attach``: its etcd volume and fixed interface, by id), then the image's join
    script (:data:`JOIN_SCRIPT`), told the cluster, the API and the kubelet's labels and
    taints."""
    spec = cluster.spec
    lines = [
        "#!/bin/bash", "set -euo pipefail", *([attach] if attach else []),
        f"API_ENDPOINT=https://{spec.dns.api_record}:{spec.control_plane.api_port}",
        f'{JOIN_SCRIPT} --cluster {cluster.name} --role {role} --api-server "$API_ENDPOINT"'
        + (f" --node-labels {','.join(f'{k}={v}' for k, v in sorted(labels.items()))}"
           if labels else "")
        + (f" --register-with-taints {','.join(taints)}" if taints else ""),
    ]  # fmt: skip
    return base64.b64encode(("\n".join(lines) + "\n").encode()).decode()


def _members(
    aws: Aws,
    cluster: ModulesCluster,
    group_id: str,
    network: Network,
    profiles: dict[str, str],
    world: ModulesWorld,
) -> list[InstanceGroup]:
    """Per member (``count``, its index the member's number less one): its etcd volume
    and fixed interface, and a template whose boot script attaches them by id, and a
    group of one instance in its zone."""
    plane = cluster.spec.control_plane
    made = []
    for member in cluster.members:
        index, name = member.number - 1, cluster.member_name(member)
        etcd = cluster.named(f"control-plane-etcd-{member.number}")
        volume = aws.ec2.create_volume(
            AvailabilityZone=member.zone, Size=plane.etcd_volume_size,
            VolumeType=plane.etcd_volume_type, Encrypted=True,
            TagSpecifications=tag_spec("volume", cluster.tags(etcd)),
        )  # fmt: skip
        world.add("ec2:volume", etcd, volume["VolumeId"], "control-plane", "aws_ebs_volume",
                  "etcd", key=index)  # fmt: skip
        interface = aws.ec2.create_network_interface(
            SubnetId=network.private[member.zone], Groups=[group_id],
            Description=f"{etcd} peer address",
            PrivateIpAddresses=[{"PrivateIpAddress": member.address, "Primary": True}],
            TagSpecifications=tag_spec("network-interface", cluster.tags(etcd)),
        )["NetworkInterface"]  # fmt: skip
        world.add("ec2:network-interface", etcd, interface["NetworkInterfaceId"], "control-plane",
                  "aws_network_interface", "etcd", key=index)  # fmt: skip
        tags = cluster.tags(name)
        data: dict[str, object] = {
            "ImageId": cluster.spec.image_id, "InstanceType": plane.instance_type,
            "UserData": _boot_script(cluster, "control-plane", {}, [], member_attach_script(
                volume["VolumeId"], interface["NetworkInterfaceId"])),
            "IamInstanceProfile": {"Name": profiles["control-plane"]},
            "MetadataOptions": {"HttpEndpoint": "enabled", "HttpTokens": "required"},
            "NetworkInterfaces": first_interface(group_id),
            "TagSpecifications": tag_spec("instance", tags),
        }  # fmt: skip
        if plane.root_volume_size:
            data["BlockDeviceMappings"] = root_device(plane.root_volume_size)
        template = make_template(aws, name, data, tags)
        world.add("ec2:launch-template", name, template, "control-plane", "aws_launch_template",
                  "this", key=index)  # fmt: skip
        spec: dict[str, object] = {"LaunchTemplate": {"LaunchTemplateId": template,
                                                      "Version": "1"}}  # fmt: skip
        make_group(aws, name, spec, [network.private[member.zone]], tags, metrics=())
        world.add("autoscaling:group", name, name, "control-plane", "aws_autoscaling_group",
                  "this", key=index)  # fmt: skip
        made.append(InstanceGroup(name, spec, 1, 1, 1))
    return made


def _workers(
    aws: Aws,
    cluster: ModulesCluster,
    group_id: str,
    network: Network,
    profiles: dict[str, str],
    world: ModulesWorld,
) -> list[InstanceGroup]:
    """A ``workers`` module per type, AZ and capacity type: its template and group."""
    made = []
    for group in cluster.worker_groups:
        module = cluster.worker_module(group)
        name = cluster.named(module)
        tags = cluster.tags(name)
        pool = group.pool
        data: dict[str, object] = {
            "ImageId": cluster.spec.image_id, "InstanceType": group.instance_types[0],
            "UserData": _boot_script(cluster, "worker", kubelet_labels(group), [
                f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"
                for t in pool.taints
            ]),
            "IamInstanceProfile": {"Name": profiles["workers"]},
            "MetadataOptions": {"HttpEndpoint": "enabled", "HttpTokens": "required",
                                "HttpPutResponseHopLimit": pool.metadata_hop_limit},
            "BlockDeviceMappings": root_device(pool.root_volume_size),
            "NetworkInterfaces": first_interface(group_id),
            "TagSpecifications": tag_spec("instance", tags),
        }  # fmt: skip
        if group.capacity == "spot":
            data["InstanceMarketOptions"] = {"MarketType": "spot"}
        template = make_template(aws, name, data, tags)
        world.add("ec2:launch-template", name, template, module, "aws_launch_template", "this")
        spec: dict[str, object] = {"LaunchTemplate": {"LaunchTemplateId": template,
                                                      "Version": "1"}}  # fmt: skip
        make_group(aws, name, spec, [network.private[z] for z in group.zones], tags, metrics=())
        world.add("autoscaling:group", name, name, module, "aws_autoscaling_group", "this")
        made.append(InstanceGroup(name, spec, pool.min_size, pool.max_size, pool.desired_size))
    return made


def _balancers(
    aws: Aws,
    cluster: ModulesCluster,
    network: Network,
    groups: dict[str, str],
    members: list[InstanceGroup],
    workers: list[InstanceGroup],
    world: ModulesWorld,
) -> tuple[Balancer, Balancer | None]:
    """The ``common`` module's API load balancer (the members' groups behind its target
    group) and, where the stack has listeners, its ingress one on the node ports."""
    spec = cluster.spec

    def subnets(internal: bool) -> list[str]:
        side = network.private if internal else network.public
        return [side[zone] for zone in cluster.zones]

    port = spec.control_plane.api_port
    wanted = [("api", Balanced(
        cluster.balancing_name("api"), {port: cluster.balancing_name(f"api-{port}")},
        spec.api.internal, subnets(spec.api.internal), groups["api-lb"], {port: port},
        [g.name for g in members],
    ))]  # fmt: skip
    if spec.ingress.listeners:
        wanted.append(("ingress", Balanced(
            cluster.balancing_name("ingress"),
            {lis.port: cluster.balancing_name(f"ingress-{lis.node_port}")
             for lis in spec.ingress.listeners},
            spec.ingress.internal, subnets(spec.ingress.internal), groups["ingress-lb"],
            {lis.port: lis.node_port for lis in spec.ingress.listeners},
            [g.name for g in workers],
        )))  # fmt: skip
    made: dict[str, Balancer] = {}
    for role, balanced in wanted:
        balancer = build_balancer(aws, cluster, network.vpc_id, balanced)
        for part in balancer.built:
            tf_type = {"elbv2:load-balancer": "aws_lb", "elbv2:target-group": "aws_lb_target_group",
                       "elbv2:listener": "aws_lb_listener"}[part.kind]  # fmt: skip
            key = part.name.rsplit("-", 1)[-1] if part.kind != "elbv2:load-balancer" else None
            world.add(part.kind, part.name, part.id, "common", tf_type, role,
                      key=None if role == "api" else key, arn=part.id)  # fmt: skip
        made[role] = balancer
    return made["api"], made.get("ingress")
