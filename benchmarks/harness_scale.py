"""How long does the test control plane take to settle 200 kwok nodes and 5000 pods?

Run on demand (not part of the test suite), after ``scripts/testbin``:

    .venv/bin/python benchmarks/harness_scale.py [--nodes 200] [--pods 5000]
    .venv/bin/python benchmarks/harness_scale.py --smoke   # 4 nodes, 20 pods: the checks

It starts etcd and one cluster tuned for scale (higher client QPS and apiserver
in-flight limits), creates the nodes as four kwok-managed pools across zones, then
Deployments adding up to the pod count, and prints: cluster start-up time, time until
every node is Ready, time until every pod is Ready, plus the testbin build figures
recorded in the cache. Checked (``ok``/``FAIL`` lines, exit 1 on a failure): every node
Ready, every pod Running, the pods spread over more than one node.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kubernetes.client import AppsV1Api, CoreV1Api, V1Namespace, V1ObjectMeta

from automation.sandbox.binaries import MissingBinaries, cache_root, locate
from automation.sandbox.controlplane import ClusterOptions, start_cluster
from automation.sandbox.etcd import start_etcd
from tests.support.nodes import NodePools, NodePoolSpec
from tests.support.waiting import eventually
from tests.support.workloads import deployment

ZONES = ("us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d")
PODS_PER_DEPLOYMENT = 250
BIG = {"cpu": "64", "memory": "256Gi", "pods": "110"}
NAMESPACE = "scale"


def _build_figures() -> None:
    root = cache_root()
    for stamp in sorted(root.glob("*/.testbin.json")):
        data = json.loads(stamp.read_text())
        size = sum(p.stat().st_size for p in stamp.parent.rglob("*") if p.is_file()) / 2**20
        print(
            f"build  {data['component']:<11} {data['version']:<8} "
            f"{data['build_seconds']:>7.0f}s  {size:6.0f} MiB  ({data['go']})"
        )
    total = sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) / 2**20
    print(f"cache  {root}: {total:.0f} MiB")


def _ready_nodes(core: CoreV1Api) -> int:
    nodes: list[Any] = core.list_node(label_selector="kwok.x-k8s.io/managed=true").items
    return sum(
        any(c.type == "Ready" and c.status == "True" for c in n.status.conditions or [])
        for n in nodes
    )


def _pod_counts(apps: AppsV1Api, namespace: str) -> tuple[int, int]:
    """(pods created, pods Ready) summed over the Deployments' status."""
    deps: list[Any] = apps.list_namespaced_deployment(namespace).items
    return (
        sum(d.status.replicas or 0 for d in deps),
        sum(d.status.ready_replicas or 0 for d in deps),
    )


def checks(nodes: int, pods: int, ready_nodes: int, running: int, spread: int) -> dict[str, bool]:
    """What must hold for the settle times to be of the whole fleet: every node Ready,
    every pod Running, and the pods placed over more than one node."""
    return {
        f"all {nodes} nodes Ready": ready_nodes == nodes > 0,
        f"all {pods} pods Running": running == pods > 0,
        "the pods spread over more than one node": spread > 1 or nodes == 1,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=200)
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--timeout", type=float, default=900.0, help="per phase, seconds")
    parser.add_argument("--smoke", action="store_true", help="4 nodes, 20 pods: the checks")
    args = parser.parse_args()
    if args.smoke:
        args.nodes, args.pods, args.timeout = 4, 20, 120.0
    try:
        bins = locate()
    except MissingBinaries as exc:
        print(f"harness_scale: {exc}", file=sys.stderr)
        return 2
    if not args.smoke:
        _build_figures()
    with tempfile.TemporaryDirectory(prefix="kubeshift-scale-") as tmp:
        workdir = Path(tmp)
        etcd = start_etcd(bins.etcd, workdir)
        t0 = time.monotonic()
        cluster = start_cluster(
            bins,
            etcd.url,
            workdir / "scale",
            ClusterOptions(
                name="scale", api_qps=2000, api_burst=4000,
                max_requests_inflight=3000, max_mutating_requests_inflight=1500,
            ),
        )  # fmt: skip
        print(f"start  cluster ready in {time.monotonic() - t0:.1f}s (etcd + 4 components)")
        try:
            with cluster.api_client() as client:
                core, apps = CoreV1Api(client), AppsV1Api(client)
                nodes_ready = _settle_nodes(core, NodePools(client), args)
                pods_ready = _settle_pods(core, apps, args)
                pods: list[Any] = core.list_namespaced_pod(NAMESPACE).items
                running = sum(p.status.phase == "Running" for p in pods)
                spread = len({p.spec.node_name for p in pods})
                ready_nodes = _ready_nodes(core)
        finally:
            cluster.stop()
            etcd.stop()
    verdict = checks(args.nodes, args.pods, ready_nodes, running, spread)
    for name, ok in verdict.items():
        print(f"{'ok ' if ok else 'FAIL'} {name}")
    if not args.smoke:
        print(
            f"pods   {args.pods} pods Ready after {pods_ready:.1f}s "
            f"({args.pods / pods_ready:.0f} pods/s); {running} Running on {spread} nodes"
        )
        print(f"total  nodes + pods settled in {nodes_ready + pods_ready:.1f}s")
    return 0 if all(verdict.values()) else 1


