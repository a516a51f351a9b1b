"""From validated config to a single-VPC cluster: the baseline shared by cni-swap and
overlay-switch (vpc-move builds its own two-sided version).

Scenario builders call these functions; they are the only place besides the
scenario modules that turn config models into component Args.
"""

from __future__ import annotations

import ipaddress
from typing import Any

import pulumi

from components.cluster import Cluster, ClusterArgs, MemberSpec
from components.config import NetworkConfig, StackConfig, member_az
from components.load_balancers import LbListener
from components.naming import Namer
from components.network import Network, NetworkArgs
from components.tags import cluster_tags, merge_tags
from components.vpc_move import pool_specs


def tags_of(config: StackConfig) -> dict[str, str]:
    return merge_tags(config.cluster.tags, cluster_tags(config.cluster.name))


def network(name: str, config: StackConfig, cfg: NetworkConfig, parent: pulumi.Resource) -> Network:
    """The cluster's VPC as a :class:`Network` child of ``parent``."""
    return Network(
        name,
        NetworkArgs(
            cidr=str(cfg.cidr),
            azs=list(cfg.azs),
            public_subnet_cidrs=[str(s) for s in cfg.public_subnets],
            private_subnet_cidrs=[str(s) for s in cfg.private_subnets],
            cluster_name=config.cluster.name,
            name_tag=name,
            enable_internet_gateway=cfg.enable_internet_gateway,
            enable_nat_gateway=cfg.enable_nat_gateway,
            single_nat_gateway=cfg.single_nat_gateway,
            tags=tags_of(config),
        ),
        pulumi.ResourceOptions(parent=parent),
    )


def members(config: StackConfig, host_offset: int = 0) -> list[MemberSpec]:
    """Control-plane members with fixed addresses (``host_offset`` shifts them, e.g. for a
    mirror cluster sharing the subnets)."""
    cp, net = config.cluster.control_plane, config.cluster.network
    specs = []
    for index in range(1, cp.members + 1):
        az = member_az(cp, net, index)
        subnet = net.private_subnet_in(az)
        address = subnet.network_address + cp.host_index + host_offset + index - 1
        if address not in subnet or address == subnet.broadcast_address:
            raise ValueError(f"member {index} address {address} is outside {subnet}")
        specs.append(MemberSpec(index=index, az=az, address=str(ipaddress.IPv4Address(address))))
    return specs


def cluster(
    name: str,
    config: StackConfig,
    net: Network,
    parent: pulumi.Resource,
    *,
    namer: Namer | None = None,
    zone_id: pulumi.Input[str] | None = None,
    api_record: str | None = None,
    ingress_records: list[str] | None = None,
    host_offset: int = 0,
    generations: list[str] | None = None,
    native_routing: bool = False,
) -> Cluster:
    """A :class:`Cluster` for ``config`` in ``net`` (defaults: the primary's names/DNS)."""
    c = config.cluster
    api_record = api_record or c.dns.api_record
    return Cluster(
        name,
        ClusterArgs(
            namer=namer or Namer(c.name),
            vpc_id=net.vpc_id,
            private_subnet_ids=net.private_subnet_ids,
            public_subnet_ids=net.public_subnet_ids,
            azs=list(c.network.azs),
            client_cidrs=[str(c.network.cidr)]
            + [str(x) for x in c.ingress.allowed_cidrs + c.api.allowed_cidrs],
            image_id=c.image_id,
            api_endpoint=f"https://{api_record}:{c.control_plane.api_port}",
            pools=pool_specs(config, c.network),
            members=members(config, host_offset),
            control_plane_instance_type=c.control_plane.instance_type,
            ingress_listeners=[LbListener(lis.port, lis.node_port) for lis in c.ingress.listeners],
            dns_zone_id=zone_id or c.dns.zone_id,
            api_record=api_record,
            ingress_records=c.dns.ingress_records if ingress_records is None else ingress_records,
            worker_generations=generations or ["original"],
            api_port=c.control_plane.api_port,
            ingress_internal=c.ingress.internal,
            api_internal=c.api.internal,
            etcd_volume_size=c.control_plane.etcd_volume_size,
            etcd_volume_type=c.control_plane.etcd_volume_type,
            dns_ttl=c.dns.ttl,
            native_routing=native_routing,
            tags=tags_of(config),
        ),
        pulumi.ResourceOptions(parent=parent),
    )


def common_outputs(config: StackConfig, net: Network, primary: Cluster) -> dict[str, Any]:
    """Outputs every single-VPC scenario exports."""
    return {
        "scenario": config.scenario,
        "phase": config.phase,
        "cluster_name": config.cluster.name,
        "source_vpc_id": net.vpc_id,
        "target_vpc_id": None,
        "route_table_ids": net.route_table_ids,
        "node_security_group_ids": [primary.node_security_group_id],
        "primary": primary.outputs,
    }
