"""The real AWS cloud-controller-manager (``k8s.io/cloud-provider-aws``) against moto.

In AWS the cloud-controller-manager gives a ``LoadBalancer`` Service its load balancer
(``status.loadBalancer.ingress``) and, with its route controller, writes each Node's
pod-CIDR route and reports ``NetworkUnavailable=False`` reason ``RouteCreated``. The
sandbox runs it for the scenarios that read either: cni-swap moves each Service's DNS
records to the Service's load balancer, overlay-switch waits for the routes.

Its cloud config names the region, VPC, a subnet and the cluster id (which spares it
the instance metadata service), and ``AWS_ENDPOINT_URL`` points every AWS client it
makes at moto. The VPC exists only once the live cluster is built, so
:class:`CloudControllers` waits for it, then starts one controller per cluster.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from automation.aws.nodes import cluster_tag_key
from automation.sandbox.processes import Daemon

if TYPE_CHECKING:
    from mypy_boto3_ec2 import EC2Client

log = logging.getLogger("kubeshift.sandbox.cloud_controller")

LOAD_BALANCERS = "service"
ROUTES = "route"


@dataclass(frozen=True)
class CloudSettings:
    """What one controller is told: where it runs and which cluster it serves."""

    region: str
    endpoint: str
    cluster: str
    vpc_id: str
    subnet_id: str

    def config(self) -> str:
        """The controller's ``--cloud-config`` (gcfg)."""
        return "\n".join([
            "[Global]",
            f"Region = {self.region}",
            f"VPC = {self.vpc_id}",
            f"SubnetID = {self.subnet_id}",
            f"KubernetesClusterID = {self.cluster}",
            "",
        ])  # fmt: skip

    def env(self) -> dict[str, str]:
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_REGION": self.region,
            "AWS_ACCESS_KEY_ID": "sandbox",
            "AWS_SECRET_ACCESS_KEY": "sandbox",
            "AWS_EC2_METADATA_DISABLED": "true",
        }


def argv(
    binary: Path,
    config: Path,
    kubeconfig: str,
    cluster: str,
    controllers: Sequence[str],
    cluster_cidr: str,
) -> list[str]:
    """The controller's command line: only ``controllers``, no leader election, no
    serving port, reconciling every few seconds rather than every few minutes."""
    return [
        str(binary), "--cloud-provider=aws", f"--cloud-config={config}",
        f"--kubeconfig={kubeconfig}", f"--controllers={','.join(controllers)}",
        f"--cluster-name={cluster}", f"--cluster-cidr={cluster_cidr}",
        "--leader-elect=false", "--use-service-account-credentials=false", "--secure-port=0",
        "--route-reconciliation-period=2s", "--node-monitor-period=2s", "--v=2",
    ]  # fmt: skip


def cluster_network(ec2: EC2Client, cluster: str) -> tuple[str, str] | None:
    """The cluster's VPC and one of its private subnets, once they exist."""
    key = cluster_tag_key(cluster)
    vpcs = ec2.describe_vpcs(Filters=[{"Name": "tag-key", "Values": [key]}])["Vpcs"]
    if len(vpcs) != 1:
        return None
    vpc_id = vpcs[0]["VpcId"]
    subnets = ec2.describe_subnets(
        Filters=[
            {"Name": "vpc-id", "Values": [vpc_id]},
            {"Name": "tag-key", "Values": ["kubernetes.io/role/internal-elb"]},
        ]
    )["Subnets"]
    if not subnets:
        return None
    return vpc_id, sorted(s["SubnetId"] for s in subnets)[0]


@dataclass(frozen=True)
class ControllerSpec:
    """One cluster's controller: its role (``primary``/``mirror``) and kubeconfig."""

    role: str
    kubeconfig: str


class CloudControllers:
    """Starts each cluster's controller once the cluster's VPC exists; stops them all."""

    def __init__(
        self,
        ec2: EC2Client,
        *,
        binary: Path,
        region: str,
        endpoint: str,
        cluster: str,
        controllers: Sequence[str],
        cluster_cidr: str,
        workdir: Path,
        log_dir: Path,
    ) -> None:
        self._ec2 = ec2
        self._binary = binary
        self._region, self._endpoint, self._cluster = region, endpoint, cluster
        self._controllers = tuple(controllers)
        self._cluster_cidr = cluster_cidr
        self._workdir, self._log_dir = workdir, log_dir
        self.daemons: list[Daemon] = []
        self._lock = threading.Lock()

    def run(self, specs: Sequence[ControllerSpec], stop: threading.Event) -> None:
        """Wait for the cluster's network, start a controller per spec, then wait for
        ``stop``."""
        log.info("cloud-controller-manager waits for %s's VPC", self._cluster)
        while not stop.is_set():
            try:
                found = cluster_network(self._ec2, self._cluster)
            except Exception as exc:  # moto busy or starting: try again
                log.warning("cloud-controller-manager: VPC lookup failed, will retry: %s", exc)
                found = None
            if found is not None:
                break
            stop.wait(1.0)
        else:
            return
        vpc_id, subnet_id = found
        settings = CloudSettings(self._region, self._endpoint, self._cluster, vpc_id, subnet_id)
        self._workdir.mkdir(parents=True, exist_ok=True)
        config = self._workdir / "cloud.conf"
        config.write_text(settings.config())
        with self._lock:
            if stop.is_set():
                return
            for spec in specs:
                command = argv(
                    self._binary, config, spec.kubeconfig, self._cluster, self._controllers,
                    self._cluster_cidr,
                )  # fmt: skip
                name = f"{spec.role}-cloud-controller-manager"
                self.daemons.append(Daemon.start(name, command, self._log_dir, settings.env()))
                log.info("%s started in %s (pid %s)", name, vpc_id, self.daemons[-1].pid)
        # The daemons die with the thread that started them (PR_SET_PDEATHSIG follows
        # the thread), so this one lives as long as the sandbox.
        stop.wait()

    def stop(self) -> None:
        with self._lock:
            for daemon in reversed(self.daemons):
                daemon.stop()
