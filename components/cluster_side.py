"""The one way a cluster is built: its cluster-wide parts, and its parts per VPC.

:class:`ClusterParts` declares what a cluster has once (the control plane, the IAM
identities outside a side, the DNS records); :class:`ClusterSide` declares what it has
in each VPC it spans (security groups + the workers' identity, workers, ingress and
API load balancers). :class:`~components.cluster.Cluster` builds one side (cni-swap's
primary and mirror, overlay-switch's cluster); vpc-move builds a source and a target
side and moves parts between them phase by phase.

Neither is a component: every part is a child of the caller's component, named
``<prefix>-<part>`` (plus ``-<suffix>`` on a migration's target side), so every
scenario names the same part the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import pulumi
import pulumi_aws as aws

from components.address_reservations import KeptAddress, keep_addresses
from components.common import Common, CommonArgs
from components.contract.naming import Namer
from components.contract.sides import Side
from components.control_plane import (
    ControlPlane,
    ControlPlaneArgs,
    MemberPlacement,
    boots_own_script,
)
from components.dns import Dns, DnsArgs, RecordSpec
from components.identity import NodeIdentity, NodeIdentityArgs
from components.load_balancers import LbListener, LbRole, LoadBalancer, LoadBalancerArgs
from components.moves import Move
from components.network import Network
from components.security_groups import SecurityGroupsArgs
from components.worker_pools import (
    ORIGINAL_GENERATION,
    WorkerPools,
    WorkerPoolsArgs,
    WorkerPoolSpec,
)


def _joined(*parts: str) -> str:
    return "-".join(p for p in parts if p)


@dataclass(frozen=True)
class ClusterSpec:
    """What every side of one cluster shares (from the config)."""

    image_id: str
    api_endpoint: str
    """URL the kubelets register with: ``https://<api record>:<api port>``."""
    api_port: int
    ingress_listeners: tuple[LbListener, ...]
    """Ingress LB ports, each forwarding to the ingress controller's node port."""
    client_cidrs: tuple[str, ...]
    """CIDRs allowed to reach the listeners of internal load balancers."""
    ingress_internal: bool
    api_internal: bool
    control_plane_instance_type: str
    etcd_volume_size: int
    """Size of each member's etcd volume, GiB."""
    etcd_volume_type: str
    release_etcd_volumes: bool
    """The user lifted the volumes' protection (last phase only: ``components.contract.checks``)."""
    dns_zone_id: pulumi.Input[str]
    """Hosted zone of the API and ingress records."""
    api_record: str
    ingress_records: tuple[str, ...]
    dns_ttl: int
    """TTL of every record, seconds."""
    tags: dict[str, str]
    """Tags of every resource: the config's, then the cluster tags."""
    control_plane_root_volume_size: int | None = None
    """Size of each member's root volume, GiB; None: the image's."""
    api_alias: bool = False
    """The API record aliases its load balancer (an A record) instead of a CNAME."""
    node_managed_policies: tuple[str, ...] | None = None
    control_plane_managed_policies: tuple[str, ...] | None = None
    """Policies attached to each identity's role; None: kubeshift's."""
    shared_group: bool = True
    member_interfaces: bool = True
    """Each member has a fixed interface (``control_plane.membership: static``); none where
    kops's etcd-manager names the members by DNS."""
    """The cluster's first side has kubeshift's shared group (``kubeshift:cluster.
    shared_group``); a side with a suffix always has one."""


@dataclass(frozen=True)
class SideNetwork:
    """The VPC one side of a cluster lives in."""

    side: Side
    vpc_id: pulumi.Input[str]
    private_subnet_ids: Mapping[str, pulumi.Input[str]]
    """Private subnet per AZ: workers, members and internal load balancers."""
    public_subnet_ids: Mapping[str, pulumi.Input[str]]
    """Public subnet per AZ: internet-facing load balancers."""
    azs: tuple[str, ...]
    """AZs the side's load balancers span, in this order."""

    @classmethod
    def of(cls, network: Network, side: Side, azs: Sequence[str]) -> SideNetwork:
        """``network`` as the ``side`` of a cluster, its load balancers across ``azs``."""
        return cls(
            side, network.vpc_id, network.private_subnet_ids, network.public_subnet_ids, tuple(azs)
        )


