"""A cluster's EC2 world in moto, bridged to Nodes on the real control plane.

``world`` gives each test its own cluster name, VPC and subnet in moto and a
:class:`~automation.sandbox.bridge.NodeBridge` onto the session's primary cluster, so
instances launched by launch templates and Auto Scaling groups become Nodes as the
cloud controller and the kubelet would make them.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from kubernetes.client import ApiClient, CoreV1Api

from automation.sandbox.bridge import BRIDGE_LABEL, NodeBridge
from automation.sandbox.controlplane import Cluster
from components.contract import userdata
from components.contract.tags import cluster_tags
from tests.support.moto_fixtures import MotoServer
from tests.support.nodes import unique_name

AMI = "ami-12c6146b"  # ships with moto in every region
ZONE = "eu-west-1b"


@dataclass
class World:
    cluster: str
    ec2: Any
    autoscaling: Any
    core: CoreV1Api
    api: ApiClient
    bridge: NodeBridge
    vpc_id: str
    subnet_id: str

    def nodes(self) -> dict[str, Any]:
        selector = f"{BRIDGE_LABEL}={self.cluster}"
        return {n.metadata.name: n for n in self.core.list_node(label_selector=selector).items}

    def instances(self, *states: str) -> list[dict[str, Any]]:
        filters = [{"Name": "vpc-id", "Values": [self.vpc_id]}]
        if states:
            filters.append({"Name": "instance-state-name", "Values": list(states)})
        pages = self.ec2.get_paginator("describe_instances").paginate(Filters=filters)
        return [i for p in pages for r in p["Reservations"] for i in r["Instances"]]

    def launch_template(self, name: str, script: str, **data: Any) -> str:
        tags = {**cluster_tags(self.cluster), "Name": name}
        reply = self.ec2.create_launch_template(
            LaunchTemplateName=name,
            LaunchTemplateData={
                "ImageId": AMI,
                "UserData": userdata.encode(script),
                "TagSpecifications": [
                    {
                        "ResourceType": "instance",
                        "Tags": [{"Key": k, "Value": v} for k, v in tags.items()],
                    }
                ],
                **data,
            },
        )
        return str(reply["LaunchTemplate"]["LaunchTemplateId"])

    def group(self, name: str, size: int, tags: dict[str, str], **launch: Any) -> None:
        self.autoscaling.create_auto_scaling_group(
            AutoScalingGroupName=name,
            MinSize=size,
            MaxSize=size,
            DesiredCapacity=size,
            VPCZoneIdentifier=self.subnet_id,
            Tags=[{"Key": k, "Value": v, "PropagateAtLaunch": True} for k, v in tags.items()],
            **launch,
        )

    def run(self, count: int, tags: dict[str, str], **extra: Any) -> list[str]:
        reply = self.ec2.run_instances(
            ImageId=AMI,
            MinCount=count,
            MaxCount=count,
            SubnetId=self.subnet_id,
            TagSpecifications=[
                {
                    "ResourceType": "instance",
                    "Tags": [{"Key": k, "Value": v} for k, v in tags.items()],
                }
            ],
            **extra,
        )
        return [i["InstanceId"] for i in reply["Instances"]]


@pytest.fixture
def world(moto: MotoServer, primary_cluster: Cluster) -> Iterator[World]:
    cluster = unique_name("bridge")
    ec2 = moto.client("ec2")
    # 172.16/12 node names never collide with the harness's 10/8 node pools.
    cidr = f"172.{random.randrange(16, 32)}.{random.randrange(0, 256)}.0/24"
    vpc_id = ec2.create_vpc(CidrBlock=cidr)["Vpc"]["VpcId"]
    subnet_id = ec2.create_subnet(VpcId=vpc_id, CidrBlock=cidr, AvailabilityZone=ZONE)["Subnet"][
        "SubnetId"
    ]
    api = primary_cluster.api_client()
    core = CoreV1Api(api)
    bridge = NodeBridge(ec2, api, cluster)
    try:
        yield World(cluster, ec2, moto.client("autoscaling"), core, api, bridge, vpc_id, subnet_id)
    finally:
        core.delete_collection_node(label_selector=f"{BRIDGE_LABEL}={cluster}")
        api.close()


@pytest.fixture
def bridged(world: World) -> Iterator[World]:
    """``world`` with its bridge syncing in the background, as the cloud and the kubelets
    would."""
    stop = threading.Event()
    thread = threading.Thread(target=world.bridge.run, args=(stop, 0.2), daemon=True)
    thread.start()
    yield world
    stop.set()
    thread.join(timeout=10)
