"""A real Kubernetes control plane per test cluster: apiserver, controllers, scheduler, kwok.

envtest runs only etcd and an apiserver; kubeshift's promises (PDBs respected, evicted
pods rescheduled, endpoints following readiness) are made by the controller-manager,
the scheduler and a kubelet, so each cluster here runs all of them, with kwok playing
kubelet for labelled nodes. Clusters may share one etcd under distinct prefixes.
"""

from __future__ import annotations

import ssl
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import kubernetes
import yaml
from kubernetes.client import ApiClient, CoreV1Api
from kubernetes.client.exceptions import ApiException

from automation.sandbox import pki as pki_mod
from automation.sandbox.binaries import Binaries
from automation.sandbox.kubeconfig import write_kubeconfig
from automation.sandbox.kwok import start_kwok
from automation.sandbox.processes import LOOPBACK, Daemon, free_port, retry_port_clash, wait_until

SERVICE_CIDR = "10.96.0.0/16"
SERVICE_IP = "10.96.0.1"
STARTUP_TIMEOUT = 120.0

# Controllers the tests rely on, plus the rest of the defaults ("*") so the cluster
# behaves like a real one (pod GC, taint eviction, jobs...).
CONTROLLERS = "*,bootstrapsigner,tokencleaner"


@dataclass(frozen=True)
class ClusterOptions:
    """Knobs for one cluster; defaults suit functional tests, raise them for scale runs."""

    name: str
    api_qps: int = 500
    api_burst: int = 1000
    max_requests_inflight: int = 1000
    max_mutating_requests_inflight: int = 500
    pod_ready_delay_ms: int = 0
    cloud_routes: bool = False
    """A route controller reports the nodes' ``NetworkUnavailable`` (kwok does not)."""
    events_etcd: tuple[str, ...] = ()
    """Where events are kept apart from the rest (kops's events etcd): the API server's
    ``--etcd-servers-overrides`` for core ``events``."""


@dataclass
class Cluster:
    """A running test cluster and the ways to reach it."""

    name: str
    context: str
    server: str
    kubeconfig_path: Path
    ca_path: Path
    workdir: Path
    versions: dict[str, str]
    startup_seconds: float = 0.0
    daemons: list[Daemon] = field(default_factory=list, repr=False)

    @property
    def base_url(self) -> str:
        """The apiserver's base URL, e.g. ``https://127.0.0.1:40123``."""
        return self.server

    def api_client(self) -> ApiClient:
        """A fresh admin ``kubernetes.client.ApiClient`` for this cluster."""
        return kubernetes.config.new_client_from_config(
            config_file=str(self.kubeconfig_path), context=self.context
        )

    @property
    def log_paths(self) -> dict[str, Path]:
        return {d.name: d.log_path for d in self.daemons}

    def check_running(self) -> None:
        for daemon in self.daemons:
            daemon.check_running()

    def stop_apiserver(self) -> None:
        """Stop the kube-apiserver alone: clients see connections refused."""
        self._apiserver().stop()

    def start_apiserver(self) -> None:
        """Start the stopped kube-apiserver again on the same port, and wait for /readyz."""
        apiserver = self._apiserver()
        apiserver.restart()
        with self.api_client() as client:
            wait_until(
                f"{self.name} kube-apiserver back",
                lambda: _default_service_account_exists(client),
                timeout=120,
                daemons=[apiserver],
            )

    def _apiserver(self) -> Daemon:
        return next(d for d in self.daemons if d.name.endswith("kube-apiserver"))

    def stop(self) -> None:
        """Stop components in reverse start order (kwok first, apiserver last)."""
        for daemon in reversed(self.daemons):
            daemon.stop()


def _tls_context(ca: Path | None, client: pki_mod.CertPair | None) -> ssl.SSLContext:
    if ca is None:  # component health ports serve self-signed certificates
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    else:
        ctx = ssl.create_default_context(cafile=str(ca))
    if client is not None:
        ctx.load_cert_chain(str(client.cert), str(client.key))
    return ctx


