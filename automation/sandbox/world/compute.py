"""kops's instance groups: a launch template and an Auto Scaling group of one name each
(``<group>.<cluster domain>``; ``master-<zone>-<n>.masters.<…>`` for a member), every
template booting nodeup; and each member's two etcd volumes, which etcd-manager claims
by their ``k8s.io/etcd/*`` tags."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field

from automation.sandbox.provider.model import Aws
from automation.sandbox.provider.types.autoscaling_calls import wait_capacity
from automation.sandbox.world.kops import (
    ETCD_MAIN_TAG,
    EVENTS_VOLUME_SIZE,
    KOPS_GROUP_METRICS,
    METADATA_HOP_LIMIT,
    NODE_ROOT_VOLUME_SIZE,
    etcd_volume_name,
    events_volume_tags,
    nodeup_script,
)
from automation.sandbox.world.model import (
    MASTER_ROLE_TAG,
    Built,
    KopsCluster,
    Member,
    WorkerGroup,
    tag_spec,
)
from automation.sandbox.world.state_store import StateStore

EVENTS_VOLUME = "kops:etcd-events-volume"
"""A member's volume of kops's events etcd."""
AUTOSCALER = "k8s.io/cluster-autoscaler/"


@dataclass
class InstanceGroup:
    """A group made empty: its name, what it launches and the capacity it launches last."""

    name: str
    launch: dict[str, object]
    min_size: int
    max_size: int
    desired: int


@dataclass
class Compute:
    members: list[InstanceGroup] = field(default_factory=list)
    workers: list[InstanceGroup] = field(default_factory=list)
    built: list[Built] = field(default_factory=list)


def first_interface(group_id: str) -> list[dict[str, object]]:
    """A template's group on its first interface, with no public address (as kops and
    the modules give it)."""
    return [{
        "AssociatePublicIpAddress": False, "DeleteOnTermination": True, "DeviceIndex": 0,
        "Groups": [group_id],
    }]  # fmt: skip


def root_device(size: int) -> list[dict[str, object]]:
    return [{
        "DeviceName": "/dev/xvda",
        "Ebs": {
            "VolumeSize": size, "VolumeType": "gp3", "Encrypted": True,
            "DeleteOnTermination": True,
        },
    }]  # fmt: skip


def make_template(aws: Aws, name: str, data: dict[str, object], tags: dict[str, str]) -> str:
    made = aws.ec2.create_launch_template(
        LaunchTemplateName=name, LaunchTemplateData=data,
        TagSpecifications=tag_spec("launch-template", tags),
    )  # fmt: skip
    return str(made["LaunchTemplate"]["LaunchTemplateId"])


INSTANCE_GROUP_LABEL = "kops.k8s.io/instancegroup"


def _user_data(
    store: StateStore,
    cluster: KopsCluster,
    group: str,
    role: str,
    labels: dict[str, str],
    taints: list[str],
) -> str:
    """The group's boot script, its nodeup configuration written first (the script
    names the file's hash)."""
    config_hash = store.instance_group(group, role, labels, taints)
    script = nodeup_script(group, cluster.domain, role, config_hash=config_hash)
    return base64.b64encode(script.encode()).decode()


def make_group(
    aws: Aws,
    name: str,
    launch: dict[str, object],
    subnets: list[str],
    tags: dict[str, str],
    metrics: tuple[str, ...] = KOPS_GROUP_METRICS,
) -> None:
    """An empty group with EC2 health checks and ``metrics`` each minute (kops's, by
    default; none, as a Terraform module leaves them)."""
    autoscaling = aws.client("autoscaling")
    autoscaling.create_auto_scaling_group(
        AutoScalingGroupName=name, MinSize=0, MaxSize=0, DesiredCapacity=0,
        VPCZoneIdentifier=",".join(subnets), HealthCheckType="EC2",
        Tags=[
            {"ResourceId": name, "ResourceType": "auto-scaling-group", "Key": k, "Value": v,
             "PropagateAtLaunch": True}
            for k, v in tags.items()
        ],
        **launch,
    )  # fmt: skip
    if metrics:
        autoscaling.enable_metrics_collection(
            AutoScalingGroupName=name, Metrics=list(metrics), Granularity="1Minute"
        )


def build_members(
    aws: Aws,
    cluster: KopsCluster,
    made: Compute,
    group_id: str,
    subnets: dict[str, str],
    store: StateStore,
) -> None:
    plane = cluster.spec.control_plane
    for member in cluster.members:
        group = member.instance_group
        name = f"{group}.masters.{cluster.domain}"
        tags = cluster.tags(name, **{MASTER_ROLE_TAG: "1"})
        data: dict[str, object] = {
            "ImageId": cluster.spec.image_id,
            "InstanceType": plane.instance_type,
            "UserData": _user_data(
                store, cluster, group, "ControlPlane", {INSTANCE_GROUP_LABEL: group}, []
            ),
            "IamInstanceProfile": {"Name": f"masters.{cluster.domain}"},
            "MetadataOptions": {"HttpEndpoint": "enabled", "HttpTokens": "required"},
            "NetworkInterfaces": first_interface(group_id),
            "TagSpecifications": tag_spec("instance", tags),
        }
        if plane.root_volume_size:
            data["BlockDeviceMappings"] = root_device(plane.root_volume_size)
        template = make_template(aws, name, data, tags)
        made.built.append(Built("ec2:launch-template", name, template))
        launch: dict[str, object] = {
            "LaunchTemplate": {"LaunchTemplateId": template, "Version": "1"}
        }
        group_tags = {**tags, INSTANCE_GROUP_LABEL: group}
        make_group(aws, name, launch, [subnets[member.zone]], group_tags)
        made.built.append(Built("autoscaling:group", name, name))
        made.members.append(InstanceGroup(name, launch, 1, 1, 1))
        made.built += _etcd_volumes(aws, cluster, member)