def _settle_nodes(core: CoreV1Api, pools: NodePools, args: argparse.Namespace) -> float:
    """Create the nodes as four kwok pools across zones; seconds until all are Ready."""
    per_zone = [args.nodes // len(ZONES)] * len(ZONES)
    per_zone[0] += args.nodes - sum(per_zone)
    t1 = time.monotonic()
    with ThreadPoolExecutor(len(ZONES)) as ex:
        list(
            ex.map(
                lambda z: pools.create(
                    NodePoolSpec(f"scale-{z[0]}", count=z[1], zone=z[0], capacity=BIG)
                ),
                [(z, n) for z, n in zip(ZONES, per_zone, strict=True) if n],
            )
        )  # fmt: skip
    created = time.monotonic() - t1
    eventually(
        f"{args.nodes} Ready nodes",
        lambda: _ready_nodes(core),
        until=lambda n: n == args.nodes,
        timeout=args.timeout,
        interval=1.0,
    )
    nodes_ready = time.monotonic() - t1
    print(f"nodes  {args.nodes} created in {created:.1f}s, all Ready after {nodes_ready:.1f}s")
    return nodes_ready


def _settle_pods(core: CoreV1Api, apps: AppsV1Api, args: argparse.Namespace) -> float:
    """Deployments adding up to the pod count; seconds until every pod is Ready."""
    core.create_namespace(V1Namespace(metadata=V1ObjectMeta(name=NAMESPACE)))
    eventually(
        "default ServiceAccount in scale namespace",
        lambda: core.read_namespaced_service_account("default", NAMESPACE),
    )
    t2 = time.monotonic()
    remaining, index = args.pods, 0
    while remaining > 0:
        replicas = min(PODS_PER_DEPLOYMENT, remaining)
        apps.create_namespaced_deployment(
            NAMESPACE, deployment(f"load-{index:03d}", replicas, node_selector={})
        )
        remaining -= replicas
        index += 1
    last_print = [0.0]
    milestones: dict[str, float] = {}

    def progress() -> int:
        created, ready = _pod_counts(apps, NAMESPACE)
        now = time.monotonic() - t2
        if created == args.pods:
            milestones.setdefault("all pods created", now)
        if (
            "first pod created" not in milestones
            and core.list_namespaced_pod(NAMESPACE, limit=1).items
        ):
            milestones["first pod created"] = now
        if ready:
            milestones.setdefault("first pod Ready", now)
        if now - last_print[0] >= 15:
            print(f"       ... {created} created, {ready} Ready at {now:.0f}s", flush=True)
            last_print[0] = now
        return ready

    eventually(
        f"{args.pods} Ready pods",
        progress,
        until=lambda n: n == args.pods,
        timeout=args.timeout,
        interval=2.0,
    )
    pods_ready = time.monotonic() - t2
    print(f"pods   {index} Deployments")
    for label, at in sorted(milestones.items(), key=lambda kv: kv[1]):
        print(f"       {label} after {at:.1f}s")
    return pods_ready


if __name__ == "__main__":
    sys.exit(main())
