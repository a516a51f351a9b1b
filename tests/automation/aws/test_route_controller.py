"""overlay-switch's route gates against the real route controller (seed 002).

The AWS cloud-controller-manager runs only its route controller, against moto and the
session's control plane. The Nodes are not kwok's: nobody else posts their
``NetworkUnavailable`` condition, so kubeshift's gates wait for the controller for real
— first naming every node still missing its route, then passing once the controller
has written each route to its instance and reported ``RouteCreated``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kubernetes.client import CoreV1Api

from automation.aws.clients import AwsAccess, AwsClients
from automation.aws.nodes import cluster_node_names, find_cluster_instances
from automation.aws.routes import node_routes, routes_pending
from automation.aws.source_dest import checks_off
from automation.core.waiting import Pending, wait_until
from automation.kube.clients import KubeClients
from automation.kube.gates import routes_created
from automation.sandbox.controlplane import Cluster
from tests.support.cloud_controller import route_controller
from tests.support.moto_fixtures import MotoServer
from tests.support.moto_world import make_network, run_instances
from tests.support.nodes import unique_name

GROUP = "kubeshift.io/test-routes"


def _node(name: str, instance: dict[str, Any], pod_cidr: str, group: str) -> dict[str, Any]:
    zone = instance["Placement"]["AvailabilityZone"]
    return {
        "metadata": {"name": name, "labels": {GROUP: group}},
        "spec": {"podCIDR": pod_cidr, "podCIDRs": [pod_cidr],
                 "providerID": f"aws:///{zone}/{instance['InstanceId']}"},
    }  # fmt: skip


@pytest.mark.moto
@pytest.mark.controlplane
@pytest.mark.cloudcontroller
def test_the_route_gates_wait_for_the_real_route_controller(
    moto: MotoServer, primary_cluster: Cluster, kube: KubeClients, tmp_path: Path
) -> None:
    aws = AwsClients(AwsAccess(region=moto.region))
    cluster = unique_name("routes")
    owned = {f"kubernetes.io/cluster/{cluster}": "owned"}
    net = make_network(aws.ec2, "10.60.0.0/16")
    table = aws.ec2.create_route_table(
        VpcId=net.vpc_id,
        TagSpecifications=[{"ResourceType": "route-table",
                            "Tags": [{"Key": k, "Value": v} for k, v in owned.items()]}],
    )["RouteTable"]["RouteTableId"]  # fmt: skip
    aws.ec2.associate_route_table(RouteTableId=table, SubnetId=net.subnet_id)
    instances = run_instances(aws.ec2, net, 3, owned)
    core = CoreV1Api(kube.api_client)
    names = [unique_name("ip-10-60") for _ in instances]
    for index, (name, instance) in enumerate(zip(names, instances, strict=True)):
        core.create_node(_node(name, instance, f"10.244.{index + 1}.0/24", cluster))
    selector = f"{GROUP}={cluster}"

    def expected_routes() -> tuple[Any, ...]:
        nodes = {n.metadata.name: n for n in core.list_node(label_selector=selector).items}
        match = cluster_node_names(
            aws.ec2, cluster=cluster, vpc_id=net.vpc_id,
            nodes={name: node.spec.provider_id for name, node in nodes.items()},
        )  # fmt: skip
        return node_routes(match.nodes, {n: node.spec.pod_cidr for n, node in nodes.items()})

    def gates() -> Pending:
        created = routes_created(kube, selector)
        routed = routes_pending(aws.ec2, route_table_ids=[table], nodes=expected_routes())
        return Pending.of([*created.items, *routed.items], created.detail)

    try:
        before = gates()
        for name in names:  # every node named, by condition and by route
            assert f"node {name}: no NetworkUnavailable condition" in before.items
            assert any(name in item and "missing" in item for item in before.items), before
        with route_controller(
            moto, kubeconfig=primary_cluster.kubeconfig_path, workdir=tmp_path,
            cluster=cluster, vpc_id=net.vpc_id, subnet_id=net.subnet_id,
            cluster_cidr="10.244.0.0/16",
        ) as log:  # fmt: skip
            waits: list[str] = []
            try:
                done = wait_until(
                    "routes created", gates, timeout=90, interval=0.5,
                    on_progress=lambda _what, pending, _left: waits.append(pending.detail),
                )  # fmt: skip
            except Exception:
                print(log.read_text()[-4000:])
                raise
            assert done.done and done.detail == "3/3 nodes have RouteCreated"
            routes = aws.ec2.describe_route_tables(RouteTableIds=[table])["RouteTables"][0]
            by_cidr = {r.get("DestinationCidrBlock"): r for r in routes["Routes"]}
            for index, instance in enumerate(instances):
                route = by_cidr[f"10.244.{index + 1}.0/24"]
                assert route["InstanceId"] == instance["InstanceId"]
                assert route["State"] == "active"
            # The controller also switched the source/destination check off, which the
            # overlay-switch gate reads from each instance.
            found = find_cluster_instances(aws.ec2, cluster=cluster, vpc_id=net.vpc_id)
            assert checks_off(found).detail == "3/3 instances with it off"
    finally:
        for name in names:
            core.delete_node(name)
