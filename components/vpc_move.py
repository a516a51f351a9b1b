"""The vpc-move scenario (seed 001): every phase of moving a live cluster to a new VPC.

Given the validated config and its phase, :class:`VpcMove` declares exactly that
phase's infrastructure. Each phase keeps what earlier phases declared unless it retires
it:

==================  ===========================================================
baseline            source VPC, common (SGs + node identity), workers, control
                    plane, ingress + API LBs, records (CNAMEs to the LBs)
target-network      + target VPC, peering, routes in every table on both sides
shared-resources    + suffixed SGs (shared SGs admit both sides), target ingress LB
ingress-nodeport    (no change: the runner switches the ingress Service)
target-workers      + suffixed worker ASGs in the target subnets, attached to the
                    target ingress target groups
dns-cutover         ingress records -> target ingress LB
ingress-move        (no change: the runner evicts ingress pods)
drain-workers       old worker ASGs stop launching/replacing instances
retire-old-workers  - old workers, node SG, ingress LB; the node identity moves to
                    the target common with aliases (``terraform state mv``)
control-plane-k     member k moves to the target VPC; k=1: target API LB + API
                    record A -> member 1; k>=2: API record CNAME -> target API LB
cleanup             - source API LB and source common (and, if configured, the
                    peering and the source VPC)
==================  ===========================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi

from components import userdata
from components.common import TYPE as COMMON_TYPE
from components.common import Common, CommonArgs
from components.config import (
    NetworkConfig,
    StackConfig,
    member_address,
    member_az,
)
from components.control_plane import (
    SOURCE,
    TARGET,
    ControlPlane,
    ControlPlaneArgs,
    MemberPlacement,
)
from components.dns import Dns, DnsArgs, RecordSpec
from components.identity import CONTROL_PLANE_INLINE, NodeIdentity, NodeIdentityArgs
from components.load_balancers import LbListener, LoadBalancer, LoadBalancerArgs
from components.moves import Move
from components.naming import Namer
from components.network import Network, NetworkArgs
from components.peering import Peering, PeeringArgs
from components.security_groups import PeerAccess, PeerAccessArgs, SecurityGroupsArgs
from components.tags import cluster_tags, merge_tags
from components.worker_pools import WorkerPools, WorkerPoolsArgs, WorkerPoolSpec

TYPE = "kubeshift:scenario:VpcMove"
ORIGINAL_GENERATION = "original"


@dataclass(frozen=True)
class PhasePlan:
    """What exists at one phase: plain booleans derived from the phase cursor."""

    target_network: bool
    target_common: bool
    target_workers: bool
    ingress_on_target: bool
    old_workers: bool
    old_workers_draining: bool
    members_moved: int
    members: int
    cleanup: bool
    retire_source_network: bool

    @property
    def source_network(self) -> bool:
        return not (self.cleanup and self.retire_source_network)

    @property
    def peering(self) -> bool:
        return self.target_network and self.source_network

    @property
    def source_control_plane(self) -> bool:
        """Any member still in the source VPC (its SGs and API LB must stay)."""
        return self.members_moved < self.members

    @property
    def source_common(self) -> bool:
        return not self.cleanup

    @property
    def source_api_lb(self) -> bool:
        return not self.cleanup

    @property
    def target_api_lb(self) -> bool:
        return self.members_moved >= 1

    @property
    def api_record(self) -> str:
        """``source-lb``, ``member-1`` or ``target-lb``: where the API record points."""
        if self.members_moved == 0:
            return "source-lb"
        if self.members_moved == 1 and not self.cleanup:
            return "member-1"
        return "target-lb"


def plan_phase(config: StackConfig) -> PhasePlan:
    """The :class:`PhasePlan` of ``config``'s phase."""
    cursor = config.cursor
    return PhasePlan(
        target_network=cursor.reached("target-network"),
        target_common=cursor.reached("shared-resources"),
        target_workers=cursor.reached("target-workers"),
        ingress_on_target=cursor.reached("dns-cutover"),
        old_workers=cursor.before("retire-old-workers"),
        old_workers_draining=cursor.reached("drain-workers"),
        members_moved=cursor.control_plane_members_moved(),
        members=config.cluster.control_plane.members,
        cleanup=cursor.reached("cleanup"),
        retire_source_network=config.migration.retire_source_network,
    )


def identity_move(cluster: str, scenario: pulumi.Resource) -> Move:
    """Where the node identity lived before retire-old-workers: under ``<cluster>-common``."""
    old_common = pulumi.create_urn(f"{cluster}-common", COMMON_TYPE, parent=scenario)
    return Move(old_name=f"{cluster}-common-node-identity", old_parent_urn=old_common)