@dataclass(frozen=True)
class ClusterParts:
    """Declares a cluster's parts as children of ``parent``, named ``<prefix>-<part>``."""

    prefix: str
    """Logical-name prefix of every part (the name of the component holding them)."""
    namer: Namer
    """Physical names of the cluster's first side (identities and members keep them)."""
    spec: ClusterSpec
    parent: pulumi.Resource

    @property
    def opts(self) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self.parent)

    def side(
        self, network: SideNetwork, pools: Sequence[WorkerPoolSpec], suffix: str = ""
    ) -> ClusterSide:
        """The cluster's side in ``network``; ``suffix`` names a migration's target apart."""
        return ClusterSide(self, network, tuple(pools), suffix)

    def identity(
        self,
        role: Literal["control-plane"],
        members: Sequence[MemberPlacement],
        target_suffix: str = "",
        *,
        route_controller: bool = False,
    ) -> NodeIdentity:
        """The IAM identity of ``role`` (the workers' lives in :meth:`ClusterSide.common`),
        granting what kubeshift's script needs once one of ``members`` boots it."""
        return NodeIdentity(
            f"{self.prefix}-{role}-identity",
            NodeIdentityArgs(
                namer=self.namer, role=role, route_controller=route_controller,
                boots_own_script=boots_own_script(self.namer, target_suffix, members),
                managed=self.spec.control_plane_managed_policies, tags=self.spec.tags,
            ),
            self.opts,
        )  # fmt: skip

    def control_plane(
        self,
        members: Sequence[MemberPlacement],
        identity: NodeIdentity,
        target_suffix: str = "",
        disposable: bool = False,
    ) -> ControlPlane:
        """The etcd members, each placed on a side by :meth:`ClusterSide.member`, running
        as ``identity``; their volumes protected unless the cluster is ``disposable`` or
        the user released them."""
        spec = self.spec
        return ControlPlane(
            f"{self.prefix}-control-plane",
            ControlPlaneArgs(
                namer=self.namer,
                target_suffix=target_suffix,
                protect_volumes=not (disposable or spec.release_etcd_volumes),
                members=list(members),
                instance_type=spec.control_plane_instance_type,
                image_id=spec.image_id,
                instance_profile_name=identity.instance_profile_name,
                grants=identity.grants,
                api_endpoint=spec.api_endpoint,
                etcd_volume_size=spec.etcd_volume_size,
                etcd_volume_type=spec.etcd_volume_type,
                root_volume_size=spec.control_plane_root_volume_size,
                fixed_interfaces=spec.member_interfaces,
                tags=spec.tags,
            ),
            self.opts,
        )

    def records(self, ingress: LoadBalancer, api: LoadBalancer) -> dict[str, RecordSpec]:
        """Ingress CNAMEs to ``ingress``; the API record a CNAME to the ``api`` load
        balancer (an alias A record when the stack says so): its type never changes."""
        spec = self.spec
        records = {
            f"ingress-{i}": RecordSpec(name, "CNAME", [ingress.dns_name])
            for i, name in enumerate(spec.ingress_records)
        }
        if spec.api_alias:
            records["api"] = RecordSpec(spec.api_record, "A", [api.dns_name], api.zone_id)
        else:
            records["api"] = RecordSpec(spec.api_record, "CNAME", [api.dns_name])
        return records

    def dns(self, records: Mapping[str, RecordSpec]) -> Dns:
        """``records`` in the cluster's zone."""
        return Dns(
            f"{self.prefix}-dns",
            DnsArgs(zone_id=self.spec.dns_zone_id, records=records, ttl=self.spec.dns_ttl),
            self.opts,
        )


