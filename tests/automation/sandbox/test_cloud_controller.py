"""The real AWS cloud-controller-manager, started by the sandbox once the cluster's VPC
exists, gives a ``LoadBalancer`` Service its load balancer in moto."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from kubernetes.client import CoreV1Api

from automation.sandbox.cloud_controller import (
    LOAD_BALANCERS,
    CloudControllers,
    ControllerSpec,
    cluster_network,
)
from automation.sandbox.controlplane import Cluster
from automation.sandbox.moto_gaps.elb import default_health_checks
from components.contract.tags import cluster_tags
from tests.support.ec2_world import World
from tests.support.nodes import unique_name
from tests.support.waiting import eventually


@pytest.mark.moto
@pytest.mark.controlplane
@pytest.mark.cloudcontroller
def test_a_load_balancer_service_gets_a_classic_load_balancer(
    world: World,
    primary_cluster: Cluster,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from moto.elb.models import ELBBackend

    monkeypatch.setattr(ELBBackend, "create_load_balancer", ELBBackend.create_load_balancer)
    default_health_checks()  # as the sandbox's moto is patched
    ec2 = world.ec2
    assert cluster_network(ec2, world.cluster) is None  # nothing tagged yet: it waits
    tag = {"Key": f"kubernetes.io/cluster/{world.cluster}", "Value": "owned"}
    ec2.create_tags(Resources=[world.vpc_id], Tags=[tag])
    ec2.create_tags(
        Resources=[world.subnet_id],
        Tags=[tag, {"Key": "kubernetes.io/role/internal-elb", "Value": "1"}],
    )
    assert cluster_network(ec2, world.cluster) == (world.vpc_id, world.subnet_id)
    node_group = ec2.create_security_group(
        GroupName=unique_name("node"), Description="workers", VpcId=world.vpc_id,
        TagSpecifications=[{"ResourceType": "security-group", "Tags": [tag]}],
    )["GroupId"]  # fmt: skip
    [instance] = world.run(1, cluster_tags(world.cluster), SecurityGroupIds=[node_group])
    assert len(world.bridge.sync().added) == 1

    stop = threading.Event()
    controllers = CloudControllers(
        ec2,
        binary=_binary(),
        region=ec2.meta.region_name,
        endpoint=ec2.meta.endpoint_url,
        cluster=world.cluster,
        controllers=[LOAD_BALANCERS],
        cluster_cidr="10.64.0.0/10",
        workdir=tmp_path,
        log_dir=tmp_path / "logs",
    )
    spec = ControllerSpec("primary", str(primary_cluster.kubeconfig_path))
    thread = threading.Thread(target=controllers.run, args=([spec], stop), daemon=True)
    thread.start()
    core = CoreV1Api(world.api)
    name = unique_name("web")
    core.create_namespaced_service(
        "default",
        {
            "metadata": {
                "name": name,
                # The subnet is private (no internet gateway): an internal balancer.
                "annotations": {"service.beta.kubernetes.io/aws-load-balancer-internal": "true"},
            },
            "spec": {
                "type": "LoadBalancer",
                "selector": {"app": name},
                "ports": [{"port": 80, "targetPort": 8080, "protocol": "TCP"}],
            },
        },
    )
    try:
        hostname = eventually(
            f"a load balancer for {name}",
            lambda: _hostname(core, name),
            timeout=90,
        )
        balancers = _classic(world)
        [balancer] = [b for b in balancers if hostname.startswith(b["LoadBalancerName"])]
        assert [i["InstanceId"] for i in balancer["Instances"]] == [instance]
        assert balancer["VPCId"] == world.vpc_id
        # Traffic from the load balancer is opened in the one group tagged for the cluster.
        [group] = ec2.describe_security_groups(GroupIds=[node_group])["SecurityGroups"]
        sources = {p["GroupId"] for r in group["IpPermissions"] for p in r["UserIdGroupPairs"]}
        assert set(balancer["SecurityGroups"]) <= sources
    finally:
        core.delete_namespaced_service(name, "default")
        stop.set()
        thread.join(timeout=10)
        controllers.stop()
    assert controllers.daemons and not any(d.running() for d in controllers.daemons)


def _binary() -> Path:
    from automation.sandbox.binaries import MissingBinaries, cloud_controller_manager

    try:
        return cloud_controller_manager()
    except MissingBinaries as exc:
        pytest.fail(f"{exc} (scripts/test builds it)")


def _hostname(core: CoreV1Api, name: str) -> str | None:
    status = core.read_namespaced_service(name, "default").status
    balancer = status.load_balancer if status else None
    return next(
        (i.hostname for i in (balancer.ingress if balancer else None) or [] if i.hostname), None
    )


def _classic(world: World) -> list[dict]:
    import boto3

    ec2 = world.ec2
    elb = boto3.client("elb", region_name=ec2.meta.region_name, endpoint_url=ec2.meta.endpoint_url)
    return list(elb.describe_load_balancers()["LoadBalancerDescriptions"])
