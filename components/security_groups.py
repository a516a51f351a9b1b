"""Security groups of one side of the cluster: nodes, control plane, shared, and LBs.

The *shared* group is attached to every cluster instance in its VPC and admits all
intra-cluster traffic. During a vpc-move it also admits the node and control-plane
groups of the peered VPC (SG references work across a same-region peering), which is
the seed's "shared SG references both the old and the new IDs". A side adopted from
another tool has no shared group (``kubeshift:cluster.shared_group: false``): its own
rules admit its instances to each other, and the peered VPC's groups are admitted in
its control-plane and node groups instead. Nothing admits 0.0.0.0/0 except the listener
ports of a load balancer declared public.

The shared group does not carry the cluster tag: the AWS cloud provider's service
controller opens a LoadBalancer Service's traffic in the one group of each instance
that carries it, and fails every such Service on an instance with two.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from components.contract.naming import Namer
from components.contract.tags import merge_tags, without_cluster_tags

ANYWHERE = "0.0.0.0/0"


DESCRIPTIONS: Mapping[str, str] = {
    "control-plane": "Kubernetes control-plane members",
    "shared": "Intra-cluster traffic between all cluster instances",
    "api-lb": "Kubernetes API load balancer",
    "node": "Kubernetes worker nodes",
    "ingress-lb": "Ingress load balancer",
}
"""What kubeshift says each of its groups is for, by role (an adopted group keeps its
own: ``kubeshift:cluster.descriptions``)."""


@dataclass(frozen=True)
class SecurityGroupsArgs:
    """Inputs of :class:`SecurityGroups`."""

    namer: Namer
    """Physical names: cluster name and this side's suffix."""
    vpc_id: pulumi.Input[str]
    ingress_node_ports: list[int]
    """Node ports the ingress LB forwards to."""
    ingress_ports: list[int]
    """Listener ports of the ingress LB."""
    api_port: int = 6443
    client_cidrs: list[str] = field(default_factory=list)
    """CIDRs allowed to reach the LB listeners (both VPCs, corporate ranges...)."""
    public_ingress: bool = False
    """Open the ingress listener ports to 0.0.0.0/0 (an internet-facing ingress LB)."""
    public_api: bool = False
    """Open the API port to 0.0.0.0/0 (an internet-facing API LB)."""
    create_node_group: bool = True
    """False once this side has no workers left (retire-old-workers)."""
    create_ingress_group: bool = True
    """False once this side has no ingress LB left (retire-old-workers)."""
    create_shared_group: bool = True
    """False on a side another tool built, whose instances carry no group in common."""
    tags: dict[str, str] = field(default_factory=dict)


def _key(cidr: str) -> str:
    """A CIDR as a logical-name fragment: ``10.0.0.0/16`` -> ``10-0-0-0-16``."""
    return cidr.replace(".", "-").replace("/", "-")