def pool_specs(config: StackConfig, network: NetworkConfig) -> list[WorkerPoolSpec]:
    """The config's worker pools as component specs for ``network``."""
    return [
        WorkerPoolSpec(
            name=p.name,
            instance_types=tuple(p.instance_types),
            azs=tuple(p.azs or network.azs),
            capacity_types=tuple(p.capacity_types),
            min_size=p.min_size,
            desired_size=p.desired_size,
            max_size=p.max_size,
            labels=tuple(sorted(p.labels.items())),
            taints=tuple((t.key, t.value, t.effect) for t in p.taints),
            root_volume_size=p.root_volume_size,
        )
        for p in config.cluster.worker_pools
    ]


class VpcMove(pulumi.ComponentResource):
    """Top component of a vpc-move stack; ``outputs`` are the stack outputs."""

    outputs: dict[str, Any]

    def __init__(
        self, name: str, config: StackConfig, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE, name, None, opts)
        self._config = config
        self._name = name
        cluster = config.cluster
        target_cfg = config.migration.target_network
        assert target_cfg is not None  # guaranteed by config validation
        suffix = config.migration.suffix
        plan = plan_phase(config)
        self.plan = plan
        child = pulumi.ResourceOptions(parent=self)
        tags = merge_tags(cluster.tags, cluster_tags(cluster.name))
        old, new = Namer(cluster.name), Namer(cluster.name, suffix)
        api_endpoint = f"https://{cluster.dns.api_record}:{cluster.control_plane.api_port}"

        # --- networks and peering -------------------------------------------------
        source = (
            self._network(f"{name}-source-network", cluster.network, f"{name}-source", tags)
            if plan.source_network
            else None
        )
        target = (
            self._network(f"{name}-target-network", target_cfg, f"{name}-{suffix}", tags)
            if plan.target_network
            else None
        )
        if plan.peering and source is not None and target is not None:
            Peering(
                f"{name}-peering",
                PeeringArgs(
                    requester_vpc_id=source.vpc_id,
                    requester_cidr=str(cluster.network.cidr),
                    requester_route_table_ids=source.route_table_ids,
                    accepter_vpc_id=target.vpc_id,
                    accepter_cidr=str(target_cfg.cidr),
                    accepter_route_table_ids=target.route_table_ids,
                    name_tag=f"{name}-source-to-{suffix}",
                    tags=tags,
                ),
                child,
            )

        clients = [str(cluster.network.cidr)]
        if plan.target_network:
            clients.append(str(target_cfg.cidr))
        listeners = cluster.ingress.listeners

        def groups_args(namer: Namer, vpc_id: Any, workers: bool) -> SecurityGroupsArgs:
            return SecurityGroupsArgs(
                namer=namer,
                vpc_id=vpc_id,
                ingress_node_ports=[lis.node_port for lis in listeners],
                ingress_ports=[lis.port for lis in listeners],
                api_port=cluster.control_plane.api_port,
                client_cidrs=clients
                + [str(c) for c in cluster.ingress.allowed_cidrs + cluster.api.allowed_cidrs],
                public_ingress=not cluster.ingress.internal,
                public_api=not cluster.api.internal,
                create_node_group=workers,
                create_ingress_group=workers,
                tags=tags,
            )

        # --- common: security groups and the workers' identity ----------------------
        source_common = None
        if plan.source_common and source is not None:
            source_common = Common(
                f"{name}-common",
                CommonArgs(
                    security_groups=groups_args(old, source.vpc_id, plan.old_workers),
                    create_node_identity=plan.old_workers,
                    identity_namer=old,
                    tags=tags,
                ),
                child,
            )
        target_common = None
        if plan.target_common and target is not None:
            target_common = Common(
                f"{name}-common-{suffix}",
                CommonArgs(
                    security_groups=groups_args(new, target.vpc_id, True),
                    create_node_identity=not plan.old_workers,
                    identity_namer=old,
                    identity_moved_from=None if plan.old_workers else identity_move(name, self),
                    tags=tags,
                ),
                child,
            )
        if source_common is not None and target_common is not None:
            self._peer_access(f"{name}-peer-access", source_common, target_common)
            self._peer_access(f"{name}-peer-access-{suffix}", target_common, source_common)
        holder = source_common if plan.old_workers else target_common
        assert holder is not None and holder.instance_profile_name is not None
        profile = holder.instance_profile_name

        # --- workers ----------------------------------------------------------------
        old_workers = new_workers = None
        if plan.old_workers and source is not None and source_common is not None:
            old_workers = self._workers(
                f"{name}-workers",
                old,
                source,
                source_common,
                profile,
                api_endpoint,
                ORIGINAL_GENERATION,
                SOURCE,
                cluster.network,
                tags,
                ["AZRebalance", "Launch", "ReplaceUnhealthy"] if plan.old_workers_draining else [],
            )
        if plan.target_workers and target is not None and target_common is not None:
            new_workers = self._workers(
                f"{name}-workers-{suffix}",
                new,
                target,
                target_common,
                profile,
                api_endpoint,
                suffix,
                TARGET,
                target_cfg,
                tags,
                [],
            )

        # --- control plane ----------------------------------------------------------
        cp_identity = NodeIdentity(
            f"{name}-control-plane-identity",
            NodeIdentityArgs(
                namer=old,
                role="control-plane",
                managed_policy_arns=("arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore",),
                inline_policy=CONTROL_PLANE_INLINE,
                tags=tags,
            ),
            child,
        )
        cp = cluster.control_plane
        members = []
        for index in range(1, cp.members + 1):
            moved = index <= plan.members_moved
            net, net_cfg, common = (
                (target, target_cfg, target_common)
                if moved
                else (source, cluster.network, source_common)
            )
            assert net is not None and common is not None
            az = member_az(cp, cluster.network, index)
            members.append(
                MemberPlacement(
                    index=index,
                    az=az,
                    side=TARGET if moved else SOURCE,
                    subnet_id=net.private_subnet_ids[az],
                    security_group_ids=[common.groups.control_plane_id, common.groups.shared_id],
                    address=member_address(cp, cluster.network, net_cfg, index),
                )
            )
        control_plane = ControlPlane(
            f"{name}-control-plane",
            ControlPlaneArgs(
                namer=old,
                target_suffix=suffix,
                members=members,
                instance_type=cp.instance_type,
                image_id=cluster.image_id,
                instance_profile_name=cp_identity.instance_profile_name,
                api_endpoint=api_endpoint,
                etcd_volume_size=cp.etcd_volume_size,
                etcd_volume_type=cp.etcd_volume_type,
                tags=tags,
            ),
            child,
        )

        # --- load balancers -----------------------------------------------------------
        ingress_listeners = [LbListener(lis.port, lis.node_port) for lis in listeners]
        api_listeners = [LbListener(cp.api_port, cp.api_port)]
        lbs: dict[str, LoadBalancer] = {}
        if old_workers is not None and source is not None and source_common is not None:
            lbs["ingress-source"] = self._lb(
                f"{name}-ingress",
                old,
                "ingress",
                source,
                cluster.network,
                source_common,
                ingress_listeners,
                old_workers.group_names,
                cluster.ingress.internal,
                tags,
            )
        if target_common is not None and target is not None:
            lbs["ingress-target"] = self._lb(
                f"{name}-ingress-{suffix}",
                new,
                "ingress",
                target,
                target_cfg,
                target_common,
                ingress_listeners,
                new_workers.group_names if new_workers else {},
                cluster.ingress.internal,
                tags,
            )
        by_side = {
            side: {
                str(m.index): control_plane.group_names[m.index] for m in members if m.side == side
            }
            for side in (SOURCE, TARGET)
        }
        if plan.source_api_lb and source is not None and source_common is not None:
            lbs["api-source"] = self._lb(
                f"{name}-api",
                old,
                "api",
                source,
                cluster.network,
                source_common,
                api_listeners,
                by_side[SOURCE],
                cluster.api.internal,
                tags,
            )
        if plan.target_api_lb and target is not None and target_common is not None:
            lbs["api-target"] = self._lb(
                f"{name}-api-{suffix}",
                new,
                "api",
                target,
                target_cfg,
                target_common,
                api_listeners,
                by_side[TARGET],
                cluster.api.internal,
                tags,
            )

        # --- DNS ------------------------------------------------------------------------
        ingress_lb = lbs["ingress-target" if plan.ingress_on_target else "ingress-source"]
        records = {
            f"ingress-{i}": RecordSpec(record, "CNAME", [ingress_lb.dns_name])
            for i, record in enumerate(cluster.dns.ingress_records)
        }
        if plan.api_record == "member-1":
            records["api"] = RecordSpec(cluster.dns.api_record, "A", [control_plane.addresses[1]])
        else:
            api_lb = lbs["api-source" if plan.api_record == "source-lb" else "api-target"]
            records["api"] = RecordSpec(cluster.dns.api_record, "CNAME", [api_lb.dns_name])
        Dns(
            f"{name}-dns",
            DnsArgs(zone_id=cluster.dns.zone_id, records=records, ttl=cluster.dns.ttl),
            child,
        )

        self.outputs = {
            "scenario": config.scenario,
            "phase": config.phase,
            "cluster_name": cluster.name,
            "source_vpc_id": source.vpc_id if source else None,
            "target_vpc_id": target.vpc_id if target else None,
            # A list in every scenario (the runner's grants read it); by side below.
            "node_security_group_ids": [
                c.groups.node_id
                for c in (source_common, target_common)
                if c is not None and c.groups.node_id is not None
            ],
            "node_security_group_ids_by_side": {
                "source": source_common.groups.node_id if source_common else None,
                "target": target_common.groups.node_id if target_common else None,
            },
            "shared_security_group_ids": {
                "source": source_common.groups.shared_id if source_common else None,
                "target": target_common.groups.shared_id if target_common else None,
            },
            "target_group_arns": {
                key: {str(port): arn for port, arn in lb.target_group_arns.items()}
                for key, lb in lbs.items()
            },
            "lb_dns_names": {key: lb.dns_name for key, lb in lbs.items()},
            "records": {
                key: {"name": spec.name, "type": spec.type, "values": spec.records}
                for key, spec in records.items()
            },
            "api_record_target": plan.api_record,
            "worker_asg_names": {
                "source": list(old_workers.group_names.values()) if old_workers else [],
                "target": list(new_workers.group_names.values()) if new_workers else [],
            },
            "worker_label_selectors": {
                "source": f"{userdata.GENERATION_LABEL}={ORIGINAL_GENERATION}",
                "target": f"{userdata.GENERATION_LABEL}={suffix}",
            },
            "control_plane_members": {
                str(m.index): {
                    "side": m.side,
                    "az": m.az,
                    "address": m.address,
                    "asg_name": control_plane.group_names[m.index],
                }
                for m in members
            },
        }
        self.register_outputs(self.outputs)

    # --- helpers ------------------------------------------------------------------------

    def _network(
        self, name: str, cfg: NetworkConfig, name_tag: str, tags: dict[str, str]
    ) -> Network:
        return Network(
            name,
            NetworkArgs(
                cidr=str(cfg.cidr),
                azs=list(cfg.azs),
                public_subnet_cidrs=[str(s) for s in cfg.public_subnets],
                private_subnet_cidrs=[str(s) for s in cfg.private_subnets],
                cluster_name=self._config.cluster.name,
                name_tag=name_tag,
                enable_internet_gateway=cfg.enable_internet_gateway,
                enable_nat_gateway=cfg.enable_nat_gateway,
                single_nat_gateway=cfg.single_nat_gateway,
                tags=tags,
            ),
            pulumi.ResourceOptions(parent=self),
        )

    def _peer_access(self, name: str, admitting: Common, peer: Common) -> None:
        peers: dict[str, Any] = {"control-plane": peer.groups.control_plane_id}
        if peer.groups.node_id is not None:
            peers["node"] = peer.groups.node_id
        PeerAccess(
            name,
            PeerAccessArgs(shared_group_id=admitting.groups.shared_id, peer_group_ids=peers),
            pulumi.ResourceOptions(parent=self),
        )

    def _workers(
        self,
        name: str,
        namer: Namer,
        network: Network,
        common: Common,
        profile: Any,
        api_endpoint: str,
        generation: str,
        side: str,
        net_cfg: NetworkConfig,
        tags: dict[str, str],
        suspended: list[str],
    ) -> WorkerPools:
        groups = common.groups
        assert groups.node_id is not None
        return WorkerPools(
            name,
            WorkerPoolsArgs(
                namer=namer,
                pools=pool_specs(self._config, net_cfg),
                subnet_ids=network.private_subnet_ids,
                security_group_ids=[groups.node_id, groups.shared_id],
                instance_profile_name=profile,
                image_id=self._config.cluster.image_id,
                api_endpoint=api_endpoint,
                generation=generation,
                network_label=side,
                suspended_processes=suspended,
                tags=tags,
            ),
            pulumi.ResourceOptions(parent=self),
        )

    def _lb(
        self,
        name: str,
        namer: Namer,
        role: str,
        network: Network,
        net_cfg: NetworkConfig,
        common: Common,
        listeners: list[LbListener],
        attachments: dict[str, Any],
        internal: bool,
        tags: dict[str, str],
    ) -> LoadBalancer:
        groups = common.groups
        sg = groups.ingress_lb_id if role == "ingress" else groups.api_lb_id
        assert sg is not None
        subnets = network.private_subnet_ids if internal else network.public_subnet_ids
        return LoadBalancer(
            name,
            LoadBalancerArgs(
                namer=namer,
                role=role,
                vpc_id=network.vpc_id,
                subnet_ids=[subnets[az] for az in net_cfg.azs],
                security_group_ids=[sg],
                listeners=listeners,
                internal=internal,
                attachments=attachments,
                deregistration_delay=30 if role == "ingress" else 10,
                tags=tags,
            ),
            pulumi.ResourceOptions(parent=self),
        )


def build(config: StackConfig) -> dict[str, Any]:
    """Declare the vpc-move infrastructure of ``config``'s phase; return stack outputs."""
    return VpcMove(config.cluster.name, config).outputs
