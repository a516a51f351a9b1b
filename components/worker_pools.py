"""Worker pools: one ASG per instance type x AZ x capacity type (the seed's 72 groups)
or, as a kops instance group is, one per capacity type spanning the pool's AZs and
types; a launch template per pool and capacity type, or, as seed 001's Terraform
modules made them, one per group; with node labels and taints carried to the kubelet and
the cluster tags the runner uses to find instances.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

import pulumi
import pulumi_aws as aws

from components.contract import userdata
from components.contract.cluster_models import GroupPer, TemplatePer
from components.contract.naming import Namer
from components.contract.sides import SOURCE, Side
from components.contract.tags import (
    NODE_TEMPLATE_LABEL,
    NODE_TEMPLATE_TAINT,
    cluster_tags,
    merge_tags,
)
from components.root_volume import root_volume

Capacity = Literal["on-demand", "spot"]
ON_DEMAND: Final = "on-demand"
SPOT: Final = "spot"

ORIGINAL_GENERATION = "original"
"""Generation label of a cluster's first workers (later generations are named apart)."""


@dataclass(frozen=True)
class WorkerPoolSpec:
    """One pool as the component needs it (built from the config's worker pool)."""

    name: str
    instance_types: tuple[str, ...]
    azs: tuple[str, ...]
    capacity_types: tuple[Capacity, ...] = (ON_DEMAND, SPOT)
    group_per: GroupPer = "type-zone-capacity"
    """One ASG per instance type x AZ x capacity type, or one per capacity type."""
    template_per: TemplatePer = "capacity"
    """A launch template per capacity type, or one per group (its type, its market)."""
    min_size: int = 0
    """Per ASG, like ``desired_size`` and ``max_size``."""
    desired_size: int = 1
    max_size: int = 3
    labels: tuple[tuple[str, str], ...] = ()
    """(key, value) node labels."""
    taints: tuple[tuple[str, str, str], ...] = ()
    """(key, value, effect) triples."""
    root_volume_size: int = 100
    """Size of each node's root volume, GiB."""
    metadata_hop_limit: int = 2
    """The IMDSv2 response hop limit of the pool's instances."""


def group_key(pool: str, instance_type: str, az: str, capacity: str) -> str:
    """Stable key (and logical-name fragment) of one auto scaling group."""
    return f"{pool}-{instance_type.replace('.', '-')}-{az}-{capacity}"


def spanning_key(pool: str, capacity: str) -> str:
    """Key of a pool's one group for ``capacity`` (``group_per: capacity``)."""
    return f"{pool}-{capacity}"


def pool_groups(pool: WorkerPoolSpec, capacity: Capacity) -> list[tuple[str, list[str], list[str]]]:
    """(key, instance types, AZs) of each of the pool's groups for ``capacity``."""
    if pool.group_per == "capacity":
        return [(spanning_key(pool.name, capacity), list(pool.instance_types), list(pool.azs))]
    return [
        (group_key(pool.name, instance_type, az, capacity), [instance_type], [az])
        for instance_type in pool.instance_types
        for az in pool.azs
    ]


@dataclass(frozen=True)
class WorkerPoolsArgs:
    """Inputs of :class:`WorkerPools`."""

    namer: Namer
    """Cluster name + this side's suffix (empty for the original workers)."""
    pools: list[WorkerPoolSpec]
    subnet_ids: Mapping[str, pulumi.Input[str]]
    """Private subnet per AZ of the network the workers live in."""
    security_group_ids: list[pulumi.Input[str]]
    instance_profile_name: pulumi.Input[str]
    image_id: str
    api_endpoint: str
    """URL the kubelets register with."""
    generation: str
    """Value of the ``kubeshift.io/generation`` node label (drains select on it)."""
    network_label: Side = SOURCE
    """Value of the ``kubeshift.io/network`` tag on the groups."""
    boot_extra: str = ""
    """Extra shell run at boot before the kubelet starts (e.g. source/dest check off)."""
    grants: Sequence[pulumi.Resource] = ()
    """What grants the workers' role its permissions: the groups launch after them."""
    launch_after: Sequence[pulumi.Resource] = ()
    """What else must exist before the groups launch (the reservations of addresses a
    cluster's members will take in the same subnets)."""
    suspended_processes: list[str] = field(default_factory=list)
    """ASG processes to suspend, e.g. ``Launch`` while the pool is being drained."""
    tags: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Launch:
    """What one group launches from: its template, its instance types, and whether the
    template alone launches them (``plain``) or a mixed-instances policy over it."""

    template: aws.ec2.LaunchTemplate
    instance_types: list[str]
    plain: bool


def _plain(pool: WorkerPoolSpec, capacity: Capacity) -> bool:
    """One on-demand type launches from a shared template alone (its type is the pool's
    first), as a kops instance group of one machine type does: no policy to mix."""
    return capacity == ON_DEMAND and len(pool.instance_types) == 1


