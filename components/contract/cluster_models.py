"""The models of ``kubeshift:cluster``, the cluster as it runs today: its network
(:class:`NetworkConfig`, also a vpc-move's target), control-plane members, worker pools
and their taints, the ingress and API load balancers, the DNS records, and what adoption
keeps of the tool that built it (managed policies, kept live inputs), all under
:class:`ClusterConfig`. Frozen pydantic models whose ``Field(description=...)`` texts
``docs/reference.md`` is generated from; :class:`~components.contract.models.StackConfig`
nests them.
"""

from __future__ import annotations

import ipaddress
from typing import Literal

from pydantic import Field, JsonValue

from components.contract.model_base import _Model


class NetworkConfig(_Model):
    """One VPC: CIDR, AZs, and one public and one private subnet per AZ (same order)."""

    cidr: ipaddress.IPv4Network = Field(
        description="The VPC's IPv4 CIDR block, a /16 to a /28 (what AWS accepts)."
    )
    azs: list[str] = Field(
        min_length=1,
        description="Availability zones of the VPC, in the stack's region, each listed once: "
        "one public and one private subnet in each, in this order.",
    )
    public_subnets: list[ipaddress.IPv4Network] = Field(
        description="One public subnet per AZ, in the order of azs (load balancers, NAT "
        "gateways; tagged kubernetes.io/role/elb), inside the VPC, /28 or larger, "
        "overlapping no other subnet.",
    )
    private_subnets: list[ipaddress.IPv4Network] = Field(
        description="One private subnet per AZ, in the order of azs (nodes, members and "
        "their fixed addresses, internal load balancers; tagged "
        "kubernetes.io/role/internal-elb), inside the VPC, /28 or larger.",
    )
    enable_internet_gateway: bool = Field(
        default=True,
        description="An internet gateway and the public route table's default route "
        "through it; false: neither, and no NAT gateways.",
    )
    enable_nat_gateway: bool = Field(
        default=True,
        description="NAT gateways in the public subnets for the private subnets' default "
        "routes (only with the internet gateway).",
    )
    single_nat_gateway: bool = Field(
        default=False,
        description="One NAT gateway, in the first AZ, for every private subnet instead of "
        "one per AZ (cheaper, less available).",
    )

    def private_subnet_in(self, az: str) -> ipaddress.IPv4Network:
        return self.private_subnets[self.azs.index(az)]


class Taint(_Model):
    """A node taint, passed to the kubelet with ``--register-with-taints``."""

    key: str = Field(description="The taint's key, a Kubernetes qualified name.")
    value: str = Field(default="", description="The taint's value (a label value); may be empty.")
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = Field(
        default="NoSchedule", description="What the taint does to pods that do not tolerate it."
    )


GroupPer = Literal["type-zone-capacity", "capacity"]
"""How a pool is split into Auto Scaling groups: one per instance type x AZ x capacity
type (the seed's 72 groups), or one per capacity type spanning the pool's AZs and
instance types (a kops instance group)."""

TemplatePer = Literal["capacity", "group"]
"""Whether a pool's groups of one capacity type share a launch template, or each has
its own (a Terraform module's workers)."""


