"""The seed's scale rehearsed whole: ``vpc-move-example`` with thousands of pods.

Run on demand (not in CI's timed path; about 35 minutes on 2 cores):

    .venv/bin/python benchmarks/example_at_scale.py                  # 3000 pods in 60 apps
    .venv/bin/python benchmarks/example_at_scale.py --deployments 10 --replicas 20   # a look
    .venv/bin/python benchmarks/example_at_scale.py --built-by terraform-modules   # seed 001's

Needs the testbin cache (``scripts/testbin``). Through the console script, as a user:

1. ``kubeshift sandbox up``: the 72-ASG cluster built as kops would have (about 192
   workers, 3 members running etcd-manager's main and events etcd), its Nodes Ready;
   with ``--built-by terraform-modules``, as seed 001's modules built it (72 worker
   groups, 3 static members), released after adoption by the ``terraform state rm``
   commands adopt prints.
2. The fleet: ``--deployments`` Deployments of ``--replicas`` pause pods on the workers,
   each with a PodDisruptionBudget (maxUnavailable 1) and a Service; pods turn Ready
   ``--ready-delay`` after they start (kwok), so every replacement costs that long.
3. ``adopt --write-config``, the proposal taken as the stack file, ``adopt --yes
   --keep-live`` (kops's settings that kubeshift would declare otherwise are kept, as
   the shared rehearsal adopts; without it adoption refuses them).
4. ``kubeshift run --yes``, timed, with the resident memory of its process tree sampled
   every half second; then ``status --json``.

The sandbox's own replacement ceiling, in the same run (``--ceiling-share``, default a
third; 0 skips it): the run stops before ``drain-workers`` (``--to ingress-move``) and
that share of the old workers (already tainted, so replacements land on the new ones)
is split in two, a third and two thirds of its nodes. Every pod of the first part is
deleted at once, with no budget and no eviction API, and timed until every replacement
is Ready; then the second part, about twice the pods, the same way. Replacing ``n`` pods
at once costs a fixed part (the controllers noticing, the ready delay, the last pods'
scheduling) and a part per pod; the two sizes give both, and the ceiling for the ``n``
pods kubeshift drains is ``fixed + per_pod * n``. (Scaling one sample's pods per second
to the rest, as this benchmark did before, counted the fixed part once per sample's
worth of pods: twice for a rest twice the sample.) The run then resumes and kubeshift
drains the rest, timed like the ceiling to the moment its last replacement is Ready (a
watch of the fleet's pods in this process, ``benchmarks.drain.EndPoint``, from the drain
step's start in the journal; the step itself ends when the last old pod is gone, which
is printed too) and set against that ceiling and the PodDisruptionBudget bound of what
was left.

Printed: the time of each stage; per phase its wall time, engine time (preview and
update), hook time and gate time; the drain's evictions and API requests per evicted
pod (from the drain step's journal message); the peak RSS of the ``kubeshift`` process
alone and of its whole tree (engine and program included).

Measured (``--deployments 6 --replicas 10 --ceiling-share 0``, judged, 2 cores, single
runs back to back): before the judgement named nested defaults and compared sets in any
order, and before an unchanged phase skipped its preview, ``run --yes`` took 1089 s and
the phases that change nothing (ingress-nodeport, ingress-move) 40 and 48 s of engine
time, each targeting about 240 and 380 resources; after, 898 s, and those phases 13 and
22 s (the judgement 3 to 6 s, then an update of the stack resource alone, which still
runs the whole program through the engine to write the progress record). The rest is
creates and deletes through the stand-in and moto: target-workers' 289 creates 126 s,
retire-old-workers' 312 deletes 165 s.

Measured with ``--built-by terraform-modules --deployments 2 --replicas 5 --ceiling-share
0`` (2 cores, one run): 195 Nodes; ``adopt --write-config`` 12 s, ``adopt --yes
--keep-live`` 132 s (423 live values kept, set aside in the kept file), ``terraform state
rm`` of 217 addresses, ``run --yes`` 596 s (engine 445 s of 626 s; target-workers 106 s,
retire-old-workers 119 s, each control-plane phase about 30 s with its peer-URL move);
peak RSS 379 MiB for kubeshift, 889 MiB for its tree. Its first run found that
``--keep-live`` took a 55 kB config past Pulumi's one environment string.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402
from kubernetes import client as k8s  # noqa: E402
from kubernetes import config as k8s_config  # noqa: E402

from automation.kube.clients import list_all  # noqa: E402
from automation.kube.pods import pod_ready  # noqa: E402
from automation.sandbox.kwok import POD_READY_DELAY_ANNOTATION, parse_duration_ms  # noqa: E402
from automation.scenarios import build_scenario  # noqa: E402
from benchmarks.deletes import DELETERS, delete_at_once  # noqa: E402
from benchmarks.drain import EndPoint, EndPointMissed, lower_bound  # noqa: E402
from benchmarks.faults import preview_scope, take_proposal  # noqa: E402
from components.contract.loading import load_config, load_stack_file  # noqa: E402
from tests.support.terraform_cli import run_state_rm_commands  # noqa: E402
from tests.support.user_env import aimed_at_sandbox, user_environment  # noqa: E402
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
    return sum(1 for p in pods if pod_ready(p))


@dataclass(frozen=True)
class Sample:
    """Pods deleted at once off ``nodes`` old workers, and the seconds until every
    replacement was Ready."""

    nodes: int
    pods: int
    seconds: float


@dataclass(frozen=True)
class CeilingFit:
    """``fixed + per_pod * n``: seconds to replace ``n`` pods at once, through two samples."""

    fixed: float
    per_pod: float

    @classmethod
    def through(cls, small: Sample, large: Sample) -> CeilingFit:
        if large.pods <= small.pods:  # no second size: nothing to separate the parts by
            return cls(math.nan, math.nan)
        per_pod = (large.seconds - small.seconds) / (large.pods - small.pods)
        return cls(small.seconds - per_pod * small.pods, per_pod)

    def seconds(self, pods: int) -> float:
        return self.fixed + self.per_pod * pods

    def problem(self) -> str:
        """Why the fit cannot stand for a ceiling ('' when it can): the larger sample was
        not slower, so noise, not the pods, made the difference."""
        if not self.per_pod > 0:
            return f"the larger sample was not slower (per pod {self.per_pod:+.4f}s)"
        return ""


@dataclass(frozen=True)
class Ceiling:
    """What the sandbox's control plane replaces at most, measured at two sizes on part
    of the fleet, and what it left kubeshift."""

    small: Sample
    large: Sample
    old_nodes: tuple[str, ...]  # every old worker holding the fleet before the ceiling
    rest_pods: int  # the fleet's pods left on old workers, for kubeshift to drain
    bound_after: float  # PodDisruptionBudget bound of those

    @property
    def fit(self) -> CeilingFit:
        return CeilingFit.through(self.small, self.large)

    def describe(self) -> str:
        fit = self.fit
        return (
            f"ceiling: {self.small.pods} pods off {self.small.nodes} old workers deleted at "
            f"once, all replaced and Ready after {self.small.seconds:.1f}s; {self.large.pods} "
            f"off {self.large.nodes} after {self.large.seconds:.1f}s: fixed {fit.fixed:.1f}s "
            f"+ {fit.per_pod * 1000:.1f} ms per pod"
        )


def split_ceiling_nodes(chosen: list[str]) -> tuple[list[str], list[str]]:
    """The ceiling's workers in two parts, a third and two thirds: two sizes to fit."""
    if len(chosen) < 3:
        sys.exit(f"{len(chosen)} worker(s) cannot give the ceiling two sizes: raise the share")
    third = len(chosen) // 3
    return chosen[:third], chosen[third:]