def _etcd_volumes(aws: Aws, cluster: KopsCluster, member: Member) -> list[Built]:
    """The member's main etcd volume (the one kubeshift moves) and its events one."""
    plane = cluster.spec.control_plane
    name = etcd_volume_name(str(member.number), cluster.domain)
    tags = cluster.tags(name, **{MASTER_ROLE_TAG: "1", ETCD_MAIN_TAG: cluster.etcd_tag(member)})
    main = aws.ec2.create_volume(
        AvailabilityZone=member.zone, Size=plane.etcd_volume_size,
        VolumeType=plane.etcd_volume_type, Encrypted=True,
        TagSpecifications=tag_spec("volume", tags),
    )  # fmt: skip
    events_tags = events_volume_tags(cluster.domain, str(member.number), plane.members)
    events = aws.ec2.create_volume(
        AvailabilityZone=member.zone, Size=EVENTS_VOLUME_SIZE, VolumeType="gp3", Encrypted=True,
        TagSpecifications=tag_spec("volume", events_tags),
    )  # fmt: skip
    return [
        Built("ec2:volume", name, main["VolumeId"]),
        Built(EVENTS_VOLUME, events_tags["Name"], events["VolumeId"]),
    ]


def _worker_tags(cluster: KopsCluster, group: WorkerGroup, name: str) -> dict[str, str]:
    """kops's tags on a worker group: its instance group's, and the cluster autoscaler's
    node template of the group's labels and taints."""
    labels = kubelet_labels(group)
    return cluster.tags(
        name,
        **{
            f"{AUTOSCALER}enabled": "true",
            f"{AUTOSCALER}{cluster.domain}": "owned",
            **{f"{AUTOSCALER}node-template/label/{k}": v for k, v in labels.items()},
            **{
                f"{AUTOSCALER}node-template/taint/{t.key}": f"{t.value}:{t.effect}"
                for t in group.pool.taints
            },
            INSTANCE_GROUP_LABEL: group.name,
            "k8s.io/role/node": "1",
        },
    )


def kubelet_labels(group: WorkerGroup) -> dict[str, str]:
    """What a worker group's kubelet registers with (kops's ``nodeLabels``)."""
    return {**group.pool.labels, "node.kubernetes.io/lifecycle": group.capacity}


def build_workers(
    aws: Aws,
    cluster: KopsCluster,
    made: Compute,
    group_id: str,
    subnets: dict[str, str],
    store: StateStore,
) -> None:
    for group in cluster.worker_groups:
        pool = group.pool
        name = f"{group.name}.{cluster.domain}"
        instance_tags = cluster.tags(name)
        set_here = pool.model_fields_set
        root = pool.root_volume_size if "root_volume_size" in set_here else NODE_ROOT_VOLUME_SIZE
        hops = pool.metadata_hop_limit if "metadata_hop_limit" in set_here else METADATA_HOP_LIMIT
        data: dict[str, object] = {
            "ImageId": cluster.spec.image_id,
            "InstanceType": group.instance_types[0],
            "UserData": _user_data(
                store, cluster, group.name, "Node",
                {**kubelet_labels(group), INSTANCE_GROUP_LABEL: group.name},
                [f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"
                 for t in pool.taints],
            ),
            "IamInstanceProfile": {"Name": f"nodes.{cluster.domain}"},
            "MetadataOptions": {
                "HttpEndpoint": "enabled", "HttpTokens": "required",
                "HttpPutResponseHopLimit": hops, "InstanceMetadataTags": "disabled",
            },
            "BlockDeviceMappings": root_device(root),
            "NetworkInterfaces": first_interface(group_id),
            "TagSpecifications": [
                *tag_spec("instance", instance_tags), *tag_spec("volume", instance_tags),
            ],
        }  # fmt: skip
        template = make_template(aws, name, data, instance_tags)
        made.built.append(Built("ec2:launch-template", name, template))
        spec = {"LaunchTemplateId": template, "Version": "1"}
        on_demand = group.capacity == "on-demand"
        if on_demand and len(group.instance_types) == 1:
            launch: dict[str, object] = {"LaunchTemplate": spec}
        else:
            launch = {
                "MixedInstancesPolicy": {
                    "LaunchTemplate": {
                        "LaunchTemplateSpecification": spec,
                        "Overrides": [{"InstanceType": t} for t in group.instance_types],
                    },
                    "InstancesDistribution": {
                        "OnDemandBaseCapacity": 0,
                        "OnDemandPercentageAboveBaseCapacity": 100 if on_demand else 0,
                        "SpotAllocationStrategy": "price-capacity-optimized",
                    },
                },
                "CapacityRebalance": not on_demand,
            }
        zones = [subnets[zone] for zone in group.zones]
        make_group(aws, name, launch, zones, _worker_tags(cluster, group, name))
        made.built.append(Built("autoscaling:group", name, name))
        sizes = (pool.min_size, pool.max_size, pool.desired_size)
        made.workers.append(InstanceGroup(name, launch, *sizes))


def launch(aws: Aws, groups: list[InstanceGroup]) -> None:
    """Give each group its capacity, and wait until its instances are in service. The
    update names what the group launches again: moto's forgets a mixed instances policy
    left out (AWS keeps it)."""
    autoscaling = aws.client("autoscaling")
    for group in groups:
        autoscaling.update_auto_scaling_group(
            AutoScalingGroupName=group.name, MinSize=group.min_size, MaxSize=group.max_size,
            DesiredCapacity=group.desired, **group.launch,
        )  # fmt: skip
    for group in groups:
        wait_capacity(aws, group.name)
