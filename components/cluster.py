"""A whole single-VPC cluster (common, workers, control plane, LBs, DNS) as one component.

The cni-swap scenario builds two of them in the same VPC (the primary and its mirror,
told apart by the naming suffix) and overlay-switch builds one. Each is one side of
:mod:`components.cluster_side`, the builders vpc-move uses for its two sides. The
network itself stays outside, so two clusters can share it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi

from components.cluster_side import ClusterParts, ClusterSpec, SideNetwork
from components.contract.naming import Namer
from components.worker_pools import ORIGINAL_GENERATION, WorkerPoolSpec

TYPE = "kubeshift:cluster:Cluster"

SOURCE_DEST_CHECK_OFF = (
    'aws ec2 modify-instance-attribute --instance-id "$(curl -sf -H '
    '"X-aws-ec2-metadata-token: $(curl -sf -X PUT http://169.254.169.254/latest/api/token '
    "-H 'X-aws-ec2-metadata-token-ttl-seconds: 60')\" "
    'http://169.254.169.254/latest/meta-data/instance-id)" --no-source-dest-check'
)


@dataclass(frozen=True)
class MemberSpec:
    """One control-plane member: its AZ and fixed address."""

    index: int
    az: str
    address: str


@dataclass(frozen=True)
class ClusterArgs:
    """Inputs of :class:`Cluster`."""

    namer: Namer
    """Physical names: cluster name and this cluster's suffix (the mirror's)."""
    network: SideNetwork
    """The VPC the cluster lives in (its only side)."""
    spec: ClusterSpec
    """What every side of the cluster shares (``components.baseline.cluster_spec``)."""
    pools: list[WorkerPoolSpec]
    members: list[MemberSpec]
    worker_generations: list[str] = field(default_factory=lambda: [ORIGINAL_GENERATION])
    """One set of worker pools per generation (two while nodes are being replaced)."""
    native_routing: bool = False
    """Nodes turn off their source/dest check at boot and may manage pod routes."""
    disposable: bool = False
    """A mirror: its etcd volumes go with it (the primary's are protected)."""
    keep_member_addresses: bool = False
    """Reserve the members' addresses before any worker launches: members joining
    subnets that another cluster's instances keep launching into (a mirror's)."""


class Cluster(pulumi.ComponentResource):
    """Everything of one cluster inside an existing VPC."""

    node_security_group_id: pulumi.Output[str]
    outputs: dict[str, object]

    def __init__(
        self, name: str, args: ClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE, name, None, opts)
        parts = ClusterParts(name, args.namer, args.spec, self)
        side = parts.side(args.network, args.pools)
        common = side.common(source_dest_check_off=args.native_routing)
        groups = common.groups
        assert groups.node_id is not None
        boot_extra = SOURCE_DEST_CHECK_OFF if args.native_routing else ""
        kept = (
            side.keep_member_addresses({m.index: (m.az, m.address) for m in args.members})
            if args.keep_member_addresses
            else {}
        )
        workers = {
            generation: side.workers(
                common,
                common,
                generation=generation,
                boot_extra=boot_extra,
                launch_after=list(kept.values()),
            )
            for generation in args.worker_generations
        }
        # The route controller (the cloud-controller-manager) runs on the control plane.
        members = [side.member(m.index, m.az, m.address, common) for m in args.members]
        cp_identity = parts.identity(
            "control-plane", members, route_controller=args.native_routing
        )
        control_plane = parts.control_plane(members, cp_identity, disposable=args.disposable)
        ingress = side.ingress_lb(common, workers.values())
        api = side.api_lb(common, control_plane)
        parts.dns(parts.records(ingress, api))

        self.node_security_group_id = groups.node_id
        self.outputs = {
            "node_security_group_id": groups.node_id,
            "shared_security_group_id": groups.shared_id,
            "ingress_dns_name": ingress.dns_name,
            "api_dns_name": api.dns_name,
            "target_group_arns": {
                "ingress": {str(p): a for p, a in ingress.target_group_arns.items()},
                "api": {str(p): a for p, a in api.target_group_arns.items()},
            },
            "worker_asg_names": {
                gen: list(pools.group_names.values()) for gen, pools in workers.items()
            },
            "control_plane_asg_names": {str(k): v for k, v in control_plane.group_names.items()},
        }
        self.register_outputs(self.outputs)