@dataclass(frozen=True)
class ClusterSide:
    """Declares what a cluster has in one VPC: common, workers, load balancers."""

    parts: ClusterParts
    network: SideNetwork
    pools: tuple[WorkerPoolSpec, ...]
    """The worker pools, their AZs resolved in this network."""
    suffix: str = ""
    """Added to the logical and physical names of this side's parts (a target side)."""

    @property
    def namer(self) -> Namer:
        """Physical names of this side's parts."""
        first = self.parts.namer
        return replace(first, suffix=_joined(first.suffix, self.suffix))

    @property
    def generation(self) -> str:
        """Generation label of this side's own workers: its suffix, or the original."""
        return self.suffix or ORIGINAL_GENERATION

    def _name(self, part: str, *extra: str) -> str:
        return _joined(self.parts.prefix, part, self.suffix, *extra)

    def common(
        self,
        *,
        workers: bool = True,
        node_identity: bool = True,
        identity_moved_from: Move | None = None,
        source_dest_check_off: bool = False,
    ) -> Common:
        """Security groups (the node and ingress-LB groups only for ``workers``) and, with
        ``node_identity``, the workers' identity (named after the first side)."""
        spec = self.parts.spec
        return Common(
            self._name("common"),
            CommonArgs(
                security_groups=SecurityGroupsArgs(
                    namer=self.namer,
                    vpc_id=self.network.vpc_id,
                    ingress_node_ports=[lis.target_port for lis in spec.ingress_listeners],
                    ingress_ports=[lis.port for lis in spec.ingress_listeners],
                    api_port=spec.api_port,
                    client_cidrs=list(spec.client_cidrs),
                    public_ingress=not spec.ingress_internal,
                    public_api=not spec.api_internal,
                    create_node_group=workers,
                    create_ingress_group=workers,
                    create_shared_group=spec.shared_group or bool(self.namer.suffix),
                    tags=spec.tags,
                ),
                create_node_identity=node_identity,
                identity_namer=self.parts.namer,
                identity_moved_from=identity_moved_from,
                source_dest_check_off=source_dest_check_off,
                identity_managed=spec.node_managed_policies,
                tags=spec.tags,
            ),
            self.parts.opts,
        )

    def workers(
        self,
        common: Common,
        identity: Common,
        *,
        generation: str | None = None,
        suspended: Sequence[str] = (),
        boot_extra: str = "",
        launch_after: Sequence[pulumi.Resource] = (),
    ) -> WorkerPools:
        """One generation of worker pools in ``common``'s groups, running as the workers'
        identity, which ``identity`` holds (default generation: the side's own; another
        generation's names carry it). ``suspended``: ASG processes stopped while draining;
        ``launch_after``: what must exist before the groups launch."""
        spec = self.parts.spec
        generation = generation or self.generation
        apart = "" if generation == self.generation else generation
        groups = common.groups
        assert groups.node_id is not None, "workers need their side's node group"
        assert identity.instance_profile_name is not None, "the workers' identity lives there"
        return WorkerPools(
            self._name("workers", apart),
            WorkerPoolsArgs(
                namer=replace(self.namer, suffix=_joined(self.namer.suffix, apart)),
                pools=list(self.pools),
                subnet_ids=self.network.private_subnet_ids,
                security_group_ids=groups.of_workers(),
                instance_profile_name=identity.instance_profile_name,
                grants=identity.grants,
                launch_after=launch_after,
                image_id=spec.image_id,
                api_endpoint=spec.api_endpoint,
                generation=generation,
                network_label=self.network.side,
                boot_extra=boot_extra,
                suspended_processes=list(suspended),
                tags=spec.tags,
            ),
            self.parts.opts,
        )

    def keep_member_addresses(
        self, addresses: Mapping[int, tuple[str, str]]
    ) -> dict[str, aws.ec2.SubnetCidrReservation]:
        """Keep each member's address (``member -> (az, address)``) in this side's private
        subnet of its AZ, so that nothing launched here before the member moves takes it."""
        cluster = self.parts.namer.cluster
        kept = [
            KeptAddress(
                key=str(index),
                subnet_id=self.network.private_subnet_ids[az],
                address=address,
                owner=f"etcd member {index} of {cluster} (kubeshift)",
            )
            for index, (az, address) in sorted(addresses.items())
        ]
        return keep_addresses(self._name("member-address"), kept, self.parts.opts)

    def member(self, index: int, az: str, address: str, common: Common) -> MemberPlacement:
        """Control-plane member ``index`` placed on this side, in ``az`` at ``address``."""
        return MemberPlacement(
            index=index,
            az=az,
            side=self.network.side,
            subnet_id=self.network.private_subnet_ids[az],
            security_group_ids=common.groups.of_members(),
            address=address,
        )

    def ingress_lb(self, common: Common, workers: Iterable[WorkerPools]) -> LoadBalancer:
        """The ingress NLB with every group of ``workers`` attached (keyed by group, with
        ``<generation>-`` in front for a generation other than the side's own)."""
        spec = self.parts.spec
        attachments: dict[str, pulumi.Input[str]] = {}
        for pools in workers:
            prefix = "" if pools.generation == self.generation else f"{pools.generation}-"
            attachments.update({prefix + key: name for key, name in pools.group_names.items()})
        group = common.groups.ingress_lb_id
        assert group is not None, "the ingress LB needs its side's ingress-LB group"
        listeners = list(spec.ingress_listeners)
        return self._lb("ingress", listeners, attachments, spec.ingress_internal, group)

    def api_lb(self, common: Common, control_plane: ControlPlane) -> LoadBalancer:
        """The API NLB with the members placed on this side attached."""
        spec = self.parts.spec
        return self._lb(
            "api",
            [LbListener(spec.api_port, spec.api_port)],
            control_plane.group_names_on(self.network.side),
            spec.api_internal,
            common.groups.api_lb_id,
        )

    def _lb(
        self,
        role: LbRole,
        listeners: list[LbListener],
        attachments: Mapping[str, pulumi.Input[str]],
        internal: bool,
        security_group_id: pulumi.Input[str],
    ) -> LoadBalancer:
        subnets = self.network.private_subnet_ids if internal else self.network.public_subnet_ids
        return LoadBalancer(
            self._name(role),
            LoadBalancerArgs(
                namer=self.namer,
                role=role,
                vpc_id=self.network.vpc_id,
                subnet_ids=[subnets[az] for az in self.network.azs],
                security_group_ids=[security_group_id],
                listeners=listeners,
                internal=internal,
                attachments=attachments,
                tags=self.parts.spec.tags,
            ),
            self.parts.opts,
        )