def replace_at_once(core: k8s.CoreV1Api, nodes: list[str], pods: list[str], want: int) -> Sample:
    """Delete ``pods`` (every fleet pod on ``nodes``) at once: the seconds until none is
    left on those nodes and all ``want`` are Ready, as one watch sees it."""
    with EndPoint(core, nodes, want, field_selector=f"metadata.namespace={NAMESPACE}") as end:
        began = time.monotonic()
        deleted = delete_at_once(core, [(NAMESPACE, name) for name in pods])
        if deleted.deleted != len(pods):
            sys.exit(f"the ceiling deleted {deleted.deleted} of {len(pods)} pods")
        try:
            replaced = end.wait(began + 1800)
        except EndPointMissed as exc:
            sys.exit(f"the ceiling's replacements were not Ready in 30 minutes: {exc}")
    return Sample(len(nodes), len(pods), replaced - began)


def measure_ceiling(api: k8s.ApiClient, args: argparse.Namespace) -> Ceiling:
    """Replace every pod on a third of ``--ceiling-share`` of the old workers at once,
    then every pod on the other two thirds (a request per pod, many in flight, grace 0,
    no budget): two sizes, each timed until every replacement is Ready."""
    core = k8s.CoreV1Api(api)
    pods = list_all(core.list_namespaced_pod, NAMESPACE, action="list pods")["items"]
    by_node: dict[str, list[dict[str, Any]]] = {}
    for pod in pods:
        by_node.setdefault(pod["spec"].get("nodeName") or "", []).append(pod)
    old = sorted(n for n in by_node if n)
    step = max(1, round(1 / args.ceiling_share))
    small, large = split_ceiling_nodes(old[::step])
    want = args.deployments * args.replicas
    samples = [
        replace_at_once(core, part, [p["metadata"]["name"] for n in part for p in by_node[n]], want)
        for part in (small, large)
    ]
    chosen = {*small, *large}
    left = Counter(
        p["metadata"]["labels"]["app"] for n in old if n not in chosen for p in by_node[n]
    )
    bound = lower_bound(list(left.values()) or [0], 1, parse_duration_ms(args.ready_delay) / 1000)
    return Ceiling(samples[0], samples[1], tuple(old), sum(left.values()), bound)