class WorkerPoolConfig(_Model):
    """A worker pool: its Auto Scaling groups, by default one per instance type x AZ x
    capacity type (``group_per``)."""

    name: str = Field(
        description="The pool's name, unique in the cluster: 1-24 lower-case letters, digits "
        "or hyphens, starting with a letter; it goes into the names of its groups and "
        "templates and into the nodes' kubeshift.io/pool label.",
    )
    instance_types: list[str] = Field(
        description="EC2 instance types of the pool's nodes, each listed once (the launch "
        "template names the first; the groups' mixed-instances overrides the rest).",
    )
    azs: list[str] | None = Field(
        default=None,
        description="AZs of the pool, each an AZ of every network of the stack; default: "
        "every AZ of the network.",
    )
    capacity_types: list[Literal["on-demand", "spot"]] = Field(
        default=["on-demand", "spot"],
        description="Capacity types of the pool's groups, each listed once: a launch "
        "template and its own groups per capacity type.",
    )
    group_per: GroupPer = Field(
        default="type-zone-capacity",
        description="How the pool is split into Auto Scaling groups: type-zone-capacity, one "
        "per instance type x AZ x capacity type (the seed's 72 groups); capacity, one per "
        "capacity type spanning the pool's AZs and instance types (a kops instance group).",
    )
    template_per: TemplatePer = Field(
        default="capacity",
        description="Which of the pool's groups share a launch template: capacity, one per "
        "capacity type, the groups' overrides choosing the type (kubeshift's, kops's); "
        "group, one per group, naming its instance type and, for spot, the spot market (a "
        "Terraform module's), the group then launching from it without a mixed-instances "
        "policy. group needs group_per type-zone-capacity.",
    )
    min_size: int = Field(
        default=0,
        ge=0,
        description="Minimum size of EACH Auto Scaling group of the pool, in instances.",
    )
    desired_size: int = Field(
        default=1,
        ge=0,
        description="Starting size of EACH Auto Scaling group of the pool, between min_size "
        "and max_size; later updates leave the desired capacity to the cluster autoscaler.",
    )
    max_size: int = Field(
        default=3,
        ge=1,
        description="Maximum size of EACH Auto Scaling group of the pool, in instances.",
    )
    labels: dict[str, str] = Field(
        default={},
        description="Node labels of the pool's nodes (key -> value, Kubernetes label "
        "syntax), also declared as the cluster autoscaler's node-template tags.",
    )
    taints: list[Taint] = Field(
        default=[],
        description="Taints the pool's nodes register with (kubelet --register-with-taints).",
    )
    root_volume_size: int = Field(
        default=100,
        ge=8,
        description="Size of each node's root volume (gp3), GiB, at most 16384.",
    )
    metadata_hop_limit: int = Field(
        default=2,
        ge=1,
        le=64,
        description="Hops an IMDSv2 token's answer may travel: 2 lets pods on the node's "
        "network reach the instance metadata, 1 (kops's default) keeps them from it.",
    )

    def group_count(self, network_azs: list[str]) -> int:
        """How many Auto Scaling groups the pool has in a network of ``network_azs``."""
        groups = len(self.capacity_types)
        if self.group_per == "type-zone-capacity":
            groups *= len(self.instance_types) * len(self.azs or network_azs)
        return groups

    def starting_nodes(self, network_azs: list[str]) -> int:
        """Nodes the pool starts with: its desired size in each of its groups."""
        return self.desired_size * self.group_count(network_azs)