def _http_ok(url: str, ctx: ssl.SSLContext) -> bool:
    with urllib.request.urlopen(url, timeout=3, context=ctx) as resp:
        return bool(resp.status == 200)


def _default_service_account_exists(client: ApiClient) -> bool:
    try:
        CoreV1Api(client).read_namespaced_service_account("default", "default")
    except ApiException as exc:
        if exc.status == 404:
            return False
        raise
    return True


def _apiserver_args(
    bins: Binaries, opts: ClusterOptions, etcd_url: str, port: int, creds: pki_mod.ClusterPki,
    workdir: Path,
) -> list[str | Path]:  # fmt: skip
    overrides = (
        [f"--etcd-servers-overrides=/events#{';'.join(opts.events_etcd)}"]
        if opts.events_etcd
        else []
    )
    return [
        bins.kube_apiserver,
        f"--etcd-servers={etcd_url}",
        *overrides,
        f"--etcd-prefix=/kubeshift/{opts.name}",
        f"--bind-address={LOOPBACK}",
        f"--advertise-address={LOOPBACK}",
        f"--secure-port={port}",
        f"--cert-dir={workdir / 'apiserver-certs'}",
        f"--tls-cert-file={creds.serving.cert}",
        f"--tls-private-key-file={creds.serving.key}",
        f"--client-ca-file={creds.ca.cert}",
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        f"--service-account-key-file={creds.service_account_pub}",
        f"--service-account-signing-key-file={creds.service_account_key}",
        f"--service-cluster-ip-range={SERVICE_CIDR}",
        "--authorization-mode=RBAC",
        "--allow-privileged=true",
        "--profiling=false",
        f"--max-requests-inflight={opts.max_requests_inflight}",
        f"--max-mutating-requests-inflight={opts.max_mutating_requests_inflight}",
        "--v=1",
    ]


def start_cluster(bins: Binaries, etcd_url: str, workdir: Path, opts: ClusterOptions) -> Cluster:
    """Start every component of one cluster and wait until it accepts workloads.

    Retried (with new ports) when a component lost the race for its free port.
    """
    return retry_port_clash(lambda: _start_cluster(bins, etcd_url, workdir, opts))