def drain_against_ceiling(
    ceiling: Ceiling, drain: dict[str, Any], replaced_at: float | None
) -> tuple[list[str], bool]:
    """The drain set against the ceiling and the bound, both ends the same: from the
    drain step's start to its last replacement Ready. Returns the lines to print and
    whether the comparison could be made."""
    lines = [ceiling.describe()]
    if replaced_at is None:
        return [*lines, "kubeshift: its last replacement Ready was not seen: no ratio"], False
    took = replaced_at - drain["started"]
    step = drain["finished"] - drain["started"]
    lines.append(
        f"kubeshift: {ceiling.rest_pods} pods drained, the last replacement Ready "
        f"{took:.0f}s after the drain step started (the step, to the last old pod gone: "
        f"{step:.0f}s)"
    )
    why = ceiling.fit.problem()
    if why:
        return [*lines, f"ceiling: not extrapolated: {why}; no ratio"], False
    best = max(ceiling.bound_after, ceiling.fit.seconds(ceiling.rest_pods))
    lines.append(
        f"ceiling for {ceiling.rest_pods} pods {ceiling.fit.seconds(ceiling.rest_pods):.0f}s; "
        f"PDB bound of the rest {ceiling.bound_after:.0f}s; "
        f"kubeshift / max(bound, ceiling) = {took:.0f} / {best:.0f}s = {took / best:.2f}x"
    )
    return lines, True


def with_drain_limits(stack_file: Path, max_nodes_in_flight: int) -> None:
    """Set ``kubeshift:runtime.drain_limits.max_nodes_in_flight`` in the stack file."""
    data = yaml.safe_load(stack_file.read_text())
    runtime = data["config"].setdefault("kubeshift:runtime", {})
    runtime.setdefault("drain_limits", {})["max_nodes_in_flight"] = max_nodes_in_flight
    stack_file.write_text(yaml.safe_dump(data, sort_keys=False))


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
        if record["started"] is None:
            continue
        row = figures.setdefault(record["phase"], PhaseFigures())
        finished = record["started"] if record["finished"] is None else record["finished"]
        spent = finished - record["started"]
        if record["step"] in ("preview", "update"):
            row.engine += spent
        elif record["step"].split(":", 1)[-1] in gates:  # journalled as before:/after:<name>
            row.gates += spent
        elif record["step"] != "config":
            row.hooks += spent
    for phase, row in figures.items():
        mine = [r for r in records if r["phase"] == phase and r["started"] is not None]
        ends = [r["started"] if r["finished"] is None else r["finished"] for r in mine]
        row.wall = max(ends) - min(r["started"] for r in mine)
    return figures


