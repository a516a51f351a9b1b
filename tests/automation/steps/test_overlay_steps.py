"""overlay-switch steps on real services: Calico objects on a real apiserver, routes on moto.

The Calico IPPool is a real CustomResourceDefinition served by the apiserver and
calico-node a real DaemonSet whose pods kwok runs, so "rolled" means the DaemonSet
controller really replaced every pod. Route tables live in moto's EC2.
"""

from __future__ import annotations

import dataclasses
import uuid
from pathlib import Path

import pytest
from kubernetes import client

from automation.aws.clients import AwsAccess, AwsClients
from automation.config.clients import StaticClients
from automation.config.settings import CalicoSettings, RuntimeSettings
from automation.core.waiting import Pending, wait_until
from automation.kube.clients import KubeClients
from automation.model.context import HookContext
from automation.sandbox.calico import IPPOOL_CRD, wait_served
from automation.steps import overlay, routes
from components.contract.loading import load_config, load_stack_file
from tests.support.nodes import NodePools, NodePoolSpec

REPO = Path(__file__).resolve().parents[3]


def _context(cluster, settings: RuntimeSettings, aws=None, outs=None) -> HookContext:  # type: ignore[no-untyped-def]
    values = load_stack_file(REPO / "stacks" / "Pulumi.vpc-move-small.yaml")
    return HookContext(
        stack="test",
        scenario="overlay-switch",
        phase="native-routing",
        clients=StaticClients(kube={"primary": KubeClients(cluster.api_client())}, aws=aws),
        config=load_config(values),
        settings=settings,
        outputs=outs or {},
    )


@pytest.fixture
def ip_pool(primary_cluster) -> str:  # type: ignore[no-untyped-def]
    api = primary_cluster.api_client()
    extensions = client.ApiextensionsV1Api(api)
    try:
        extensions.create_custom_resource_definition(IPPOOL_CRD)
    except client.ApiException as exc:
        if exc.status != 409:
            raise
    custom = client.CustomObjectsApi(api)
    wait_served(custom)
    name = f"pool-{uuid.uuid4().hex[:6]}"
    custom.create_cluster_custom_object(
        "crd.projectcalico.org",
        "v1",
        "ippools",
        {
            "apiVersion": "crd.projectcalico.org/v1",
            "kind": "IPPool",
            "metadata": {"name": name},
            "spec": {"cidr": "100.64.0.0/16", "ipipMode": "Always", "natOutgoing": True},
        },
    )
    return name


@pytest.mark.controlplane
def test_native_routing_switch_is_idempotent_and_rolls_calico_once(
    primary_cluster,
    ip_pool: str,
    namespace: str,
    node_pools: NodePools,  # type: ignore[no-untyped-def]
) -> None:
    pool = node_pools.create(NodePoolSpec(name="calico", count=2))
    apps = client.AppsV1Api(primary_cluster.api_client())
    labels = {"k8s-app": "calico-node"}
    apps.create_namespaced_daemon_set(
        namespace,
        client.V1DaemonSet(
            metadata=client.V1ObjectMeta(name="calico-node"),
            spec=client.V1DaemonSetSpec(
                selector=client.V1LabelSelector(match_labels=labels),
                template=client.V1PodTemplateSpec(
                    metadata=client.V1ObjectMeta(labels=labels),
                    spec=client.V1PodSpec(
                        node_selector={"kubeshift.io/pool": pool.name},
                        containers=[client.V1Container(name="calico-node", image="calico/node")],
                    ),
                ),
            ),
        ),
    )
    settings = RuntimeSettings(
        calico=CalicoSettings(ip_pool=ip_pool, namespace=namespace, daemonset="calico-node")
    )
    ctx = _context(primary_cluster, settings)
    core = client.CoreV1Api(primary_cluster.api_client())

    def two_pods() -> Pending:
        pods = core.list_namespaced_pod(namespace, label_selector="k8s-app=calico-node").items
        status = overlay.calico_rolled(ctx)
        return status if len(pods) == 2 else Pending.of([f"{len(pods)}/2 calico-node pods"])

    wait_until("calico-node up", two_pods, timeout=120, interval=0.5)

    ctx = dataclasses.replace(ctx, dry_run=True)
    assert "would set" in overlay.disable_ipip(ctx).message
    ctx = dataclasses.replace(ctx, dry_run=False)
    assert overlay.disable_ipip(ctx).changed
    assert not overlay.disable_ipip(ctx).changed
    custom = client.CustomObjectsApi(primary_cluster.api_client())
    spec = custom.get_cluster_custom_object("crd.projectcalico.org", "v1", "ippools", ip_pool)
    assert spec["spec"]["ipipMode"] == "Never"

    before = {
        p.metadata.uid
        for p in client.CoreV1Api(primary_cluster.api_client())
        .list_namespaced_pod(namespace, label_selector="k8s-app=calico-node")
        .items
    }
    assert len(before) == 2
    assert overlay.roll_calico(ctx).changed
    assert not overlay.roll_calico(ctx).changed  # a resumed run does not roll again
    wait_until("calico-node rolled", lambda: overlay.calico_rolled(ctx), timeout=120, interval=0.5)
    after = {
        p.metadata.uid
        for p in client.CoreV1Api(primary_cluster.api_client())
        .list_namespaced_pod(namespace, label_selector="k8s-app=calico-node")
        .items
        if p.metadata.deletion_timestamp is None
    }
    assert len(after) == 2 and not (after & before)


