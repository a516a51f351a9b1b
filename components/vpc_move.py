"""The vpc-move scenario (seed 001): every phase of moving a live cluster to a new VPC.

Given the validated config and its phase, :class:`VpcMove` declares exactly that
phase's infrastructure: the two networks and their peering itself, the cluster through
:mod:`components.cluster_side` (one side per network, as the single-VPC scenarios build
theirs). Each phase keeps what earlier phases declared unless it retires it:

==================  ===========================================================
baseline            source VPC, common (SGs + node identity), workers, control
                    plane, ingress + API LBs, records (CNAMEs to the LBs)
target-network      + target VPC, peering, routes in every table on both sides, each
                    member's target address reserved (explicit subnet reservation)
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

from typing import Any

import pulumi

from components import baseline
from components.cluster_side import ClusterParts, SideNetwork
from components.common import TYPE as COMMON_TYPE
from components.common import Common
from components.contract.models import StackConfig
from components.contract.naming import Namer
from components.contract.placement import member_address, member_az
from components.contract.scenarios.vpc_move import plan_phase
from components.contract.sides import SOURCE, TARGET
from components.control_plane import MemberPlacement
from components.load_balancers import LoadBalancer
from components.moves import Move
from components.peering import Peering, PeeringArgs
from components.security_groups import PeerAccess, PeerAccessArgs
from components.worker_pools import WorkerPools

TYPE = "kubeshift:scenario:VpcMove"
DRAINING = ("AZRebalance", "Launch", "ReplaceUnhealthy")
"""ASG processes suspended on the old workers while they drain."""


def identity_move(cluster: str, scenario: pulumi.Resource) -> Move:
    """Where the node identity lived before retire-old-workers: under ``<cluster>-common``."""
    old_common = pulumi.create_urn(f"{cluster}-common", COMMON_TYPE, parent=scenario)
    return Move(old_name=f"{cluster}-common-node-identity", old_parent_urn=old_common)


class VpcMove(pulumi.ComponentResource):
    """Top component of a vpc-move stack; ``outputs`` are the stack outputs."""

    outputs: dict[str, Any]

    def __init__(
        self, name: str, config: StackConfig, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE, name, None, opts)
        self._config = config
        cluster = config.cluster
        target_cfg = config.migration.target_network
        assert target_cfg is not None  # guaranteed by config validation
        suffix = config.migration.suffix
        plan = plan_phase(config)
        self.plan = plan
        clients = [str(cluster.network.cidr)]
        if plan.target_network:
            clients.append(str(target_cfg.cidr))
        spec = baseline.cluster_spec(config, clients)
        tags = spec.tags

        # --- networks and peering -------------------------------------------------
        source = (
            baseline.network(
                f"{name}-source-network", config, cluster.network, self, f"{name}-source"
            )
            if plan.source_network
            else None
        )
        target = (
            baseline.network(f"{name}-target-network", config, target_cfg, self, f"{name}-{suffix}")
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
                pulumi.ResourceOptions(parent=self),
            )

        # --- the cluster: its parts, and one side per network -------------------------
        namer = Namer.for_cluster(cluster)
        parts = ClusterParts(name, namer, spec, self)
        cp = cluster.control_plane
        source_side = target_side = None
        if source is not None:
            source_side = parts.side(
                SideNetwork.of(source, SOURCE, cluster.network.azs),
                baseline.pool_specs(config, cluster.network),
            )
        if target is not None:
            target_side = parts.side(
                SideNetwork.of(target, TARGET, target_cfg.azs),
                baseline.pool_specs(config, target_cfg),
                suffix,
            )
            if cp.membership == "static":  # etcd-manager's members have no fixed address
                target_side.keep_member_addresses(
                    {
                        index: (
                            member_az(cp, cluster.network, index),
                            member_address(cp, cluster.network, target_cfg, index),
                        )
                        for index in range(1, cp.members + 1)
                    }
                )

        # --- common: security groups and the workers' identity ----------------------
        source_common = target_common = None
        if plan.source_common and source_side is not None:
            source_common = source_side.common(
                workers=plan.old_workers, node_identity=plan.old_workers
            )
        if plan.target_common and target_side is not None:
            target_common = target_side.common(
                node_identity=not plan.old_workers,
                identity_moved_from=None if plan.old_workers else identity_move(name, self),
            )
        if source_common is not None and target_common is not None:
            self._peer_access(f"{name}-peer-access", source_common, target_common)
            self._peer_access(f"{name}-peer-access-{suffix}", target_common, source_common)
        holder = source_common if plan.old_workers else target_common
        assert holder is not None and holder.instance_profile_name is not None

        # --- workers ----------------------------------------------------------------
        old_workers: WorkerPools | None = None
        new_workers: WorkerPools | None = None
        if plan.old_workers and source_side is not None and source_common is not None:
            old_workers = source_side.workers(
                source_common, holder, suspended=DRAINING if plan.old_workers_draining else ()
            )
        if plan.target_workers and target_side is not None and target_common is not None:
            new_workers = target_side.workers(target_common, holder)

        # --- control plane ----------------------------------------------------------
        members: list[MemberPlacement] = []
        for index in range(1, cp.members + 1):
            moved = index <= plan.members_moved
            side, net_cfg, common = (
                (target_side, target_cfg, target_common)
                if moved
                else (source_side, cluster.network, source_common)
            )
            assert side is not None and common is not None
            az = member_az(cp, cluster.network, index)
            address = member_address(cp, cluster.network, net_cfg, index)
            members.append(side.member(index, az, address, common))
        cp_identity = parts.identity("control-plane", members, suffix)
        control_plane = parts.control_plane(members, cp_identity, target_suffix=suffix)

        # --- load balancers -----------------------------------------------------------
        lbs: dict[str, LoadBalancer] = {}
        if old_workers is not None and source_side is not None and source_common is not None:
            lbs["ingress-source"] = source_side.ingress_lb(source_common, [old_workers])
        if target_side is not None and target_common is not None:
            lbs["ingress-target"] = target_side.ingress_lb(
                target_common, [new_workers] if new_workers else []
            )
        if plan.source_api_lb and source_side is not None and source_common is not None:
            lbs["api-source"] = source_side.api_lb(source_common, control_plane)
        if plan.target_api_lb and target_side is not None and target_common is not None:
            lbs["api-target"] = target_side.api_lb(target_common, control_plane)

        # --- DNS ------------------------------------------------------------------------
        ingress_lb = lbs["ingress-target" if plan.ingress_on_target else "ingress-source"]
        api_target = lbs["api-source" if plan.api_record == "source-lb" else "api-target"]
        records = parts.records(ingress_lb, api_target)
        parts.dns(records)

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
            "peer_admitting_security_group_ids": {
                side: list(common.groups.admitting_peers().values()) if common else []
                for side, common in (("source", source_common), ("target", target_common))
            },
            "target_group_arns": {
                key: {str(port): arn for port, arn in lb.target_group_arns.items()}
                for key, lb in lbs.items()
            },
            "lb_dns_names": {key: lb.dns_name for key, lb in lbs.items()},
            "records": {
                key: {
                    "name": spec.name,
                    "type": spec.type,
                    "values": spec.records,
                    "alias_zone_id": spec.alias_zone_id,
                }
                for key, spec in records.items()
            },
            "api_record_target": plan.api_record,
            "worker_asg_names": {
                "source": list(old_workers.group_names.values()) if old_workers else [],
                "target": list(new_workers.group_names.values()) if new_workers else [],
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

    def _peer_access(self, name: str, admitting: Common, peer: Common) -> None:
        peers: dict[str, Any] = {"control-plane": peer.groups.control_plane_id}
        if peer.groups.node_id is not None:
            peers["node"] = peer.groups.node_id
        PeerAccess(
            name,
            PeerAccessArgs(
                admitting_group_ids=admitting.groups.admitting_peers(), peer_group_ids=peers
            ),
            pulumi.ResourceOptions(parent=self),
        )


def build(config: StackConfig) -> dict[str, Any]:
    """Declare the vpc-move infrastructure of ``config``'s phase; return stack outputs."""
    return VpcMove(config.cluster.name, config).outputs
