"""The real AWS cloud-controller-manager, running only its route controller against moto.

It writes each Node's ``spec.podCIDR`` route to the Node's instance in the cluster's
route table and sets ``NetworkUnavailable=False`` reason ``RouteCreated`` — the
controller overlay-switch's routes wait for. Its cloud config names the region, VPC,
subnet and cluster id (which spares it the instance metadata service) and points EC2 at
moto. It supports one route table per cluster, tagged ``kubernetes.io/cluster/<id>``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from automation.sandbox.binaries import cloud_controller_manager
from tests.support.moto_fixtures import MotoServer


def cloud_config(moto: MotoServer, *, cluster: str, vpc_id: str, subnet_id: str) -> str:
    return "\n".join([
        "[Global]",
        f"Region = {moto.region}",
        f"VPC = {vpc_id}",
        f"SubnetID = {subnet_id}",
        f"KubernetesClusterID = {cluster}",
        "",
        '[ServiceOverride "ec2"]',
        "Service = EC2",
        f"Region = {moto.region}",
        f"URL = {moto.endpoint_url}",
        f"SigningRegion = {moto.region}",
        "SigningName = ec2",
        "",
    ])  # fmt: skip


@contextmanager
def route_controller(
    moto: MotoServer,
    *,
    kubeconfig: Path,
    workdir: Path,
    cluster: str,
    vpc_id: str,
    subnet_id: str,
    cluster_cidr: str,
) -> Iterator[Path]:
    """Run the route controller until the block ends; yields its log file."""
    config = workdir / "cloud.conf"
    config.write_text(cloud_config(moto, cluster=cluster, vpc_id=vpc_id, subnet_id=subnet_id))
    log = workdir / "cloud-controller-manager.log"
    env = {
        **os.environ,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    command = [
        str(cloud_controller_manager()), "--cloud-provider=aws", f"--cloud-config={config}",
        f"--kubeconfig={kubeconfig}", "--controllers=route", f"--cluster-cidr={cluster_cidr}",
        f"--cluster-name={cluster}", "--leader-elect=false",
        "--use-service-account-credentials=false", "--secure-port=0",
        "--route-reconciliation-period=1s", "--v=2",
    ]  # fmt: skip
    with log.open("w") as out:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        yield log
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