class ControlPlaneConfig(_Model):
    """The etcd/control-plane members: one single-instance ASG per member."""

    members: int = Field(
        default=3,
        description="Number of control-plane (etcd) members: odd, 3 to 7, so quorum holds "
        "while one moves; vpc-move has one control-plane phase per member.",
    )
    instance_type: str = Field(default="m5.xlarge", description="EC2 instance type of each member.")
    azs: list[str] | None = Field(
        default=None,
        description="AZs the members rotate over (member k in the k-th, round again), each "
        "listed once; default: every AZ of the network. Each must exist in both networks, "
        "because a member's etcd volume stays in its AZ when it moves.",
    )
    etcd_volume_size: int = Field(
        default=50,
        ge=1,
        description="Size of each member's etcd EBS volume, GiB (gp2/gp3: 1 to 16384). The "
        "volumes hold the cluster's state: a change that would shrink or replace one is "
        "refused.",
    )
    etcd_volume_type: Literal["gp3", "gp2", "io1", "io2"] = Field(
        default="gp3",
        description="EBS type of the etcd volumes; io1 and io2 are refused (they need "
        "provisioned IOPS, which kubeshift does not set).",
    )
    root_volume_size: int | None = Field(
        default=None,
        ge=8,
        description="Size of each member's root volume, GiB; default: the image's (kops: 64).",
    )
    host_index: int = Field(
        default=10,
        ge=4,
        description="Member k gets the fixed address host_index + k - 1 past the network "
        "address of its AZ's private subnet, on either side of a move (AWS keeps the first "
        "four addresses of a subnet).",
    )
    api_port: int = Field(
        default=6443,
        ge=1,
        le=65535,
        description="Port of the Kubernetes API: the API load balancer's listener and "
        "target port; clients reach https://<dns.api_record>:<api_port> (kops: 443).",
    )
    membership: Literal["static", "etcd-manager"] = Field(
        default="static",
        description="Who keeps etcd's membership. static: each member runs one etcd at a "
        "fixed address (an interface kubeshift declares and the boot script attaches), and "
        "kubeshift moves the member's peer URL (kubeadm, a Terraform module). etcd-manager: "
        "kops's etcd-manager runs a main and an events etcd on each member, names its peers "
        "by DNS and claims the member's volumes by tag in its AZ; kubeshift declares no "
        "fixed interface, writes no peer URL, and checks both etcd clusters through each "
        "move (adoption proposes it where the members' volumes carry k8s.io/etcd/main).",
    )
    etcd_names: list[str] | None = Field(
        default=None,
        description="etcd-manager only: each member's name in member order (kops's "
        "etcdMembers[].name, the part before '/' of its volumes' k8s.io/etcd/main tag); its "
        "etcd members are etcd-<name> (main) and etcd-events-<name> (events). Default: the "
        "member numbers.",
    )
    release_etcd_volumes: bool = Field(
        default=False,
        description="Lift the etcd volumes' protection (only at the scenario's last phase), "
        "so that a later delete (pulumi destroy of a decommissioned cluster) may take them.",
    )


class ListenerConfig(_Model):
    """A TCP listener of the ingress load balancer forwarding to a node port."""

    port: int = Field(
        ge=1, le=65535, description="The load balancer's listener port, unique among them."
    )
    node_port: int = Field(
        ge=30000,
        le=32767,
        description="The ingress Service's node port the listener forwards to (Kubernetes' "
        "default node-port range), unique among them.",
    )


class IngressConfig(_Model):
    """The ingress network load balancer in front of the workers' node ports."""

    internal: bool = Field(
        default=True,
        description="False makes the ingress LB internet-facing: its listener ports open "
        "to 0.0.0.0/0.",
    )
    listeners: list[ListenerConfig] = Field(
        default=[
            ListenerConfig(port=80, node_port=30080),
            ListenerConfig(port=443, node_port=30443),
        ],
        description="The ingress LB's TCP listeners, each forwarding to a node port through "
        "a target group of the workers.",
    )
    allowed_cidrs: list[ipaddress.IPv4Network] = Field(
        default=[],
        description="Who may reach an internal ingress LB besides both VPCs, which are "
        "always allowed; the ranges of ingress and api are admitted on both load balancers.",
    )


class ApiConfig(_Model):
    """The Kubernetes API's network load balancer in front of the members."""

    internal: bool = Field(
        default=True,
        description="False makes the API LB internet-facing: its port opens to 0.0.0.0/0.",
    )
    allowed_cidrs: list[ipaddress.IPv4Network] = Field(
        default=[],
        description="Who may reach an internal API LB besides both VPCs, which are always "
        "allowed; the ranges of ingress and api are admitted on both load balancers.",
    )


class DnsConfig(_Model):
    """Records kubeshift manages in an existing Route53 hosted zone."""

    zone_id: str = Field(
        description="The existing Route53 hosted zone holding the records ('Z' then "
        "upper-case letters and digits); kubeshift never creates it.",
    )
    api_record: str = Field(
        description="DNS name of the Kubernetes API, pointed at the API load balancer; the "
        "members' nodes and clients reach https://<api_record>:<control_plane.api_port>.",
    )
    ingress_records: list[str] = Field(
        default=[],
        description="DNS names pointed at the ingress load balancer (CNAMEs; a wildcard "
        "such as *.apps.example.com allowed), each listed once; vpc-move's dns-cutover points "
        "them at the new ingress load balancer.",
    )
    ttl: int = Field(
        default=60,
        ge=0,
        description="TTL of the CNAME records, seconds; the DNS drain waits it (plus a "
        "margin) before a load balancer whose records moved away is deleted.",
    )
    api_alias: bool = Field(
        default=False,
        description="The API record is an A record aliased to its load balancer, as kops "
        "makes it (no TTL of its own); false: a CNAME to the load balancer's DNS name.",
    )


