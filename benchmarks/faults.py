"""Fault trials over the whole vpc-move rehearsal: 20+ kills, every one survived.

Usage: .venv/bin/python -m benchmarks.faults [--trials 22] [--seed N] [--stack local]

Two rehearsals on fresh sandboxes, in the same run:

1. the reference: ``kubeshift run --yes`` undisturbed;
2. the trials: the same migration, hurt at ``--trials`` points drawn with the printed
   seed over every kind of step (config, before-hooks and gates, preview, the update
   with its engine mid-operation, after-hooks and gates), each fault one of: the
   whole process group killed (a closed terminal), kubeshift killed alone (its engine
   orphaned), the ``pulumi`` engine killed mid-update, Ctrl-C. After each fault the
   same ``kubeshift run`` is started again; when it asks for ``kubeshift recover``
   that is run, as an operator would.

Printed: the trials table (where each struck, exit code, resumes, recoveries), the
checks — every step succeeded, none finished twice, the availability probe saw no
zero-endpoint interval, and the final world (moto's inventory, the cluster's nodes and
workloads, the stack's outputs, ids masked) equals the reference's — and both wall
times. Replay a trial set with its seed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.faults import (
    HOWS,
    Fault,
    FaultyRun,
    repeated_successes,
    sandbox_journal,
    table,
)

REPO = Path(__file__).resolve().parents[1]
KUBESHIFT = str(Path(sys.executable).with_name("kubeshift"))
_ID = re.compile(
    r"\b(vpc|subnet|i|sg|sgr|rtb|igw|nat|eni|vol|lt|pcx|eipalloc|r)-[0-9a-f]{6,}\b|"
    r"\b(Z[0-9A-Z]{8,})\b|\b\d{12}\b|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|"
    r"(?<=/)[0-9a-f]{16}\b"  # the random tail of a load balancer's or target group's ARN
)


def main() -> int:
    args = _parse()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
    print(f"seed {seed} (replay: python -m benchmarks.faults --seed {seed})", flush=True)
    with _sandbox(args.stack) as env:
        began = time.monotonic()
        reference = _run(env, args.stack)
        reference_seconds = time.monotonic() - began
        if reference.returncode != 0:
            print(reference.stdout[-3000:], reference.stderr[-3000:])
            return 1
        expected = _world(env, args.stack)
    with _sandbox(args.stack) as env:
        faults = choose_faults(env, args.stack, args.trials, seed)
        journal = sandbox_journal(KUBESHIFT, args.stack, env, REPO)
        driver = FaultyRun(KUBESHIFT, args.stack, env, REPO, journal, journal.parent / "runs")
        began = time.monotonic()
        session = driver.rehearse(faults)
        trial_seconds = time.monotonic() - began
        records = driver.records()
        actual = _world(env, args.stack) if session.final_code == 0 else {}
    print(table(session.trials))
    checks = {
        "finished": session.final_code == 0,
        "every step succeeded": all(r["status"] == "succeeded" for r in records.values()),
        "no step finished twice": repeated_successes(records) == [],
        "no zero-endpoint interval": _availability_clean(records),
        "world equals the reference": actual == expected,
    }
    for name, ok in checks.items():
        print(f"{'ok ' if ok else 'FAIL'} {name}")
    if actual != expected:
        for key in sorted(set(expected) | set(actual)):
            if expected.get(key) != actual.get(key):
                print(f"  differs: {key}: {expected.get(key)!r} != {actual.get(key)!r}")
    struck = sum(1 for t in session.trials if t.where)
    print(
        f"trials {len(session.trials)} (struck {struck}), runs {session.runs}, "
        f"recoveries {sum(t.recoveries for t in session.trials)}; "
        f"wall {trial_seconds:.0f}s interrupted vs {reference_seconds:.0f}s undisturbed "
        f"({trial_seconds / reference_seconds:.2f}x)"
    )
    return 0 if all(checks.values()) else 1


def choose_faults(env: dict[str, str], stack: str, count: int, seed: int) -> list[Fault]:
    """``count`` faults over the plan's steps, in run order, drawn with ``seed``."""
    plan = json.loads(_kubeshift(env, "--stack", stack, "plan", "--json").stdout)
    points: list[str] = []
    for phase in plan["phases"]:
        name = phase["id"]
        points.append(f"{name}/config")
        if phase["gates_before"] or phase["hooks"]:
            points.append(f"{name}/before:*")
        points += [f"{name}/preview", f"{name}/update"]
        if phase["gates_after"] or phase["hooks"]:
            points.append(f"{name}/after:*")
    rng = random.Random(seed)
    chosen = sorted(rng.sample(range(len(points)), min(count, len(points))))
    faults = []
    for index in chosen:
        at = points[index]
        how = "engine-kill" if at.endswith("/update") and rng.random() < 0.5 else rng.choice(HOWS)
        if how == "engine-kill" and not at.endswith("/update"):
            how = "group-kill"
        faults.append(Fault(at, how, delay=round(rng.uniform(0.0, 2.0), 1)))
    return faults