class SecurityGroups(pulumi.ComponentResource):
    """Node, control-plane, shared, ingress-LB and API-LB security groups with rules."""

    node_id: pulumi.Output[str] | None
    control_plane_id: pulumi.Output[str]
    shared_id: pulumi.Output[str] | None
    ingress_lb_id: pulumi.Output[str] | None
    api_lb_id: pulumi.Output[str]

    def __init__(
        self, name: str, args: SecurityGroupsArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("kubeshift:network:SecurityGroups", name, None, opts)
        self._name = name
        self._child = pulumi.ResourceOptions(parent=self)
        namer = args.namer

        def group(role: str, *, cluster_tagged: bool = True) -> aws.ec2.SecurityGroup:
            physical = namer.security_group(role)
            tags = args.tags if cluster_tagged else without_cluster_tags(args.tags, namer.tag_id)
            sg = aws.ec2.SecurityGroup(
                f"{name}-{role}",
                name=physical,
                description=namer.security_group_description(role, DESCRIPTIONS[role]),
                vpc_id=args.vpc_id,
                revoke_rules_on_delete=True,
                tags=merge_tags(tags, {"Name": physical, "kubeshift.io/role": role}),
                opts=self._child,
            )
            self._egress(role, sg.id)
            return sg

        control_plane = group("control-plane")
        shared = group("shared", cluster_tagged=False) if args.create_shared_group else None
        api_lb = group("api-lb")
        node = group("node") if args.create_node_group else None
        ingress_lb = group("ingress-lb") if args.create_ingress_group else None

        # The API: clients -> API LB -> control plane.
        api_clients = [ANYWHERE] if args.public_api else args.client_cidrs
        for cidr in api_clients:
            self._from_cidr(f"api-lb-{args.api_port}-{_key(cidr)}", api_lb.id, cidr, args.api_port)
        self._from_group(
            "control-plane-from-api-lb", control_plane.id, api_lb.id, args.api_port, args.api_port
        )

        # Ingress: clients -> ingress LB -> node ports on the workers.
        if ingress_lb is not None:
            ingress_clients = [ANYWHERE] if args.public_ingress else args.client_cidrs
            for port in args.ingress_ports:
                for cidr in ingress_clients:
                    self._from_cidr(f"ingress-lb-{port}-{_key(cidr)}", ingress_lb.id, cidr, port)
            if node is not None:
                for port in args.ingress_node_ports:
                    self._from_group(
                        f"node-from-ingress-lb-{port}", node.id, ingress_lb.id, port, port
                    )

        # Intra-cluster: everything from our own groups (PeerAccess adds the peer VPC's).
        members: dict[str, pulumi.Input[str]] = {"control-plane": control_plane.id}
        if node is not None:
            members["node"] = node.id
        if shared is not None:
            for key, source in members.items():
                self._from_group(f"shared-from-{key}", shared.id, source, None, None)

        self.node_id = node.id if node is not None else None
        self.control_plane_id = control_plane.id
        self.shared_id = shared.id if shared is not None else None
        self.ingress_lb_id = ingress_lb.id if ingress_lb is not None else None
        self.api_lb_id = api_lb.id
        self.register_outputs(
            {
                "node_id": self.node_id,
                "control_plane_id": self.control_plane_id,
                "shared_id": self.shared_id,
                "ingress_lb_id": self.ingress_lb_id,
                "api_lb_id": self.api_lb_id,
            }
        )

    def of_workers(self) -> list[pulumi.Input[str]]:
        """The groups a worker carries: the node group, and the shared one if any."""
        assert self.node_id is not None, "workers need their side's node group"
        return [self.node_id, *self._shared()]

    def of_members(self) -> list[pulumi.Input[str]]:
        """The groups a control-plane member carries: its own, and the shared one if any."""
        return [self.control_plane_id, *self._shared()]

    def admitting_peers(self) -> dict[str, pulumi.Input[str]]:
        """The groups that admit a peered VPC's instances, by role: the shared group, or
        on a side without one, the groups its instances carry."""
        if self.shared_id is not None:
            return {"shared": self.shared_id}
        admitting: dict[str, pulumi.Input[str]] = {"control-plane": self.control_plane_id}
        if self.node_id is not None:
            admitting["node"] = self.node_id
        return admitting

    def _shared(self) -> list[pulumi.Input[str]]:
        return [] if self.shared_id is None else [self.shared_id]

    def _egress(self, role: str, group_id: pulumi.Input[str]) -> None:
        aws.vpc.SecurityGroupEgressRule(
            f"{self._name}-{role}-egress",
            security_group_id=group_id,
            ip_protocol="-1",
            cidr_ipv4=ANYWHERE,
            description="All outbound traffic",
            opts=self._child,
        )

    def _from_cidr(self, key: str, group_id: pulumi.Input[str], cidr: str, port: int) -> None:
        aws.vpc.SecurityGroupIngressRule(
            f"{self._name}-{key}",
            security_group_id=group_id,
            cidr_ipv4=cidr,
            ip_protocol="tcp",
            from_port=port,
            to_port=port,
            description=f"Listener {port} from {cidr}",
            opts=self._child,
        )

    def _from_group(
        self,
        key: str,
        group_id: pulumi.Input[str],
        source: pulumi.Input[str],
        from_port: int | None,
        to_port: int | None,
    ) -> None:
        all_traffic = from_port is None
        aws.vpc.SecurityGroupIngressRule(
            f"{self._name}-{key}",
            security_group_id=group_id,
            referenced_security_group_id=source,
            ip_protocol="-1" if all_traffic else "tcp",
            from_port=None if all_traffic else from_port,
            to_port=None if all_traffic else to_port,
            description=f"From {key.rsplit('from-', 1)[-1]}",
            opts=self._child,
        )


@dataclass(frozen=True)
class PeerAccessArgs:
    """Inputs of :class:`PeerAccess`."""

    admitting_group_ids: Mapping[str, pulumi.Input[str]]
    """The groups that must admit the peer VPC's, by role
    (:meth:`SecurityGroups.admitting_peers`)."""
    peer_group_ids: Mapping[str, pulumi.Input[str]]
    """Groups of the peered VPC, by a stable key (``node``, ``control-plane``)."""


class PeerAccess(pulumi.ComponentResource):
    """Rules letting one side's groups (its shared group, else those its instances carry)
    admit the other VPC's node/control-plane groups.

    Separate from :class:`SecurityGroups` because both sides reference each other: the
    two groups components exist first, then one PeerAccess per direction.
    """

    def __init__(
        self, name: str, args: PeerAccessArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("kubeshift:network:PeerAccess", name, None, opts)
        for role, admitting in args.admitting_group_ids.items():
            into = "" if role == "shared" else f"-{role}"  # the shared group's keep their names
            for key, source in args.peer_group_ids.items():
                aws.vpc.SecurityGroupIngressRule(
                    f"{name}{into}-from-{key}",
                    security_group_id=admitting,
                    referenced_security_group_id=source,
                    ip_protocol="-1",
                    description=f"From peer VPC {key}",
                    opts=pulumi.ResourceOptions(parent=self),
                )
        self.register_outputs({})
