"""How long after its condition holds does a gate pass: polling against watch wakeups.

Run on demand (not part of the test suite), after ``scripts/testbin``:

    .venv/bin/python benchmarks/gate_latency.py [--nodes 50] [--trials 4] [--interval 15]

On one real control plane, each trial waits with vpc-move's ``new-workers-ready`` check
(``automation.kube.gates.nodes_ready``) for a pool of kwok nodes that joins at a random
moment of the gate's interval. A separate observer polls every 0.1 s and records when
the condition first holds; the figure is the time from then until the gate returns.
The same trials run with the gate sleeping its interval (``time.sleep``, as before)
and with :class:`automation.kube.wakeups.Wakeups` on the Nodes (as the runner now does).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from automation.kube.clients import KubeClients
from automation.kube.gates import nodes_ready
from automation.kube.wakeups import Wakeups
from automation.sandbox.binaries import MissingBinaries, locate
from automation.sandbox.controlplane import ClusterOptions, start_cluster
from automation.sandbox.etcd import start_etcd
from automation.waiting import wait_until
from tests.support.nodes import NodePools, NodePoolSpec, unique_name

BIG = {"cpu": "64", "memory": "256Gi", "pods": "110"}


def _trial(
    kube: KubeClients,
    pools: NodePools,
    nodes: int,
    interval: float,
    sleep: Callable[[float], None],
    rng: random.Random,
) -> float:
    """Seconds from the condition holding to the gate passing."""
    group = unique_name("gate")
    selector = f"kubeshift.io/bench={group}"
    held: list[float] = []
    stop = threading.Event()

    def join() -> None:
        time.sleep(rng.uniform(0.5, interval))
        pools.create(
            NodePoolSpec("gate", count=nodes, labels={"kubeshift.io/bench": group}, capacity=BIG)
        )

    def observe() -> None:
        while not stop.is_set():
            if nodes_ready(kube, selector, expected=nodes).done:
                held.append(time.monotonic())
                return
            time.sleep(0.1)

    threading.Thread(target=join, daemon=True).start()
    observer = threading.Thread(target=observe, daemon=True)
    observer.start()
    wait_until(
        "the nodes to be Ready",
        lambda: nodes_ready(kube, selector, expected=nodes),
        timeout=interval * 6,
        interval=interval,
        sleep=sleep,
    )
    passed = time.monotonic()
    observer.join(timeout=interval * 2)
    stop.set()
    return max(0.0, passed - held[0]) if held else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=50)
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--interval", type=float, default=15.0, help="the gate's poll, s")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    try:
        bins = locate()
    except MissingBinaries as exc:
        print(f"gate_latency: {exc}", file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="kubeshift-gates-") as tmp:
        workdir = Path(tmp)
        etcd = start_etcd(bins.etcd, workdir)
        cluster = start_cluster(bins, etcd.url, workdir / "gates", ClusterOptions(name="gates"))
        try:
            with cluster.api_client() as api:
                kube = KubeClients(api, name="gates")
                pools = NodePools(api)
                try:
                    polled = [
                        _trial(kube, pools, args.nodes, args.interval, time.sleep, rng)
                        for _ in range(args.trials)
                    ]
                    woken: list[float] = []
                    wakes = 0
                    for _ in range(args.trials):
                        with Wakeups([(kube, "nodes")]) as wakeups:
                            woken.append(
                                _trial(kube, pools, args.nodes, args.interval, wakeups.sleep, rng)
                            )
                            wakes += wakeups.wakes
                finally:
                    pools.cleanup()
        finally:
            cluster.stop()
            etcd.stop()
    for label, figures in (("polling", polled), ("wakeups", woken)):
        print(
            f"{label:8s} {args.nodes} nodes, interval {args.interval:.0f}s: condition -> gate "
            f"median {statistics.median(figures):5.2f}s, max {max(figures):5.2f}s "
            f"({', '.join(f'{f:.2f}' for f in figures)})"
        )
    ratio = statistics.median(polled) / max(statistics.median(woken), 1e-3)
    print(f"wakeups: {wakes} wakes over {args.trials} trials; median latency {ratio:.1f}x lower")
    return 0


if __name__ == "__main__":
    sys.exit(main())
