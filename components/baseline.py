"""From validated config to component inputs, for every scenario.

The networks, the worker pools, what every side of a cluster shares
(:class:`~components.cluster_side.ClusterSpec`) and the single-VPC
:class:`~components.cluster.Cluster` of cni-swap and overlay-switch are all made here,
so no scenario turns config models into component args its own way.
"""

from __future__ import annotations

import ipaddress
from typing import Any

import pulumi

from components.cluster import Cluster, ClusterArgs, MemberSpec
from components.cluster_side import ClusterSpec, SideNetwork
from components.contract.cluster_models import NetworkConfig
from components.contract.models import StackConfig
from components.contract.naming import Namer
from components.contract.placement import member_az
from components.contract.sides import SOURCE
from components.contract.tags import cluster_tags, merge_tags
from components.load_balancers import LbListener
from components.network import Network, NetworkArgs
from components.worker_pools import ORIGINAL_GENERATION, WorkerPoolSpec


def tags_of(config: StackConfig) -> dict[str, str]:
    return merge_tags(config.cluster.tags, cluster_tags(config.cluster.tag_id))


def network(
    name: str,
    config: StackConfig,
    cfg: NetworkConfig,
    parent: pulumi.Resource,
    name_tag: str | None = None,
    *,
    shared_node_route_table: bool = False,
) -> Network:
    """The VPC ``cfg`` as a :class:`Network` child of ``parent`` (``Name`` tags from
    ``name_tag``, default ``name``)."""
    return Network(
        name,
        NetworkArgs(
            cidr=str(cfg.cidr),
            azs=list(cfg.azs),
            public_subnet_cidrs=[str(s) for s in cfg.public_subnets],
            private_subnet_cidrs=[str(s) for s in cfg.private_subnets],
            cluster_name=config.cluster.tag_id,
            name_tag=name_tag or name,
            enable_internet_gateway=cfg.enable_internet_gateway,
            enable_nat_gateway=cfg.enable_nat_gateway,
            single_nat_gateway=cfg.single_nat_gateway,
            shared_node_route_table=shared_node_route_table,
            tags=tags_of(config),
        ),
        pulumi.ResourceOptions(parent=parent),
    )


def pool_specs(config: StackConfig, network: NetworkConfig) -> list[WorkerPoolSpec]:
    """The config's worker pools as component specs for ``network``."""
    return [
        WorkerPoolSpec(
            name=p.name,
            instance_types=tuple(p.instance_types),
            azs=tuple(p.azs or network.azs),
            capacity_types=tuple(p.capacity_types),
            group_per=p.group_per,
            template_per=p.template_per,
            min_size=p.min_size,
            desired_size=p.desired_size,
            max_size=p.max_size,
            labels=tuple(sorted(p.labels.items())),
            taints=tuple((t.key, t.value, t.effect) for t in p.taints),
            root_volume_size=p.root_volume_size,
            metadata_hop_limit=p.metadata_hop_limit,
        )
        for p in config.cluster.worker_pools
    ]


def cluster_spec(
    config: StackConfig,
    client_cidrs: list[str],
    *,
    zone_id: pulumi.Input[str] | None = None,
    api_record: str | None = None,
    ingress_records: list[str] | None = None,
    image_id: str | None = None,
) -> ClusterSpec:
    """What every side of the cluster shares; ``client_cidrs``: the VPCs it spans now.

    The DNS settings and the image default to the config's (a mirror passes its own).
    """
    cluster = config.cluster
    cp = cluster.control_plane
    api_record = api_record or cluster.dns.api_record
    allowed = cluster.ingress.allowed_cidrs + cluster.api.allowed_cidrs
    return ClusterSpec(
        image_id=image_id or cluster.image_id,
        api_endpoint=f"https://{api_record}:{cp.api_port}",
        api_port=cp.api_port,
        ingress_listeners=tuple(
            LbListener(lis.port, lis.node_port) for lis in cluster.ingress.listeners
        ),
        # one rule per range: a range listed for both load balancers (or the VPC's own)
        # would otherwise be declared twice under one name
        client_cidrs=tuple(dict.fromkeys((*client_cidrs, *(str(c) for c in allowed)))),
        ingress_internal=cluster.ingress.internal,
        api_internal=cluster.api.internal,
        control_plane_instance_type=cp.instance_type,
        control_plane_root_volume_size=cp.root_volume_size,
        etcd_volume_size=cp.etcd_volume_size,
        etcd_volume_type=cp.etcd_volume_type,
        release_etcd_volumes=cp.release_etcd_volumes,
        dns_zone_id=zone_id or cluster.dns.zone_id,
        api_record=api_record,
        ingress_records=tuple(
            cluster.dns.ingress_records if ingress_records is None else ingress_records
        ),
        dns_ttl=cluster.dns.ttl,
        api_alias=cluster.dns.api_alias,
        node_managed_policies=_tuple(cluster.managed_policies.node),
        control_plane_managed_policies=_tuple(cluster.managed_policies.control_plane),
        shared_group=cluster.shared_group,
        member_interfaces=cp.membership == "static",
        tags=tags_of(config),
    )


def _tuple(items: list[str] | None) -> tuple[str, ...] | None:
    return None if items is None else tuple(items)


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
    image_id: str | None = None,
    generations: list[str] | None = None,
    native_routing: bool = False,
    disposable: bool = False,
    keep_member_addresses: bool = False,
) -> Cluster:
    """A :class:`Cluster` for ``config`` in ``net`` (defaults: the primary's names/DNS)."""
    c = config.cluster
    spec = cluster_spec(
        config,
        [str(c.network.cidr)],
        zone_id=zone_id,
        api_record=api_record,
        ingress_records=ingress_records,
        image_id=image_id,
    )
    return Cluster(
        name,
        ClusterArgs(
            namer=namer or Namer.for_cluster(c),
            network=SideNetwork.of(net, SOURCE, c.network.azs),
            spec=spec,
            pools=pool_specs(config, c.network),
            members=members(config, host_offset),
            worker_generations=generations or [ORIGINAL_GENERATION],
            native_routing=native_routing,
            disposable=disposable,
            keep_member_addresses=keep_member_addresses,
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