def _availability_clean(records: dict[str, Any]) -> bool:
    probed = [r for r in records.values() if "endpoint" in r.get("message", "")]
    return bool(probed) and all(
        "zero-endpoint" not in r["message"] or "no zero-endpoint" in r["message"] for r in probed
    )


def _world(env: dict[str, str], stack: str) -> dict[str, Any]:
    """What a migration leaves, with provider ids masked so two sandboxes compare."""
    import boto3
    import kubernetes

    status = json.loads(_kubeshift(env, "sandbox", "status", "--json").stdout)
    aws = {
        "region_name": status["region"],
        "endpoint_url": status["moto_endpoint"],
        "aws_access_key_id": "sandbox",
        "aws_secret_access_key": "sandbox",
    }
    ec2, asg = boto3.client("ec2", **aws), boto3.client("autoscaling", **aws)
    elb, r53 = boto3.client("elbv2", **aws), boto3.client("route53", **aws)
    zones = r53.list_hosted_zones()["HostedZones"]
    records = sorted(
        (r["Name"], r["Type"], _mask(json.dumps(r.get("ResourceRecords") or r.get("AliasTarget"))))
        for z in zones
        for r in r53.list_resource_record_sets(HostedZoneId=z["Id"])["ResourceRecordSets"]
    )
    running = [
        i
        for page in ec2.get_paginator("describe_instances").paginate()
        for r in page["Reservations"]
        for i in r["Instances"]
        if i["State"]["Name"] == "running"
    ]
    primary = next(c for c in status["clusters"] if c["role"] == "primary")
    client = kubernetes.config.new_client_from_config(
        config_file=primary["kubeconfig"], context=primary["context"]
    )
    core, apps = kubernetes.client.CoreV1Api(client), kubernetes.client.AppsV1Api(client)
    outputs = _pulumi_outputs(env, stack)
    nodes = core.list_node().items
    return {
        "vpcs": sorted(v["CidrBlock"] for v in ec2.describe_vpcs()["Vpcs"]),
        "subnets": sorted(s["CidrBlock"] for s in ec2.describe_subnets()["Subnets"]),
        "asgs": sorted(
            (g["AutoScalingGroupName"], g["DesiredCapacity"])
            for g in asg.describe_auto_scaling_groups()["AutoScalingGroups"]
        ),
        "load balancers": sorted(
            lb["LoadBalancerName"] for lb in elb.describe_load_balancers()["LoadBalancers"]
        ),
        "target groups": sorted(
            t["TargetGroupName"] for t in elb.describe_target_groups()["TargetGroups"]
        ),
        "records": records,
        "running instances": len(running),
        "nodes ready": sum(
            any(c.type == "Ready" and c.status == "True" for c in n.status.conditions or [])
            for n in nodes
        ),
        "nodes": len(nodes),
        "deployments ready": sorted(
            (d.metadata.namespace, d.metadata.name, d.status.ready_replicas or 0)
            for d in apps.list_deployment_for_all_namespaces().items
        ),
        # The progress record says who did what when (run ids, times): not the world.
        "outputs": {
            k: _mask(json.dumps(v, sort_keys=True)) for k, v in outputs.items() if k != "progress"
        },
    }


def _pulumi_outputs(env: dict[str, str], stack: str) -> dict[str, Any]:
    exports = _kubeshift(env, "--stack", stack, "sandbox", "env").stdout
    script = f"{exports}\npulumi stack output --stack {stack} --json --show-secrets"
    done = subprocess.run(
        ["bash", "-euc", script], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    parsed: dict[str, Any] = json.loads(done.stdout or "{}")
    return parsed


def _mask(text: str) -> str:
    return _ID.sub("<id>", text)


def _run(env: dict[str, str], stack: str) -> subprocess.CompletedProcess[str]:
    return _kubeshift(env, "--stack", stack, "run", "--yes", timeout=3600)


def _kubeshift(
    env: dict[str, str], *args: str, timeout: float = 900
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KUBESHIFT, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
    )


@contextmanager
def _sandbox(stack: str) -> Iterator[dict[str, str]]:
    with tempfile.TemporaryDirectory(prefix="kubeshift-faults-") as tmp:
        state = Path(tmp)
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("AWS_", "PULUMI_", "KUBESHIFT_")) and k != "KUBECONFIG"
        }
        env["KUBESHIFT_STATE_DIR"] = str(state)
        up = _kubeshift(env, "--stack", stack, "sandbox", "up")
        if up.returncode != 0:
            raise SystemExit(f"sandbox up failed: {up.stderr[-2000:]}")
        try:
            yield env
        finally:
            _kubeshift(env, "sandbox", "down", timeout=120)


def _parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=22)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--stack", default="local")
    return parser.parse_args()


if __name__ == "__main__":
    raise SystemExit(main())