def _stretches(details: dict[str, Any]) -> str:
    """``total (start/program/steps/finish/after)`` of one engine operation's journal
    record (``automation.engine.timeline``); ``-`` for a stretch not seen."""
    seconds = details.get("seconds") or {}
    if not seconds:
        return "-"
    parts = "/".join(
        f"{seconds[k]:.1f}" if k in seconds else "-"
        for k in ("start", "program", "steps", "finish", "after")
    )
    return f"{seconds['total']:.1f} ({parts})"


def engine_breakdown(records: list[dict[str, Any]]) -> list[str]:
    """Per phase: the judgement, and where its preview's and update's time went."""
    lines = [
        "| phase | judging s | previewed | preview s (start/program/steps/finish/after) "
        "| update s (start/program/steps/finish/after) |",
        "|---|---|---|---|---|",
    ]
    steps = {(r["phase"], r["step"]): r["details"] or {} for r in records}
    for phase in dict.fromkeys(r["phase"] for r in records):
        preview, update = steps.get((phase, "preview"), {}), steps.get((phase, "update"), {})
        if not preview and not update:
            continue
        judging = preview.get("judging")
        lines.append(
            f"| {phase} | {'-' if judging is None else f'{judging:.1f}'} "
            f"| {preview.get('previewed', '-')} | {_stretches(preview)} | {_stretches(update)} |"
        )
    return lines