class WorkerPools(pulumi.ComponentResource):
    """All worker auto scaling groups of one side."""

    group_names: dict[str, pulumi.Output[str]]
    """ASG name per :func:`group_key` (:func:`spanning_key`)."""
    generation: str
    """The ``kubeshift.io/generation`` label of these workers."""

    def __init__(
        self, name: str, args: WorkerPoolsArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("kubeshift:compute:WorkerPools", name, None, opts)
        self.group_names = {}
        self.generation = args.generation
        base_tags = merge_tags(args.tags, cluster_tags(args.namer.tag_id))
        for pool in args.pools:
            for capacity in pool.capacity_types:
                shared = None
                if pool.template_per == "capacity":
                    shared = self._launch_template(
                        f"{name}-{pool.name}-{capacity}-lt", args, pool, capacity, base_tags,
                        role=f"workers-{pool.name}-{capacity}",
                        instance_type=pool.instance_types[0],
                    )  # fmt: skip
                for key, types, azs in pool_groups(pool, capacity):
                    own = shared is None
                    lt = shared or self._launch_template(
                        f"{name}-{key}-lt", args, pool, capacity, base_tags,
                        role=f"workers-{key}", instance_type=types[0], spot_market=True,
                    )  # fmt: skip
                    launch = Launch(lt, types, plain=own or _plain(pool, capacity))
                    self._group(name, args, pool, capacity, azs, key, launch, base_tags)
        self.register_outputs({"group_names": self.group_names})

    def _labels(self, args: WorkerPoolsArgs, pool: WorkerPoolSpec, capacity: Capacity) -> dict:
        return {
            **dict(pool.labels),
            userdata.POOL_LABEL: pool.name,
            userdata.GENERATION_LABEL: args.generation,
            userdata.LIFECYCLE_LABEL: capacity,
        }

    def _launch_template(
        self,
        logical: str,
        args: WorkerPoolsArgs,
        pool: WorkerPoolSpec,
        capacity: Capacity,
        base_tags: dict[str, str],
        *,
        role: str,
        instance_type: str,
        spot_market: bool = False,
    ) -> aws.ec2.LaunchTemplate:
        """The template of ``role``; one a single group launches from without a policy
        asks for the spot market itself where ``spot_market`` and ``capacity`` is spot."""
        lt_name = args.namer.launch_template(role)
        script = args.namer.kept_user_data(role) or userdata.node_script(
            cluster_name=args.namer.tag_id,
            api_endpoint=args.api_endpoint,
            labels=self._labels(args, pool, capacity),
            taints=pool.taints,
            extra=args.boot_extra,
        )
        instance_tags = merge_tags(base_tags, {"Name": lt_name, "kubeshift.io/pool": pool.name})
        spot = spot_market and capacity == SPOT
        return aws.ec2.LaunchTemplate(
            logical,
            name=lt_name,
            image_id=args.image_id,
            # a shared template's groups' overrides choose the type; it names the pool's
            # first, as kops's does, so a template without overrides still launches
            instance_type=instance_type,
            instance_market_options={"market_type": "spot"} if spot else None,
            user_data=userdata.encode(script),
            iam_instance_profile={"name": args.instance_profile_name},
            vpc_security_group_ids=args.security_group_ids,
            metadata_options={
                "http_endpoint": "enabled",
                "http_tokens": "required",
                "http_put_response_hop_limit": pool.metadata_hop_limit,
                "instance_metadata_tags": "disabled",
            },
            block_device_mappings=root_volume(pool.root_volume_size),
            tag_specifications=[
                {"resource_type": "instance", "tags": instance_tags},
                {"resource_type": "volume", "tags": instance_tags},
            ],
            update_default_version=True,
            tags=merge_tags(base_tags, {"Name": lt_name}),
            opts=pulumi.ResourceOptions(parent=self),
        )

    def _group(
        self,
        name: str,
        args: WorkerPoolsArgs,
        pool: WorkerPoolSpec,
        capacity: Capacity,
        azs: list[str],
        key: str,
        launch: Launch,
        base_tags: dict[str, str],
    ) -> None:
        asg_name = args.namer.autoscaling_group(f"workers-{key}")
        cluster = args.namer.tag_id  # cluster-autoscaler's auto-discovery names it so
        labels = self._labels(args, pool, capacity)
        tags = merge_tags(
            base_tags,
            {
                "Name": asg_name,
                "kubeshift.io/pool": pool.name,
                "kubeshift.io/network": args.network_label,
                "kubeshift.io/generation": args.generation,
                "k8s.io/cluster-autoscaler/enabled": "true",
                f"k8s.io/cluster-autoscaler/{cluster}": "owned",
            },
            {f"{NODE_TEMPLATE_LABEL}{k}": v for k, v in labels.items()},
            {
                f"{NODE_TEMPLATE_TAINT}{k}": f"{v}:{e}"
                for k, v, e in pool.taints
            },
        )
        on_demand = capacity == ON_DEMAND
        lt, plain = launch.template, launch.plain
        version = lt.latest_version.apply(str)
        group = aws.autoscaling.Group(
            f"{name}-{key}",
            name=asg_name,
            min_size=pool.min_size,
            max_size=pool.max_size,
            desired_capacity=pool.desired_size,
            vpc_zone_identifiers=[args.subnet_ids[az] for az in azs],
            capacity_rebalance=not on_demand,
            health_check_type="EC2",
            health_check_grace_period=300,
            suspended_processes=list(args.suspended_processes) or None,
            launch_template={"id": lt.id, "version": version} if plain else None,
            mixed_instances_policy=None
            if plain
            else {
                "instances_distribution": {
                    "on_demand_base_capacity": 0,
                    "on_demand_percentage_above_base_capacity": 100 if on_demand else 0,
                    "spot_allocation_strategy": "price-capacity-optimized",
                },
                "launch_template": {
                    "launch_template_specification": {
                        "launch_template_id": lt.id,
                        "version": version,
                    },
                    "overrides": [{"instance_type": t} for t in launch.instance_types],
                },
            },
            tags=[
                {"key": k, "value": v, "propagate_at_launch": True} for k, v in sorted(tags.items())
            ],
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[*args.grants, *args.launch_after],
                # cluster-autoscaler owns desired capacity; attachments own target groups.
                ignore_changes=["desiredCapacity", "targetGroupArns", "loadBalancers"],
            ),
        )
        self.group_names[key] = group.name
