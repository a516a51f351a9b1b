"""The seed's scale rehearsed whole: ``vpc-move-example`` with thousands of pods.

Run on demand (not in CI's timed path; about 35 minutes on 2 cores):

    .venv/bin/python benchmarks/example_at_scale.py                  # 3000 pods in 60 apps
    .venv/bin/python benchmarks/example_at_scale.py --deployments 10 --replicas 20   # a look

Needs the testbin cache (``scripts/testbin``). Through the console script, as a user:

1. ``kubeshift sandbox up``: the 72-ASG cluster built as kops would have (about 192
   workers, 3 members), its Nodes Ready.
2. The fleet: ``--deployments`` Deployments of ``--replicas`` pause pods on the workers,
   each with a PodDisruptionBudget (maxUnavailable 1) and a Service; pods turn Ready
   ``--ready-delay`` after they start (kwok), so every replacement costs that long.
3. ``adopt --write-config``, the proposal taken as the stack file, ``adopt --yes``.
4. ``kubeshift run --yes``, timed, with the resident memory of its process tree sampled
   every half second; then ``status --json``.

Printed: the time of each stage; per phase its wall time, engine time (preview and
update), hook time and gate time; the drain's evictions and API requests per evicted
pod (from the drain step's journal message); the peak RSS of the ``kubeshift`` process
alone and of its whole tree (engine and program included).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kubernetes import client as k8s  # noqa: E402
from kubernetes import config as k8s_config  # noqa: E402

from automation.kube.clients import list_all  # noqa: E402
from automation.sandbox.kwok import POD_READY_DELAY_ANNOTATION  # noqa: E402
from automation.scenarios import build_scenario  # noqa: E402
from components.config import load_config, load_stack_file  # noqa: E402
from tests.support.workloads import PAUSE_IMAGE  # noqa: E402

KUBESHIFT = str(Path(sys.executable).with_name("kubeshift"))
NAMESPACE = "scale"
DRAINED = re.compile(r"evicted (\d+) pod\(s\).*?; (\d+) API request\(s\)")


def log(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


def kubeshift(env: dict[str, str], *argv: str) -> tuple[float, str]:
    began = time.perf_counter()
    proc = subprocess.run([KUBESHIFT, *argv], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"kubeshift {' '.join(argv)} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    return time.perf_counter() - began, proc.stdout


# --- memory -------------------------------------------------------------------------------


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(parent, []).append(int(entry.name))
    return tree


@dataclass
class MemorySampler:
    """Peak RSS of one process and of its whole tree, sampled every ``interval`` s."""

    pid: int
    interval: float = 0.5
    own_peak_kib: int = 0
    tree_peak_kib: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)

    def sample(self) -> None:
        tree, todo, total = _children(), [self.pid], 0
        while todo:
            pid = todo.pop()
            total += _rss_kib(pid)
            todo.extend(tree.get(pid, []))
        self.own_peak_kib = max(self.own_peak_kib, _rss_kib(self.pid))
        self.tree_peak_kib = max(self.tree_peak_kib, total)

    def run(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def stop(self) -> None:
        self._stop.set()


# --- the fleet ----------------------------------------------------------------------------


def seed_fleet(api: k8s.ApiClient, args: argparse.Namespace) -> float:
    """Deployments with budgets and Services on the workers; seconds until all Ready."""
    core, apps, policy = k8s.CoreV1Api(api), k8s.AppsV1Api(api), k8s.PolicyV1Api(api)
    began = time.perf_counter()
    core.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=NAMESPACE)))
    for i in range(args.deployments):
        match = {"app": f"app{i:03d}"}
        name = match["app"]
        template = k8s.V1PodTemplateSpec(
            metadata=k8s.V1ObjectMeta(
                labels=match, annotations={POD_READY_DELAY_ANNOTATION: args.ready_delay}
            ),
            spec=k8s.V1PodSpec(
                containers=[k8s.V1Container(name="app", image=PAUSE_IMAGE)],
                termination_grace_period_seconds=0,
            ),
        )
        apps.create_namespaced_deployment(
            NAMESPACE,
            k8s.V1Deployment(
                metadata=k8s.V1ObjectMeta(name=name),
                spec=k8s.V1DeploymentSpec(
                    replicas=args.replicas,
                    selector=k8s.V1LabelSelector(match_labels=match),
                    template=template,
                ),
            ),
        )
        policy.create_namespaced_pod_disruption_budget(
            NAMESPACE,
            k8s.V1PodDisruptionBudget(
                metadata=k8s.V1ObjectMeta(name=name),
                spec=k8s.V1PodDisruptionBudgetSpec(
                    max_unavailable=1, selector=k8s.V1LabelSelector(match_labels=match)
                ),
            ),
        )
        core.create_namespaced_service(
            NAMESPACE,
            k8s.V1Service(
                metadata=k8s.V1ObjectMeta(name=name),
                spec=k8s.V1ServiceSpec(selector=match, ports=[k8s.V1ServicePort(port=80)]),
            ),
        )
    want = args.deployments * args.replicas
    deadline = time.monotonic() + 1800
    while (ready := _ready_pods(core)) < want:
        if time.monotonic() > deadline:
            sys.exit(f"the fleet did not turn Ready in 30 minutes: {ready}/{want}")
        time.sleep(5)
    return time.perf_counter() - began


def _ready_pods(core: k8s.CoreV1Api) -> int:
    pods = list_all(core.list_namespaced_pod, NAMESPACE, action="list pods")["items"]
    return sum(
        1
        for p in pods
        if any(
            c.get("type") == "Ready" and c.get("status") == "True"
            for c in (p.get("status") or {}).get("conditions") or []
        )
    )


# --- the run ------------------------------------------------------------------------------


@dataclass
class PhaseFigures:
    wall: float = 0.0
    engine: float = 0.0
    hooks: float = 0.0
    gates: float = 0.0


def phase_figures(records: list[dict[str, Any]], gates: set[str]) -> dict[str, PhaseFigures]:
    figures: dict[str, PhaseFigures] = {}
    for record in records:
        if not record["started"]:
            continue
        row = figures.setdefault(record["phase"], PhaseFigures())
        spent = (record["finished"] or record["started"]) - record["started"]
        if record["step"] in ("preview", "update"):
            row.engine += spent
        elif record["step"].split(":", 1)[-1] in gates:  # journalled as before:/after:<name>
            row.gates += spent
        elif record["step"] != "config":
            row.hooks += spent
    for phase, row in figures.items():
        mine = [r for r in records if r["phase"] == phase and r["started"]]
        row.wall = max(r["finished"] or r["started"] for r in mine) - min(
            r["started"] for r in mine
        )
    return figures


def timed_run(env: dict[str, str], stack: str) -> tuple[float, MemorySampler]:
    began = time.perf_counter()
    proc = subprocess.Popen(
        [KUBESHIFT, "--stack", stack, "run", "--yes"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    sampler = MemorySampler(proc.pid)
    thread = threading.Thread(target=sampler.run, daemon=True)
    thread.start()
    _, stderr = proc.communicate()
    sampler.stop()
    thread.join()
    if proc.returncode != 0:
        sys.exit(f"kubeshift run exited {proc.returncode}:\n{stderr[-3000:]}")
    return time.perf_counter() - began, sampler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stack", default="vpc-move-example")
    parser.add_argument("--deployments", type=int, default=60)
    parser.add_argument("--replicas", type=int, default=50)
    parser.add_argument("--ready-delay", default="2s", help="kwok pod-ready delay (Go duration)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    stack = args.stack

    state = Path(tempfile.mkdtemp(prefix="kubeshift-scale-"))
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("AWS_", "PULUMI_", "KUBESHIFT_")) and k != "KUBECONFIG"
    }
    env["KUBESHIFT_STATE_DIR"] = str(state)
    stages: dict[str, float] = {}
    print(f"stack {stack}, load avg {os.getloadavg()[0]:.1f}, {os.cpu_count()} cpus", flush=True)
    try:
        stages["sandbox up"], _ = kubeshift(env, "--stack", stack, "sandbox", "up")
        log(f"sandbox up in {stages['sandbox up']:.0f}s")
        _, text = kubeshift(env, "sandbox", "status", "--json")
        primary = next(c for c in json.loads(text)["clusters"] if c["role"] == "primary")
        api = k8s_config.new_client_from_config(
            config_file=primary["kubeconfig"], context=primary["context"]
        )
        with api:
            nodes = len(k8s.CoreV1Api(api).list_node().items)
            log(f"{nodes} Nodes; seeding {args.deployments} x {args.replicas} pods")
            stages["fleet Ready"] = seed_fleet(api, args)
        log(f"fleet Ready in {stages['fleet Ready']:.0f}s")
        proposal = state / "proposed.yaml"
        stages["adopt --write-config"], _ = kubeshift(
            env, "--stack", stack, "adopt", "--write-config", str(proposal)
        )
        shutil.copy(proposal, state / "sandbox" / "workspace" / "stacks" / f"Pulumi.{stack}.yaml")
        stages["adopt --yes"], _ = kubeshift(env, "--stack", stack, "adopt", "--yes")
        log(f"adopted in {stages['adopt --yes']:.0f}s; running")
        stages["run --yes"], memory = timed_run(env, stack)
        _, text = kubeshift(env, "--stack", stack, "status", "--json")
        scenario = build_scenario(load_config(load_stack_file(proposal)))
    finally:
        subprocess.run([KUBESHIFT, "sandbox", "down"], env=env, capture_output=True)
        shutil.rmtree(state, ignore_errors=True)

    records = json.loads(text)
    gates = {g.name for phase in scenario.phases for g in phase.gates}
    figures = phase_figures(records, gates)
    drained = [DRAINED.search(r["message"]) for r in records if r["step"] == "drain-old-nodes"]
    print(f"\n{nodes} Nodes at the start, {args.deployments * args.replicas} pods")
    for what, seconds in stages.items():
        print(f"{what}: {seconds:.1f}s")
    print("| phase | wall s | engine s | hooks s | gates s |")
    print("|---|---|---|---|---|")
    for phase, row in figures.items():
        print(
            f"| {phase} | {row.wall:.0f} | {row.engine:.0f} | {row.hooks:.0f} | {row.gates:.0f} |"
        )
    engine = sum(r.engine for r in figures.values())
    wall = sum(r.wall for r in figures.values())
    print(f"engine {engine:.0f}s of {wall:.0f}s ({engine / wall:.0%})")
    if drained and drained[0]:
        evicted, requests = int(drained[0][1]), int(drained[0][2])
        print(f"drain: {evicted} evicted, {requests} API requests, {requests / evicted:.2f}/pod")
    print(
        f"peak RSS: kubeshift {memory.own_peak_kib / 1024:.0f} MiB, "
        f"its tree (engine, program, plugins) {memory.tree_peak_kib / 1024:.0f} MiB"
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {"stages": stages, "phases": {k: v.__dict__ for k, v in figures.items()}},
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