def timed_run(env: dict[str, str], stack: str, *extra: str) -> tuple[float, MemorySampler]:
    began = time.perf_counter()
    proc = subprocess.Popen(
        [KUBESHIFT, "--stack", stack, "run", "--yes", *extra],
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
    parser.add_argument(
        "--ceiling-share",
        type=float,
        default=1 / 3,
        help="share of the old workers whose pods measure the ceiling (0: skip it)",
    )
    parser.add_argument(
        "--max-nodes-in-flight", type=int, help="the drain's window (default: kubeshift's)"
    )
    parser.add_argument(
        "--preview-scope", choices=("judged", "verify", "full"), default="judged",
        help="kubeshift:runtime.preview_scope of the run (the sandbox alone maps verify)",
    )  # fmt: skip
    parser.add_argument(
        "--built-by", choices=("kops", "terraform-modules"), default="kops",
        help="the world: kops's (etcd-manager members) or seed 001's Terraform modules' "
        "(static members; released by `terraform state rm` of what adopt names)",
    )  # fmt: skip
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    if not 0 <= args.ceiling_share < 1:
        sys.exit("--ceiling-share is a share of the old workers: from 0 up to (not) 1")
    stack = args.stack

    state = Path(tempfile.mkdtemp(prefix="kubeshift-scale-"))
    env = user_environment(state)
    stages: dict[str, float] = {}
    ceiling: Ceiling | None = None
    drain_replaced_at: float | None = None
    compared = True
    print(f"stack {stack}, load avg {os.getloadavg()[0]:.1f}, {os.cpu_count()} cpus", flush=True)
    try:
        stages["sandbox up"], _ = kubeshift(
            env, "--stack", stack, "sandbox", "up", "--built-by", args.built_by
        )
        env = aimed_at_sandbox(env, kubeshift(env, "sandbox", "env")[1])
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
        if args.max_nodes_in_flight:
            with_drain_limits(proposal, args.max_nodes_in_flight)
        preview_scope(proposal, args.preview_scope)
        take_proposal(
            proposal, state / "sandbox" / "workspace" / "stacks" / f"Pulumi.{stack}.yaml", stack
        )
        stages["adopt --yes --keep-live"], adopted = kubeshift(
            env, "--stack", stack, "--json", "adopt", "--yes", "--keep-live"
        )
        if args.built_by == "terraform-modules":  # the user's `terraform state rm`
            began = time.perf_counter()
            released = run_state_rm_commands(
                state / "sandbox" / "terraform.tfstate", json.loads(adopted)["terraform_release"]
            )
            stages["terraform state rm"] = time.perf_counter() - began
            log(f"terraform state rm of {released} addresses adopt named")
        else:
            stages["release --yes"], _ = kubeshift(env, "--stack", stack, "release", "--yes")
        log(f"adopted in {stages['adopt --yes --keep-live']:.0f}s; running")
        if args.ceiling_share:
            stages["run --yes --to ingress-move"], memory = timed_run(
                env, stack, "--to", "ingress-move"
            )
            log("before the drain; measuring the ceiling")
            pooled = k8s.Configuration()
            pooled.connection_pool_maxsize = DELETERS  # a connection per delete in flight
            with k8s_config.new_client_from_config(
                config_file=primary["kubeconfig"],
                context=primary["context"],
                client_configuration=pooled,
            ) as fresh:
                ceiling = measure_ceiling(fresh, args)
                log(f"{ceiling.describe()}; resuming")
                # kubeshift's drain, timed to the same end point as the ceiling; on the
                # wall clock, as the journal records the drain step's start
                with EndPoint(
                    k8s.CoreV1Api(fresh),
                    ceiling.old_nodes,
                    args.deployments * args.replicas,
                    clock=time.time,
                    field_selector=f"metadata.namespace={NAMESPACE}",
                ) as drain_end:
                    stages["run --yes (the rest)"], rest = timed_run(env, stack)
                drain_replaced_at = drain_end.replaced_at
            memory.own_peak_kib = max(memory.own_peak_kib, rest.own_peak_kib)
            memory.tree_peak_kib = max(memory.tree_peak_kib, rest.tree_peak_kib)
        else:
            stages["run --yes"], memory = timed_run(env, stack)
        _, text = kubeshift(env, "--stack", stack, "status", "--json")
        scenario = build_scenario(load_config(load_stack_file(proposal)))
    finally:
        subprocess.run([KUBESHIFT, "sandbox", "down"], env=env, capture_output=True)
        shutil.rmtree(state, ignore_errors=True)

    records = json.loads(text)
    gates = {g.name for phase in scenario.phases for g in phase.gates}
    figures = phase_figures(records, gates)
    drains = [  # journalled as before:drain-old-nodes
        r for r in records if r["step"].split(":", 1)[-1] == "drain-old-nodes" and r["finished"]
    ]
    drained = [DRAINED.search(r["message"]) for r in drains]
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
    print("\n".join(engine_breakdown(records)))
    if drained and drained[0]:
        evicted, requests = int(drained[0][1]), int(drained[0][2])
        print(f"drain: {evicted} evicted, {requests} API requests, {requests / evicted:.2f}/pod")
        took = drains[0]["finished"] - drains[0]["started"]
        print(f"drain: {evicted} pods in {took:.0f}s, {evicted / took:.1f} pods/s")
        if ceiling is not None:
            lines, compared = drain_against_ceiling(ceiling, drains[0], drain_replaced_at)
            print("\n".join(lines))
    print(
        f"peak RSS: kubeshift {memory.own_peak_kib / 1024:.0f} MiB, "
        f"its tree (engine, program, plugins) {memory.tree_peak_kib / 1024:.0f} MiB"
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "stages": stages,
                    "phases": {k: v.__dict__ for k, v in figures.items()},
                    "ceiling": None if ceiling is None else asdict(ceiling),
                    "drain_replaced_at": drain_replaced_at,
                    "journal": records,
                },
                indent=2,
            )
        )
    if not compared:
        sys.exit("the drain could not be set against the ceiling (see above)")


if __name__ == "__main__":
    main()