def _start_cluster(bins: Binaries, etcd_url: str, workdir: Path, opts: ClusterOptions) -> Cluster:
    """Start every component of one cluster and wait until it accepts workloads.

    Ready means: ``/readyz`` answers, the controller-manager and scheduler report
    healthy, kwok runs, and the ``default`` ServiceAccount exists (proving the
    controller-manager's controllers act). On failure every started process is stopped
    and the error names the log files.
    """
    started = time.monotonic()
    workdir.mkdir(parents=True, exist_ok=True)
    logs = workdir / "logs"
    creds = pki_mod.generate(workdir / "pki", opts.name, SERVICE_IP)
    port = free_port()
    server = f"https://{LOOPBACK}:{port}"
    context = f"kubeshift-{opts.name}"

    def kubeconfig(stem: str, user: str, pair: pki_mod.CertPair) -> Path:
        return write_kubeconfig(
            workdir / f"{stem}.kubeconfig", cluster=opts.name, context=context, server=server,
            ca=creds.ca.cert, user=user, creds=pair,
        )  # fmt: skip

    admin_kc = kubeconfig("admin", f"{opts.name}-admin", creds.admin)
    cluster = Cluster(
        name=opts.name, context=context, server=server, kubeconfig_path=admin_kc,
        ca_path=creds.ca.cert, workdir=workdir, versions=dict(bins.versions),
    )  # fmt: skip
    try:
        apiserver = Daemon.start(
            f"{opts.name}-kube-apiserver",
            _apiserver_args(bins, opts, etcd_url, port, creds, workdir),
            logs,
        )
        cluster.daemons.append(apiserver)
        api_ctx = _tls_context(creds.ca.cert, creds.admin)
        wait_until(
            f"{opts.name} kube-apiserver /readyz",
            lambda: _http_ok(f"{server}/readyz", api_ctx),
            timeout=STARTUP_TIMEOUT,
            daemons=[apiserver],
        )

        cm_port, sched_port = free_port(), free_port()
        cm_kc = kubeconfig("controller-manager", "system:kube-controller-manager",
                           creds.controller_manager)  # fmt: skip
        cm = Daemon.start(
            f"{opts.name}-kube-controller-manager",
            [
                bins.kube_controller_manager,
                f"--kubeconfig={cm_kc}",
                "--leader-elect=false",
                # each controller acts as its own ServiceAccount, with the bootstrap RBAC
                # roles a real cluster has (system:kube-controller-manager alone cannot)
                "--use-service-account-credentials=true",
                f"--controllers={CONTROLLERS}",
                f"--bind-address={LOOPBACK}",
                f"--secure-port={cm_port}",
                f"--cert-dir={workdir / 'controller-manager-certs'}",
                f"--service-account-private-key-file={creds.service_account_key}",
                f"--root-ca-file={creds.ca.cert}",
                f"--cluster-signing-cert-file={creds.ca.cert}",
                f"--cluster-signing-key-file={creds.ca.key}",
                f"--cluster-name={opts.name}",
                f"--kube-api-qps={opts.api_qps}",
                f"--kube-api-burst={opts.api_burst}",
                "--concurrent-replicaset-syncs=10",
                "--concurrent-deployment-syncs=10",
                "--v=1",
            ],
            logs,
        )
        cluster.daemons.append(cm)

        sched_kc = kubeconfig("scheduler", "system:kube-scheduler", creds.scheduler)
        sched_config = workdir / "scheduler.yaml"
        sched_config.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "kubescheduler.config.k8s.io/v1",
                    "kind": "KubeSchedulerConfiguration",
                    "clientConnection": {
                        "kubeconfig": str(sched_kc),
                        "qps": opts.api_qps,
                        "burst": opts.api_burst,
                    },
                    "leaderElection": {"leaderElect": False},
                }
            )
        )
        sched = Daemon.start(
            f"{opts.name}-kube-scheduler",
            [
                bins.kube_scheduler,
                f"--config={sched_config}",
                f"--bind-address={LOOPBACK}",
                f"--secure-port={sched_port}",
                f"--cert-dir={workdir / 'scheduler-certs'}",
                "--v=1",
            ],
            logs,
        )
        cluster.daemons.append(sched)

        kwok_kc = kubeconfig("kwok", "kubeshift-kwok", creds.kwok)
        kwok = start_kwok(
            bins.kwok, bins.kwok_stages, kwok_kc, workdir,
            name=f"{opts.name}-kwok", pod_ready_delay_ms=opts.pod_ready_delay_ms,
            route_conditions=not opts.cloud_routes,
        )  # fmt: skip
        cluster.daemons.append(kwok)

        insecure = _tls_context(None, None)

        def healthy(port: int) -> Callable[[], bool]:
            return lambda: _http_ok(f"https://{LOOPBACK}:{port}/healthz", insecure)

        for daemon, health_port in ((cm, cm_port), (sched, sched_port)):
            wait_until(
                f"{daemon.name} /healthz",
                healthy(health_port),
                timeout=STARTUP_TIMEOUT,
                daemons=cluster.daemons,
            )
        with cluster.api_client() as client:
            wait_until(
                f"{opts.name} default ServiceAccount (controller-manager running)",
                lambda: _default_service_account_exists(client),
                timeout=STARTUP_TIMEOUT,
                daemons=cluster.daemons,
            )
        cluster.check_running()
    except BaseException:
        cluster.stop()
        raise
    cluster.startup_seconds = time.monotonic() - started
    return cluster