class ManagedPolicies(_Model):
    """AWS managed (or the account's own) policies attached to each identity's role, by
    ARN; None: kubeshift's (``components.identity.POLICIES``). A cluster another tool
    built keeps what it attached: kops attaches none (its grants are inline)."""

    node: list[str] | None = Field(
        default=None,
        description="Policy ARNs attached to the workers' role (at most 20; 10 unless the "
        "account's quota was raised); unset: kubeshift's (ECR read-only and SSM core); []: "
        "none.",
    )
    control_plane: list[str] | None = Field(
        default=None,
        description="Policy ARNs attached to the members' role; unset: kubeshift's (SSM "
        "core); []: none.",
    )


class KeptInput(_Model):
    """A live attribute kept in place of the one kubeshift declares (``adopt
    --keep-live``): the program declares ``live`` wherever it would declare
    ``declared``, so a phase that means to change the attribute still does."""

    live: JsonValue = Field(
        description="The live value kept, as the import's preview showed it; the program "
        "declares it in place of declared."
    )
    declared: JsonValue = Field(
        description="What kubeshift declared when the live value was kept (None: nothing)."
    )


class ClusterConfig(_Model):
    """``kubeshift:cluster``: the cluster as it runs today, and what adoption keeps of the
    tool that built it."""

    name: str = Field(
        description="The cluster's name: 2-40 lower-case letters, digits or hyphens, "
        "starting with a letter; every AWS name kubeshift gives starts with it, and it is "
        "the <name> of the kubernetes.io/cluster/<name> tag unless cluster_id says otherwise.",
    )
    cluster_id: str | None = Field(
        default=None,
        pattern=r"^[a-z0-9][a-z0-9.-]{0,98}[a-z0-9]$",
        description="The ID the cluster's tags and its cloud controller know it by "
        "(kubernetes.io/cluster/<id>, KubernetesCluster=<id>, --cluster-name), where it is "
        "not name: kops's is the cluster's DNS name (prod.example.com, demo.k8s.local). "
        "Adoption finds the cluster by it, and kubeshift tags what it builds with it, so "
        "the cloud controller takes the new side's subnets, route tables and nodes as the "
        "cluster's. Default: name.",
        examples=["prod.example.com"],
    )
    image_id: str = Field(
        pattern=r"^ami-[0-9a-f]{8,17}$",
        description="The AMI the cluster's nodes and members boot.",
    )
    network: NetworkConfig = Field(
        description="The VPC the cluster runs in (vpc-move's source VPC)."
    )
    control_plane: ControlPlaneConfig = Field(
        default=ControlPlaneConfig(),
        description="The etcd/control-plane members: one single-instance Auto Scaling group "
        "per member.",
    )
    worker_pools: list[WorkerPoolConfig] = Field(
        min_length=1, description="The worker pools (at least one), names unique."
    )
    ingress: IngressConfig = Field(
        default=IngressConfig(),
        description="The ingress network load balancer in front of the workers' node ports.",
    )
    api: ApiConfig = Field(
        default=ApiConfig(),
        description="The Kubernetes API's network load balancer in front of the members.",
    )
    dns: DnsConfig = Field(
        description="Records kubeshift manages in an existing Route53 hosted zone."
    )
    tags: dict[str, str] = Field(
        default={},
        description="Tags on every resource the program declares, beside the cluster's own "
        "(KubernetesCluster, kubernetes.io/cluster/<id>); keys 1-128 characters, values "
        "up to 256, no aws: prefix.",
    )
    names: dict[str, str] = Field(
        default={},
        description="Names the live cluster's resources already carry, keyed by the name "
        "kubeshift would give them (kubeshift render --json shows those), or by "
        "<kind>:<name> when two kinds share one (launch-template:<name>, "
        "autoscaling-group:<name>, ...): adoption keeps them, as renaming a load balancer, "
        "group, template, role or security group replaces it. adopt --write-config proposes "
        "them.",
        examples=[{"demo-node": "nodes.demo.k8s.local"}],
    )
    descriptions: dict[str, str] = Field(
        default={},
        description="Descriptions the live cluster's security groups carry, keyed by the "
        "name kubeshift would give the group: AWS cannot change a group's description, so "
        "adoption keeps it rather than replace the group.",
        examples=[{"local-demo-common-sg-node": "Security group for nodes"}],
    )
    user_data: dict[str, str] = Field(
        default={},
        description="Boot scripts the live cluster's launch templates carry, as text (at "
        "most 16384 bytes), keyed by the name kubeshift would give the template: adoption "
        "keeps them, so a node the old groups launch during the migration boots as the "
        "cluster's own tool set it up to.",
    )
    kept_tags: dict[str, dict[str, str]] = Field(
        default={},
        description="Tags another tool put on the live cluster's resources, keyed by the "
        "resource's logical name (kubeshift render lists them): the program declares them "
        "beside its own, so adoption changes no tag and no later update removes them.",
        examples=[{"demo-common-sg-node-egress": {"Name": "from-nodes.demo.k8s.local-egress-all"}}],
    )
    managed_policies: ManagedPolicies = Field(
        default=ManagedPolicies(),
        description="AWS managed (or the account's own) policies attached to the workers' "
        "and the members' roles, by ARN; kops attaches none (its grants are inline).",
    )
    kept_inputs: dict[str, dict[str, KeptInput]] = Field(
        default={},
        description="Live attributes another tool set that differ from kubeshift's and that "
        "AWS could change in place, keyed by the resource's logical name and then by the "
        "attribute's Pulumi name (deregistrationDelay): kept rather than changed, so "
        "adoption and every later update leave them as they run; adopt --keep-live writes "
        "them.",
    )
    own_tags: bool = Field(
        default=True,
        description="Whether the program marks what it declares with kubeshift's own tags "
        "(managed-by, kubeshift.io/*, the node-template labels of its labels). false for a "
        "cluster another tool built, which carries none: adopting it then retags nothing.",
    )
    legacy_tags: bool = Field(
        default=True,
        description="Whether the program declares the legacy tags kops and kubeshift write "
        "beside kubernetes.io/cluster/<id>: KubernetesCluster=<id> on everything, "
        "k8s.io/role/master on a member's parts. false for a cluster whose tool wrote only "
        "the current cluster tag (a Terraform module's): adopting it then retags nothing, "
        "and its instances are found by kubernetes.io/cluster/<id>.",
    )
    autoscaler_tags: bool = Field(
        default=True,
        description="Whether the program tags the worker groups for cluster-autoscaler "
        "(k8s.io/cluster-autoscaler/enabled and /<id>, by which its auto-discovery takes a "
        "group, and the node-template labels and taints of the pool's own). false for a "
        "cluster whose groups carry none: adopting it then retags nothing, and a "
        "cluster-autoscaler that discovers groups by tag keeps leaving them alone.",
    )
    shared_group: bool = Field(
        default=True,
        description="Whether the cluster's instances share kubeshift's shared security "
        "group, which admits all traffic between them. false for a cluster another tool "
        "built, whose own rules already admit its instances to each other (kops's masters "
        "and nodes groups): the program then declares no such group on the live side, and "
        "admits a peered VPC's groups in its control-plane and node groups. A side kubeshift "
        "builds (a vpc-move's target, a mirror) always has one.",
    )

    @property
    def tag_id(self) -> str:
        """The ID in the cluster's tags: ``cluster_id``, else ``name``."""
        return self.cluster_id or self.name
