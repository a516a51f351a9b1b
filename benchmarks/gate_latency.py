"""How long after its condition holds does a gate pass: polling against watch wakeups.

Run on demand (not part of the test suite), after ``scripts/testbin``:

    .venv/bin/python benchmarks/gate_latency.py [--nodes 50] [--trials 4] [--interval 15]
    .venv/bin/python benchmarks/gate_latency.py --smoke   # the checks only (CI)

On one real control plane, each trial waits with vpc-move's ``new-workers-ready`` check
(``automation.kube.gates.nodes_ready``) for a pool of kwok nodes that joins at a random
moment of the gate's interval. A separate observer polls every 0.1 s and records when
the condition first holds; the figure is the time from then until the gate returns.
The same trials run with the gate sleeping its interval (``time.sleep``, as before)
and with :class:`automation.kube.wakeups.Wakeups` on the Nodes (as the runner now does).
Checked (``ok``/``FAIL`` lines, exit 1 on a failure): every trial's observer saw the
condition hold before the gate passed, and the watches woke the gate.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from automation.core.waiting import wait_until
from automation.kube.clients import KubeClients
from automation.kube.gates import nodes_ready
from automation.kube.wakeups import Wakeups
from automation.sandbox.binaries import MissingBinaries, locate
from automation.sandbox.controlplane import ClusterOptions, start_cluster
from automation.sandbox.etcd import start_etcd
from tests.support.nodes import NodePools, NodePoolSpec, unique_name

BIG = {"cpu": "64", "memory": "256Gi", "pods": "110"}
SMOKE_HELP = "2 nodes, 1 trial each way, a 3 s interval: the checks, no figures"


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


def checks(polled: list[float], woken: list[float], wakes: int) -> dict[str, bool]:
    """What must hold for the latencies to mean anything: every trial's observer saw the
    condition hold before its gate passed (a NaN is a trial it never saw), and the
    watches woke the gate at least once."""
    return {
        "every trial saw the condition hold, then the gate pass": bool(polled and woken)
        and not any(math.isnan(f) for f in polled + woken),
        "the watches woke the gate": wakes > 0,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=50)
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--interval", type=float, default=15.0, help="the gate's poll, s")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--smoke", action="store_true", help=SMOKE_HELP)
    args = parser.parse_args()
    if args.smoke:
        args.nodes, args.trials, args.interval = 2, 1, 3.0
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
                polled, woken, wakes = _trials(
                    KubeClients(api, name="gates"), NodePools(api), args, rng
                )
        finally:
            cluster.stop()
            etcd.stop()
    verdict = checks(polled, woken, wakes)
    for name, ok in verdict.items():
        print(f"{'ok ' if ok else 'FAIL'} {name}")
    if not args.smoke:
        _print_figures(args, polled, woken, wakes)
    return 0 if all(verdict.values()) else 1


def _trials(
    kube: KubeClients, pools: NodePools, args: argparse.Namespace, rng: random.Random
) -> tuple[list[float], list[float], int]:
    """The polling trials, then the wakeup trials: their latencies and the wakes."""
    try:
        polled = [
            _trial(kube, pools, args.nodes, args.interval, time.sleep, rng)
            for _ in range(args.trials)
        ]
        woken: list[float] = []
        wakes = 0
        for _ in range(args.trials):
            with Wakeups([(kube, "nodes")]) as wakeups:
                woken.append(_trial(kube, pools, args.nodes, args.interval, wakeups.sleep, rng))
                wakes += wakeups.wakes
    finally:
        pools.cleanup()
    return polled, woken, wakes


def _print_figures(
    args: argparse.Namespace, polled: list[float], woken: list[float], wakes: int
) -> None:
    for label, figures in (("polling", polled), ("wakeups", woken)):
        print(
            f"{label:8s} {args.nodes} nodes, interval {args.interval:.0f}s: condition -> gate "
            f"median {statistics.median(figures):5.2f}s, max {max(figures):5.2f}s "
            f"({', '.join(f'{f:.2f}' for f in figures)})"
        )
    ratio = statistics.median(polled) / max(statistics.median(woken), 1e-3)
    print(f"wakeups: {wakes} wakes over {args.trials} trials; median latency {ratio:.1f}x lower")


if __name__ == "__main__":
    sys.exit(main())