@pytest.mark.controlplane
@pytest.mark.moto
def test_route_tables_gate_reports_missing_routes_until_every_node_has_one(
    primary_cluster,
    moto,  # type: ignore[no-untyped-def]
) -> None:
    ec2 = moto.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.1.0/24")["Subnet"]["SubnetId"]
    # The route controller's table carries the cluster tag; the VPC's main table does not
    # and never gets pod routes, so the gates leave it alone.
    main_table = ec2.describe_route_tables(Filters=[{"Name": "vpc-id", "Values": [vpc]}])[
        "RouteTables"
    ][0]["RouteTableId"]
    node_table = ec2.create_route_table(
        VpcId=vpc,
        TagSpecifications=[{"ResourceType": "route-table",
                            "Tags": [{"Key": "kubernetes.io/cluster/demo", "Value": "owned"}]}],
    )["RouteTable"]["RouteTableId"]  # fmt: skip
    instances = ec2.run_instances(
        ImageId="ami-0123456789abcdef0",
        MinCount=2,
        MaxCount=2,
        SubnetId=subnet,
        TagSpecifications=[
            {"ResourceType": "instance", "Tags": [{"Key": "KubernetesCluster", "Value": "demo"}]}
        ],
    )["Instances"]
    core = client.CoreV1Api(primary_cluster.api_client())
    names = []
    for index, instance in enumerate(instances):
        name = instance["PrivateDnsName"]
        core.create_node(
            client.V1Node(
                metadata=client.V1ObjectMeta(name=name),
                spec=client.V1NodeSpec(
                    provider_id=f"aws:///us-east-1a/{instance['InstanceId']}",
                    pod_cidr=f"100.64.{index}.0/24",
                ),
            )
        )
        names.append(name)
    try:
        aws = AwsClients(AwsAccess(region=moto.region, endpoint_url=moto.endpoint_url))
        ctx = _context(primary_cluster, RuntimeSettings(), aws, {"source_vpc_id": vpc})

        capacity = routes.check_route_capacity(ctx)
        assert not capacity.changed
        assert "1 route table(s) fit" in capacity.message
        pending = routes.route_tables_complete(ctx)
        assert not pending.done
        assert len(pending.items) == 2  # two nodes x the node table
        assert all(node_table in item for item in pending.items)

        for index, instance in enumerate(instances):
            ec2.create_route(
                RouteTableId=node_table,
                DestinationCidrBlock=f"100.64.{index}.0/24",
                InstanceId=instance["InstanceId"],
            )
        assert routes.route_tables_complete(ctx).done
        assert not ec2.describe_route_tables(RouteTableIds=[main_table])["RouteTables"][0][
            "Routes"
        ][1:]  # nothing but "local" there, and the gate passed
    finally:
        for name in names:
            core.delete_node(name)
