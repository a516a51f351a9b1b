"""A whole single-VPC cluster (common, workers, control plane, LBs, DNS) as one component.

The cni-swap scenario builds two of them in the same VPC (the primary and its mirror,
told apart by the naming suffix) and overlay-switch builds one; both reuse the same
per-concern components as vpc-move. The network itself stays outside, so two
clusters can share it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi

from components.common import Common, CommonArgs
from components.control_plane import SOURCE, ControlPlane, ControlPlaneArgs, MemberPlacement
from components.dns import Dns, DnsArgs, RecordSpec
from components.identity import CONTROL_PLANE_INLINE, NodeIdentity, NodeIdentityArgs
from components.load_balancers import LbListener, LoadBalancer, LoadBalancerArgs
from components.naming import Namer
from components.security_groups import SecurityGroupsArgs
from components.worker_pools import WorkerPools, WorkerPoolsArgs, WorkerPoolSpec

ROUTES_POLICY = """{
  "Version": "2012-10-17",
  "Statement": [{
    "Sid": "NativePodRoutes",
    "Effect": "Allow",
    "Action": ["ec2:CreateRoute", "ec2:DeleteRoute", "ec2:ReplaceRoute",
               "ec2:DescribeRouteTables", "ec2:DescribeInstances",
               "ec2:ModifyInstanceAttribute"],
    "Resource": "*"
  }]
}"""

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


@dataclass
class ClusterArgs:
    """Inputs of :class:`Cluster`."""

    namer: Namer
    vpc_id: pulumi.Input[str]
    private_subnet_ids: Mapping[str, pulumi.Input[str]]
    public_subnet_ids: Mapping[str, pulumi.Input[str]]
    azs: list[str]
    client_cidrs: list[str]
    image_id: str
    api_endpoint: str
    pools: list[WorkerPoolSpec]
    members: list[MemberSpec]
    control_plane_instance_type: str
    ingress_listeners: list[LbListener]
    dns_zone_id: pulumi.Input[str]
    api_record: str
    ingress_records: list[str]
    worker_generations: list[str] = field(default_factory=lambda: ["original"])
    """One set of worker pools per generation (two while nodes are being replaced)."""
    api_port: int = 6443
    ingress_internal: bool = True
    api_internal: bool = True
    etcd_volume_size: int = 50
    etcd_volume_type: str = "gp3"
    dns_ttl: int = 60
    native_routing: bool = False
    """Nodes turn off their source/dest check at boot and may manage pod routes."""
    tags: dict[str, str] = field(default_factory=dict)


class Cluster(pulumi.ComponentResource):
    """Everything of one cluster inside an existing VPC."""

    node_security_group_id: pulumi.Output[str]
    outputs: dict[str, object]

    def __init__(
        self, name: str, args: ClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("kubeshift:cluster:Cluster", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        namer = args.namer
        common = Common(
            f"{name}-common",
            CommonArgs(
                security_groups=SecurityGroupsArgs(
                    namer=namer,
                    vpc_id=args.vpc_id,
                    ingress_node_ports=[lis.target_port for lis in args.ingress_listeners],
                    ingress_ports=[lis.port for lis in args.ingress_listeners],
                    api_port=args.api_port,
                    client_cidrs=args.client_cidrs,
                    public_ingress=not args.ingress_internal,
                    public_api=not args.api_internal,
                    tags=args.tags,
                ),
                create_node_identity=True,
                identity_namer=namer,
                tags=args.tags,
            ),
            child,
        )
        groups = common.groups
        assert groups.node_id is not None and common.instance_profile_name is not None
        workers: dict[str, WorkerPools] = {}
        for generation in args.worker_generations:
            gen_namer = (
                namer
                if generation == "original"
                else Namer(namer.cluster, "-".join(p for p in (namer.suffix, generation) if p))
            )
            key = f"{name}-workers" + ("" if generation == "original" else f"-{generation}")
            workers[generation] = WorkerPools(
                key,
                WorkerPoolsArgs(
                    namer=gen_namer,
                    pools=args.pools,
                    subnet_ids=args.private_subnet_ids,
                    security_group_ids=[groups.node_id, groups.shared_id],
                    instance_profile_name=common.instance_profile_name,
                    image_id=args.image_id,
                    api_endpoint=args.api_endpoint,
                    generation=generation,
                    boot_extra=SOURCE_DEST_CHECK_OFF if args.native_routing else "",
                    tags=args.tags,
                ),
                child,
            )
        cp_identity = NodeIdentity(
            f"{name}-control-plane-identity",
            NodeIdentityArgs(
                namer=namer,
                role="control-plane",
                managed_policy_arns=("arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore",),
                inline_policy=CONTROL_PLANE_INLINE,
                tags=args.tags,
            ),
            child,
        )
        if args.native_routing:
            NodeIdentity(
                f"{name}-routes-identity",
                NodeIdentityArgs(
                    namer=namer,
                    role="routes",
                    managed_policy_arns=(),
                    inline_policy=ROUTES_POLICY,
                    tags=args.tags,
                ),
                child,
            )
        control_plane = ControlPlane(
            f"{name}-control-plane",
            ControlPlaneArgs(
                namer=namer,
                members=[
                    MemberPlacement(
                        index=m.index,
                        az=m.az,
                        side=SOURCE,
                        subnet_id=args.private_subnet_ids[m.az],
                        security_group_ids=[groups.control_plane_id, groups.shared_id],
                        address=m.address,
                    )
                    for m in args.members
                ],
                instance_type=args.control_plane_instance_type,
                image_id=args.image_id,
                instance_profile_name=cp_identity.instance_profile_name,
                api_endpoint=args.api_endpoint,
                etcd_volume_size=args.etcd_volume_size,
                etcd_volume_type=args.etcd_volume_type,
                tags=args.tags,
            ),
            child,
        )

        def lb(
            role: str,
            listeners: list[LbListener],
            attach: Mapping[str, pulumi.Input[str]],
            internal: bool,
            sg: pulumi.Input[str],
        ) -> LoadBalancer:
            subnets = args.private_subnet_ids if internal else args.public_subnet_ids
            return LoadBalancer(
                f"{name}-{role}",
                LoadBalancerArgs(
                    namer=namer,
                    role=role,
                    vpc_id=args.vpc_id,
                    subnet_ids=[subnets[az] for az in args.azs],
                    security_group_ids=[sg],
                    listeners=listeners,
                    internal=internal,
                    attachments=attach,
                    tags=args.tags,
                ),
                child,
            )

        attachments: dict[str, pulumi.Input[str]] = {}
        for generation, pools in workers.items():
            prefix = "" if generation == "original" else f"{generation}-"
            attachments.update({prefix + k: v for k, v in pools.group_names.items()})
        assert groups.ingress_lb_id is not None
        ingress = lb(
            "ingress",
            args.ingress_listeners,
            attachments,
            args.ingress_internal,
            groups.ingress_lb_id,
        )
        api = lb(
            "api",
            [LbListener(args.api_port, args.api_port)],
            {str(k): v for k, v in control_plane.group_names.items()},
            args.api_internal,
            groups.api_lb_id,
        )
        records = {
            f"ingress-{i}": RecordSpec(r, "CNAME", [ingress.dns_name])
            for i, r in enumerate(args.ingress_records)
        }
        records["api"] = RecordSpec(args.api_record, "CNAME", [api.dns_name])
        Dns(
            f"{name}-dns",
            DnsArgs(zone_id=args.dns_zone_id, records=records, ttl=args.dns_ttl),
            child,
        )

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
