"""The sandbox's one long-lived process: it owns every service and stops them together.

``kubeshift sandbox up`` starts it detached (``python -m automation.sandbox.supervisor``).
It starts moto in server mode, one etcd, the primary cluster (and the mirror for
cni-swap stacks) with kwok, and a node bridge per cluster; a vpc-move stack's primary
runs on its own etcd of one member per control-plane member instead, booted on the
member instances by ``automation.sandbox.members`` and reached by the API server through
one stable front per member (``automation.sandbox.etcd_fronts``); writes the state file once
all of them answer; then waits. SIGTERM (``sandbox down``) stops everything in reverse
order. Every daemon it starts dies with it (``PR_SET_PDEATHSIG``), so even a SIGKILL of
the supervisor leaves no process behind.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from automation.sandbox.boots import Boots, parse_images
from automation.sandbox.layout import SandboxPaths
from automation.sandbox.local_traffic import LocalTrafficWatcher
from automation.sandbox.member_plan import SandboxEtcd
from automation.sandbox.moto_images import AMIS_VARIABLE, public_images
from automation.sandbox.state import ClusterInfo, ProcessInfo, SandboxState, process_start

if TYPE_CHECKING:
    from automation.sandbox.etcd_cluster import EtcdCluster

log = logging.getLogger("kubeshift.sandbox")
# No certificate validation wait; AWS-managed IAM policies exist as they do in AWS.
MOTO_ENV = {"MOTO_ACM_VALIDATION_WAIT": "0", "MOTO_IAM_LOAD_MANAGED_POLICIES": "true"}


def _start_moto(port: int, run: Path) -> tuple[Callable[[], None], str]:
    os.environ.update(MOTO_ENV)
    run.mkdir(parents=True, exist_ok=True)
    os.environ[AMIS_VARIABLE] = str(public_images(run))
    from automation.sandbox.moto_gaps import close_every_gap
    from automation.sandbox.moto_server import MotoServer  # after MOTO_ENV is set

    close_every_gap()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = MotoServer("127.0.0.1", port).start()
    return server.stop, server.url


def _member_fronts(members: EtcdCluster, cleanups: list[Callable[[], None]]) -> list[str]:
    """A front per member, following it as it moves; the URLs the API server is given."""
    from automation.sandbox.etcd_fronts import MemberFronts

    fronts = MemberFronts(lambda name: members.members[name].client_url, list(members.members))
    urls = fronts.start()
    cleanups.append(fronts.stop)
    return urls


def serve(args: argparse.Namespace) -> int:
    """Start everything, publish the state, wait for SIGTERM, stop everything."""
    import boto3

    from automation.sandbox.binaries import locate
    from automation.sandbox.bridge import DEFAULT_POD_CIDR, NodeBridge
    from automation.sandbox.cloud_controller import ROUTES
    from automation.sandbox.controlplane import ClusterOptions, start_cluster
    from automation.sandbox.etcd import start_etcd
    from automation.sandbox.members import MemberBoots, start_members

    paths = SandboxPaths(Path(args.root))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    cleanups: list[Callable[[], None]] = []
    try:
        bins = locate()
        stop_moto, endpoint = _start_moto(args.moto_port, paths.run)
        cleanups.append(stop_moto)
        log.info("moto at %s", endpoint)
        for key, value in {
            "AWS_ACCESS_KEY_ID": "sandbox", "AWS_SECRET_ACCESS_KEY": "sandbox",
            "AWS_ENDPOINT_URL": endpoint, "AWS_REGION": args.region,
        }.items():  # fmt: skip
            os.environ[key] = value
        os.environ.pop("AWS_PROFILE", None)

        etcd = start_etcd(bins.etcd, paths.run)
        cleanups.append(etcd.stop)
        processes = [
            ProcessInfo(name="supervisor", pid=os.getpid(), log=str(paths.logs / "supervisor.log")),
            ProcessInfo(name="moto", pid=os.getpid(), address=endpoint),
            ProcessInfo(name="etcd", pid=etcd.daemon.pid, address=etcd.url,
                        log=str(etcd.daemon.log_path)),
        ]  # fmt: skip
        plan = SandboxEtcd.model_validate_json(args.members) if args.members else None
        members = events = None
        fronts: list[str] = []
        events_fronts: list[str] = []
        if plan is not None:
            members, events, plan = start_members(bins.etcd, paths.run / "members", plan)
            cleanups.append(members.stop)
            # Not listed as processes: a member restarts under a new pid on every move
            # (member boots log it); each dies with the supervisor like every daemon.
            log.info("etcd members at %s", ", ".join(members.endpoints))
            fronts = _member_fronts(members, cleanups)
            if events is not None:  # kops's: the API server keeps its events there
                cleanups.append(events.stop)
                log.info("events etcd members at %s", ", ".join(events.endpoints))
                events_fronts = _member_fronts(events, cleanups)
        clusters: list[ClusterInfo] = []
        roles = [("primary", args.cluster_name)]
        if args.mirror_name:
            roles.append(("mirror", args.mirror_name))
        ec2 = boto3.client("ec2", region_name=args.region, endpoint_url=endpoint)
        s3 = boto3.client("s3", region_name=args.region, endpoint_url=endpoint)
        image_boots = Boots(parse_images(args.images), s3)
        for role, name in roles:
            # The primary of a vpc-move stack runs on its members, reached through their fronts.
            servers = ",".join(fronts) if fronts and role == "primary" else etcd.url
            routed = ROUTES in args.cloud_controllers.split(",")
            options = ClusterOptions(
                name=role,
                cloud_routes=routed,
                events_etcd=tuple(events_fronts) if role == "primary" else (),
            )
            cluster = start_cluster(bins, servers, paths.run / role, options)
            cleanups.append(cluster.stop)
            clusters.append(
                ClusterInfo(
                    role=role,
                    name=name,
                    server=cluster.server,
                    kubeconfig=str(cluster.kubeconfig_path),
                    context=cluster.context,
                )
            )
            processes += [
                ProcessInfo(name=d.name, pid=d.pid, address=cluster.server if "apiserver"
                            in d.name else "", log=str(d.log_path))
                for d in cluster.daemons
            ]  # fmt: skip
            # The mirror's instances carry the primary's cluster tag; each joins the
            # cluster its user data's API endpoint names, as a kubelet would.
            mirror_host = frozenset({args.mirror_api_host} - {""})
            bridge = NodeBridge(
                ec2,
                cluster.api_client(),
                args.cluster_id or args.cluster_name,
                pod_cidr=args.cluster_cidr or DEFAULT_POD_CIDR,
                node_cidr_prefix=args.node_cidr_prefix,
                api_hosts=mirror_host if role == "mirror" else frozenset(),
                foreign_api_hosts=mirror_host if role == "primary" else frozenset(),
                boots=image_boots,
            )
            thread = threading.Thread(
                target=bridge.run, args=(stop,), name=f"bridge-{role}", daemon=True
            )
            thread.start()
            processes.append(ProcessInfo(name=f"{role}-node-bridge", pid=os.getpid()))
            local = LocalTrafficWatcher(role, cluster.api_client())
            threading.Thread(
                target=local.run, args=(stop,), name=f"local-traffic-{role}", daemon=True
            ).start()
            if role == "primary" and members is not None and plan is not None:
                boots = MemberBoots(
                    ec2, members, plan, bridge.running_instances, bridge.user_data, events
                )
                threading.Thread(
                    target=boots.run, args=(stop,), name="member-boots", daemon=True
                ).start()
                processes.append(ProcessInfo(name="member-boots", pid=os.getpid()))

        if args.cloud_controllers:
            from automation.sandbox.binaries import cloud_controller_manager
            from automation.sandbox.cloud_controller import CloudControllers, ControllerSpec

            controllers = CloudControllers(
                ec2,
                binary=cloud_controller_manager(),
                region=args.region,
                endpoint=endpoint,
                cluster=args.cluster_id or args.cluster_name,
                controllers=args.cloud_controllers.split(","),
                cluster_cidr=args.cluster_cidr or DEFAULT_POD_CIDR,
                workdir=paths.run / "cloud-controller",
                log_dir=paths.logs,
            )
            cleanups.append(controllers.stop)
            specs = [ControllerSpec(c.role, c.kubeconfig) for c in clusters]
            threading.Thread(
                target=controllers.run, args=(specs, stop), name="cloud-controllers", daemon=True
            ).start()

        SandboxState(
            stack=args.stack,
            scenario=args.scenario,
            region=args.region,
            supervisor_pid=os.getpid(),
            supervisor_started=process_start(os.getpid()),
            moto_endpoint=endpoint,
            processes=processes,
            clusters=clusters,
            pulumi_bin=args.pulumi_bin,
            started_at=time.time(),
            etcd=plan,
        ).save(paths.state_file)
        log.info("sandbox ready")
        while not stop.wait(1.0):
            pass
        return 0
    except Exception:
        log.exception("sandbox failed")
        (paths.root / "supervisor.failed").write_text("see logs/supervisor.log\n")
        return 1
    finally:
        stop.set()
        for cleanup in reversed(cleanups):
            try:
                cleanup()
            except Exception:  # keep stopping the rest
                log.exception("stopping a sandbox service failed")
        log.info("sandbox stopped")


def main() -> int:
    parser = argparse.ArgumentParser(description="kubeshift sandbox supervisor (internal)")
    parser.add_argument("--root", required=True)
    parser.add_argument("--stack", required=True)
    parser.add_argument("--scenario", required=True)
    parser.add_argument("--region", required=True)
    parser.add_argument("--cluster-name", required=True)
    parser.add_argument("--cluster-id", default="", help="its tags' ID, where not its name")
    parser.add_argument("--mirror-name", default="")
    parser.add_argument("--mirror-api-host", default="", help="the mirror's nodes join it")
    parser.add_argument("--cloud-controllers", default="", help="e.g. service,route")
    parser.add_argument("--images", default="", help="<image id>=<boot>,… (ImageBoot)")
    parser.add_argument("--cluster-cidr", default="", help="the nodes' pod CIDRs' range")
    parser.add_argument("--node-cidr-prefix", type=int, default=24, help="each node's pod CIDR")
    parser.add_argument("--moto-port", type=int, default=0)
    parser.add_argument("--pulumi-bin", required=True)
    parser.add_argument("--members", default="", help="SandboxEtcd JSON (vpc-move stacks)")
    args = parser.parse_args()
    logs = Path(args.root) / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    logging.basicConfig(
        filename=logs / "supervisor.log",
        level=logging.INFO,
        format="%(asctime)s %(threadName)s %(name)s %(message)s",
    )
    return serve(args)


if __name__ == "__main__":
    sys.exit(main())
