"""Fault trials over the whole vpc-move rehearsal: 20+ kills, every one survived.

Usage: .venv/bin/python -m benchmarks.faults [--trials 22] [--seed N] [--stack local]
[--to PHASE] [--smoke]

Two rehearsals on fresh sandboxes, in the same run, each on the cluster ``sandbox up``
builds as kops would have (no Pulumi state) and then adopted as the shared rehearsal and
the demo adopt it (``adopt --write-config``, the proposal taken as the stack file,
``adopt --yes --keep-live``):

1. the reference: ``kubeshift run --yes`` undisturbed;
2. the trials: the same migration, hurt at ``--trials`` points drawn with the printed
   seed over every kind of step (config, before-hooks and gates, preview, the update
   with its engine mid-operation, after-hooks and gates), each fault one of: the
   whole process group killed (a closed terminal), kubeshift killed alone (its engine
   orphaned), the ``pulumi`` engine killed mid-update, Ctrl-C. After each fault the
   same ``kubeshift run`` is started again; when it asks for ``kubeshift recover``
   that is run, as an operator would.

Printed: the trials table (where each struck, exit code, resumes, recoveries), the
checks — the trials ran as specified (``tests.support.faults`` stops at a fault that
cannot strike as specified, or a ``recover`` no fault demanded), the migration finished,
every step succeeded, none finished twice, every trial struck (a fault that never hurt a
run proves nothing), the availability probe's reports show every configured Service kept
a ready endpoint, and the final world (moto's inventory down to security-group rules,
templates, IAM, interfaces, volumes, addresses, NAT gateways, routes and peerings; the
cluster's nodes and workloads; the stack's outputs; ids masked, duplicates counted)
equals the reference's — and both wall times. Replay a trial set with its seed.
``--smoke`` is the smallest run that makes every check: one trial, both rehearsals
stopped after ingress-move (the first probed phase); its times are no claim.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from components.contract.kept_file import kept_file_name  # noqa: E402
from components.contract.loading import load_stack_file  # noqa: E402
from tests.support.faults import (  # noqa: E402
    HOWS,
    Fault,
    FaultyRun,
    Trial,
    TrialFailed,
    repeated_successes,
    sandbox_journal,
    table,
)
from tests.support.user_env import aimed_at_sandbox, user_environment  # noqa: E402

KUBESHIFT = str(Path(sys.executable).with_name("kubeshift"))
SMOKE_TO = "ingress-move"  # the first phase whose step runs under the availability probe
_ID = re.compile(
    r"\b(eni-attach|eipassoc|eipalloc|rtbassoc|vpc|subnet|i|sg|sgr|rtb|igw|nat|eni|vol|lt|"
    r"pcx|acl|aclassoc|dopt|pl|r)-[0-9a-f]{6,}\b|"
    r"\b(Z[0-9A-Z]{8,})\b|\b\d{12}\b|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|"
    r"(?<=/)[0-9a-f]{16}\b"  # the random tail of a load balancer's or target group's ARN
)
Client = Callable[[str], Any]  # a boto3 client of the named service


class WorldUnreadable(RuntimeError):
    """A part of the world could not be read: the comparison would be of nothing."""


def main() -> int:
    args = _parse()
    trials, to = (1, SMOKE_TO) if args.smoke else (args.trials, args.to)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
    print(f"seed {seed} (replay: python -m benchmarks.faults --seed {seed})", flush=True)
    until = ("--to", to) if to else ()
    with _sandbox(args.stack) as env:
        began = time.monotonic()
        reference = _run(env, args.stack, *until)
        reference_seconds = time.monotonic() - began
        if reference.returncode != 0:
            print(reference.stdout[-3000:], reference.stderr[-3000:])
            return 1
        expected = _world(env, args.stack)
    with _sandbox(args.stack) as env:
        faults = choose_faults(env, args.stack, trials, seed, to)
        journal = sandbox_journal(KUBESHIFT, args.stack, env, REPO)
        driver = FaultyRun(
            KUBESHIFT, args.stack, env, REPO, journal, journal.parent / "runs", until
        )
        began = time.monotonic()
        try:
            session = driver.rehearse(faults)
        except TrialFailed as exc:  # a recovery no fault demanded, a fault unable to strike…
            print(f"FAIL the trials ran as specified\n{exc}")
            return 1
        trial_seconds = time.monotonic() - began
        records = list(driver.records().values())
        services = probe_services(env, args.stack)
        actual = _world(env, args.stack) if session.final_code == 0 else {}
    print(table(session.trials))
    checks = {
        "finished": session.final_code == 0,
        "every step succeeded": bool(records) and all(r["status"] == "succeeded" for r in records),
        "no step finished twice": repeated_successes(driver.records()) == [],
        "every trial struck": len(session.trials) == len(faults) and not unstruck(session.trials),
        "no zero-endpoint interval": not availability_problems(records, services),
        "world equals the reference": actual == expected,
    }
    _print_checks(checks)
    for trial in unstruck(session.trials):
        print(f"  not struck: {trial.fault.how} at {trial.fault.at}: {trial.outcome}")
    for problem in availability_problems(records, services):
        print(f"  availability: {problem}")
    for line in world_differences(expected, actual):
        print(f"  differs: {line}")
    struck = len(session.trials) - len(unstruck(session.trials))
    if not args.smoke:
        print(
            f"trials {len(session.trials)} (struck {struck}), runs {session.runs}, "
            f"recoveries {sum(t.recoveries for t in session.trials)}; "
            f"wall {trial_seconds:.0f}s interrupted vs {reference_seconds:.0f}s undisturbed "
            f"({trial_seconds / reference_seconds:.2f}x)"
        )
    return 0 if all(checks.values()) else 1


def _print_checks(checks: Mapping[str, bool]) -> None:
    for name, ok in checks.items():
        print(f"{'ok ' if ok else 'FAIL'} {name}")


def choose_faults(
    env: dict[str, str], stack: str, count: int, seed: int, to: str | None = None
) -> list[Fault]:
    """``count`` faults over the plan's steps up to phase ``to``, in run order, drawn
    with ``seed``. The first phase is left out: the stack is adopted (journalled as
    ``baseline/adopt``), so ``run`` never runs its steps and a fault aimed there could
    not strike."""
    plan = json.loads(_must("kubeshift plan", _kubeshift(env, "--stack", stack, "plan", "--json")))
    points: list[str] = []
    for phase in plan["phases"][1:]:
        name = phase["id"]
        points.append(f"{name}/config")
        # only the sides that have a step: a fault aimed at an empty side cannot strike
        if phase["gates_before"] or phase["hooks_before"]:
            points.append(f"{name}/before:*")
        points += [f"{name}/preview", f"{name}/update"]
        if phase["gates_after"] or phase["hooks_after"]:
            points.append(f"{name}/after:*")
        if name == to:
            break
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


def unstruck(trials: Sequence[Trial]) -> list[Trial]:
    """The trials whose fault never hurt a run: no step was running when it was due (the
    run ended or failed first), or the run it was aimed at finished anyway (exit 0).
    Counting them as survived faults would claim resilience nothing tested."""
    return [t for t in trials if not t.where or t.code in (0, None)]


def availability_problems(
    records: Iterable[Mapping[str, Any]], services: Sequence[str]
) -> list[str]:
    """Why the journal does not show every configured Service keeping a ready endpoint
    (empty when it does). Read from each probed step's structured report (``details
    ["availability"]``), not its message: the message's words are for people, and a step
    that lost availability fails with another text."""
    reports = {
        f"{r['phase']}/{r['step']}": (r.get("details") or {})["availability"]
        for r in records
        if "availability" in (r.get("details") or {})
    }
    if not reports:
        return ["no step carries an availability report: nothing was probed"]
    problems = []
    for key, report in sorted(reports.items()):
        seen: dict[str, Any] = report["services"]
        if sorted(seen) != sorted(services):
            problems.append(f"{key} probed {sorted(seen)}, configured {sorted(services)}")
        for name, service in sorted(seen.items()):
            if service["zero_intervals"]:
                problems.append(f"{key}: {name} had no ready endpoint {service['zero_intervals']}")
            if (service["min_ready"] or 0) < 1:
                problems.append(f"{key}: {name} minimum ready {service['min_ready']}")
    return problems


def probe_services(env: dict[str, str], stack: str) -> list[str]:
    """The Services the stack file has the probe watch (``kubeshift:runtime.probe_services``)."""
    runtime = load_stack_file(stack_file(env, stack)).get("kubeshift:runtime") or {}
    return [str(s) for s in runtime.get("probe_services") or []]


def take_proposal(proposal: Path, target: Path, stack: str) -> None:
    """The proposal taken as the stack file ``target``, with the kept file a large
    cluster's proposal names (``kubeshift:kept``) beside it."""
    shutil.copy(proposal, target)
    kept = proposal.with_name(kept_file_name(stack))
    if kept.exists():
        shutil.copy(kept, target.with_name(kept.name))


def stack_file(env: dict[str, str], stack: str) -> Path:
    """The stack file of the project ``env`` is aimed at (the sandbox's workspace after
    ``sandbox env``), which adoption reads and writes."""
    return Path(env["KUBESHIFT_PROJECT_DIR"]) / "stacks" / f"Pulumi.{stack}.yaml"


def preview_scope(path: Path, scope: str) -> None:
    """Set ``kubeshift:runtime.preview_scope`` in the stack file at ``path`` (the sandbox
    maps ``verify`` while it is unset; a benchmark measures the scope a user runs)."""
    document = yaml.safe_load(path.read_text())
    document["config"].setdefault("kubeshift:runtime", {})["preview_scope"] = scope
    path.write_text(yaml.safe_dump(document, sort_keys=False))


def world_differences(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> list[str]:
    """One line per part of the world that differs."""
    return [
        f"{key}: {expected.get(key)!r} != {actual.get(key)!r}"
        for key in sorted(set(expected) | set(actual))
        if expected.get(key) != actual.get(key)
    ]


def _world(env: dict[str, str], stack: str) -> dict[str, Any]:
    """What a migration leaves, with provider ids masked so two sandboxes compare."""
    import boto3

    status = json.loads(
        _must("kubeshift sandbox status", _kubeshift(env, "sandbox", "status", "--json"))
    )
    aws = {
        "region_name": status["region"],
        "endpoint_url": status["moto_endpoint"],
        "aws_access_key_id": "sandbox",
        "aws_secret_access_key": "sandbox",
    }
    primary = next(c for c in status["clusters"] if c["role"] == "primary")
    outputs = _pulumi_outputs(env, stack)
    return {
        **aws_world(lambda service: boto3.client(service, **aws)),  # type: ignore[call-overload]
        **kube_world(primary["kubeconfig"], primary["context"]),
        # The progress record says who did what when (run ids, times): not the world.
        "outputs": {
            k: _mask(json.dumps(v, sort_keys=True)) for k, v in outputs.items() if k != "progress"
        },
    }


def aws_world(client: Client) -> dict[str, Any]:
    """moto's inventory, each kind as a sorted list with ids masked or named: a leftover
    (a second group, rule, interface, volume… a killed engine made and lost track of)
    lengthens its list, while the ids two sandboxes give alike things do not count."""
    ec2 = client("ec2")
    vpcs = {v["VpcId"]: v["CidrBlock"] for v in ec2.describe_vpcs()["Vpcs"]}
    subnets = {s["SubnetId"]: s["CidrBlock"] for s in ec2.describe_subnets()["Subnets"]}
    groups = ec2.describe_security_groups()["SecurityGroups"]
    names = {g["GroupId"]: g["GroupName"] for g in groups}
    return {
        "vpcs": sorted(vpcs.values()),
        "subnets": sorted(subnets.values()),
        **_scaling_and_balancing(client),
        "records": _records(client("route53")),
        "running instances": len(_instances(ec2, "running")),
        "security groups": sorted(
            (vpcs.get(g.get("VpcId", ""), ""), g["GroupName"], g["Description"], _tags(g))
            for g in groups
        ),
        "security group rules": _rules(ec2, names),
        "launch templates": sorted(
            (t["LaunchTemplateName"], t["DefaultVersionNumber"], t["LatestVersionNumber"], _tags(t))
            for t in ec2.describe_launch_templates()["LaunchTemplates"]
        ),
        **_iam(client("iam")),
        "network interfaces": _interfaces(ec2, subnets, names),
        "volumes": _volumes(ec2),
        "elastic addresses": sorted(
            (a.get("Domain", ""), "AssociationId" in a, _tags(a))
            for a in ec2.describe_addresses()["Addresses"]
        ),
        "nat gateways": sorted(
            (subnets.get(n.get("SubnetId", ""), ""), n["State"], _tags(n))
            for n in ec2.describe_nat_gateways()["NatGateways"]
            if n["State"] not in ("deleted", "deleting")
        ),
        "route tables": _route_tables(ec2, vpcs, subnets),
        "vpc peerings": _peerings(ec2),
    }


def _scaling_and_balancing(client: Client) -> dict[str, Any]:
    asg, elb = client("autoscaling"), client("elbv2")
    return {
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
    }


def _records(r53: Any) -> list[tuple[str, str, str]]:
    return sorted(
        (r["Name"], r["Type"], _mask(json.dumps(r.get("ResourceRecords") or r.get("AliasTarget"))))
        for z in r53.list_hosted_zones()["HostedZones"]
        for r in r53.list_resource_record_sets(HostedZoneId=z["Id"])["ResourceRecordSets"]
    )


def _instances(ec2: Any, state: str) -> list[dict[str, Any]]:
    return [
        i
        for page in ec2.get_paginator("describe_instances").paginate()
        for r in page["Reservations"]
        for i in r["Instances"]
        if i["State"]["Name"] == state
    ]


def _rules(ec2: Any, names: Mapping[str, str]) -> list[tuple[Any, ...]]:
    """Each rule by its group's name, direction, ports and what it admits (a CIDR, or
    the referenced group's name)."""
    rules = ec2.describe_security_group_rules()["SecurityGroupRules"]
    return sorted(
        (
            names.get(r["GroupId"], "?"),
            "egress" if r["IsEgress"] else "ingress",
            r["IpProtocol"],
            r.get("FromPort", -1),
            r.get("ToPort", -1),
            r.get("CidrIpv4")
            or r.get("CidrIpv6")
            or _mask(r.get("PrefixListId", ""))
            or names.get((r.get("ReferencedGroupInfo") or {}).get("GroupId", ""), "?"),
            _mask(r.get("Description", "")),
            _tags(r),
        )
        for r in rules
    )


def _iam(iam: Any) -> dict[str, Any]:
    roles = [r for page in iam.get_paginator("list_roles").paginate() for r in page["Roles"]]
    profiles = [
        p
        for page in iam.get_paginator("list_instance_profiles").paginate()
        for p in page["InstanceProfiles"]
    ]
    policies = iam.get_paginator("list_policies").paginate(Scope="Local")
    return {
        "iam roles": sorted((r["Path"], r["RoleName"]) for r in roles),
        "iam instance profiles": sorted(
            (p["InstanceProfileName"], tuple(sorted(r["RoleName"] for r in p["Roles"])))
            for p in profiles
        ),
        "iam policies": sorted(p["PolicyName"] for page in policies for p in page["Policies"]),
        "iam role policies": sorted(
            (r["RoleName"], "inline", name)
            for r in roles
            for name in iam.list_role_policies(RoleName=r["RoleName"])["PolicyNames"]
        )
        + sorted(
            (r["RoleName"], "attached", _mask(a["PolicyArn"]))
            for r in roles
            for a in iam.list_attached_role_policies(RoleName=r["RoleName"])["AttachedPolicies"]
        ),
    }


def _interfaces(
    ec2: Any, subnets: Mapping[str, str], names: Mapping[str, str]
) -> list[tuple[Any, ...]]:
    """Each interface by its subnet, kind, description, groups and whether it is in use
    (its addresses are left out: the instances' come from moto's own choosing)."""
    found = ec2.describe_network_interfaces()["NetworkInterfaces"]
    return sorted(
        (
            subnets.get(n.get("SubnetId", ""), ""),
            n.get("InterfaceType", ""),
            _mask(n.get("Description", "")),
            tuple(sorted(names.get(g["GroupId"], "?") for g in n.get("Groups", []))),
            n["Status"],
            _tags(n, "TagSet"),
        )
        for n in found
    )


def _route_tables(
    ec2: Any, vpcs: Mapping[str, str], subnets: Mapping[str, str]
) -> list[tuple[Any, ...]]:
    """Each table by its VPC, its subnets' CIDRs and its routes (their targets' ids
    masked: a route to a second NAT gateway or peering still reads as one more route)."""
    tables = ec2.describe_route_tables()["RouteTables"]
    return sorted(
        (
            vpcs.get(t["VpcId"], ""),
            any(a.get("Main") for a in t.get("Associations", [])),
            tuple(
                sorted(subnets.get(a.get("SubnetId", ""), "") for a in t.get("Associations", []))
            ),
            tuple(sorted(_mask(json.dumps(r, sort_keys=True)) for r in t.get("Routes", []))),
            _tags(t),
        )
        for t in tables
    )


def _volumes(ec2: Any) -> list[tuple[Any, ...]]:
    return sorted(
        (
            v["AvailabilityZone"],
            v["Size"],
            v["VolumeType"],
            v["State"],
            bool(v.get("Attachments")),
            _tags(v),
        )
        for v in ec2.describe_volumes()["Volumes"]
    )


def _peerings(ec2: Any) -> list[tuple[Any, ...]]:
    """The peerings that stand (AWS lists deleted and refused ones for a while)."""
    found = ec2.describe_vpc_peering_connections()["VpcPeeringConnections"]
    return sorted(
        (
            p["RequesterVpcInfo"].get("CidrBlock", ""),
            p["AccepterVpcInfo"].get("CidrBlock", ""),
            p["Status"]["Code"],
            _tags(p),
        )
        for p in found
        if p["Status"]["Code"] not in ("deleted", "rejected", "failed", "expired")
    )


def _tags(item: Mapping[str, Any], key: str = "Tags") -> tuple[tuple[str, str], ...]:
    return tuple(sorted((t["Key"], _mask(t["Value"])) for t in item.get(key) or []))


def kube_world(kubeconfig: str, context: str) -> dict[str, Any]:
    """The primary cluster's nodes and workloads."""
    import kubernetes

    client = kubernetes.config.new_client_from_config(config_file=kubeconfig, context=context)
    with client:
        core, apps = kubernetes.client.CoreV1Api(client), kubernetes.client.AppsV1Api(client)
        nodes: list[Any] = core.list_node().items
        deployments: list[Any] = apps.list_deployment_for_all_namespaces().items
    return {
        "nodes ready": sum(
            any(c.type == "Ready" and c.status == "True" for c in n.status.conditions or [])
            for n in nodes
        ),
        "nodes": len(nodes),
        "deployments ready": sorted(
            (d.metadata.namespace, d.metadata.name, d.status.ready_replicas or 0)
            for d in deployments
        ),
    }


def _pulumi_outputs(env: dict[str, str], stack: str) -> dict[str, Any]:
    return stack_outputs(pulumi(env, stack, f"stack output --stack {stack} --json --show-secrets"))


def pulumi(env: dict[str, str], stack: str, command: str) -> subprocess.CompletedProcess[str]:
    """``pulumi <command>`` in the shell ``kubeshift sandbox env`` prepares for ``stack``."""
    exports = _must("kubeshift sandbox env", _kubeshift(env, "--stack", stack, "sandbox", "env"))
    return subprocess.run(
        ["bash", "-euc", f"{exports}\npulumi {command}"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def stack_outputs(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """``pulumi stack output --json``'s outputs, or :class:`WorldUnreadable`: read as
    ``{}``, a failure on both sides would compare as two equal worlds, and an adopted
    stack always has outputs."""
    if done.returncode != 0:
        raise WorldUnreadable(
            f"pulumi stack output exited {done.returncode}: {done.stderr.strip()[-2000:]}"
        )
    parsed = json.loads(done.stdout)
    if not isinstance(parsed, dict) or not parsed:
        raise WorldUnreadable(f"pulumi stack output printed no outputs: {done.stdout[:500]!r}")
    return parsed


def _mask(text: str) -> str:
    return _ID.sub("<id>", text)


def _run(env: dict[str, str], stack: str, *args: str) -> subprocess.CompletedProcess[str]:
    return _kubeshift(env, "--stack", stack, "run", "--yes", *args, timeout=3600)


def _kubeshift(
    env: dict[str, str], *args: str, timeout: float = 900
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KUBESHIFT, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
    )


def _must(what: str, done: subprocess.CompletedProcess[str]) -> str:
    """The command's output; a failed command stops the benchmark with its stderr."""
    if done.returncode != 0:
        raise SystemExit(f"{what} exited {done.returncode}: {done.stderr[-2000:]}")
    return done.stdout


def adopt(env: dict[str, str], stack: str) -> float:
    """``adopt --write-config``, the proposal taken as the stack file, ``adopt --yes
    --keep-live`` and ``release --yes``, as the shared rehearsal and the demo adopt;
    returns the seconds.
    ``sandbox up`` builds the cluster as kops would have, with no Pulumi state: a run
    straight after it would collide with the live records or build a second cluster."""
    began = time.monotonic()
    proposal = Path(env["KUBESHIFT_SANDBOX"]) / "proposed.yaml"  # beside the sandbox, as aimed
    wrote = _kubeshift(env, "--stack", stack, "adopt", "--write-config", str(proposal))
    _must("kubeshift adopt --write-config", wrote)
    take_proposal(proposal, stack_file(env, stack), stack)
    _must("kubeshift adopt", _kubeshift(env, "--stack", stack, "adopt", "--yes", "--keep-live"))
    _must("kubeshift release", _kubeshift(env, "--stack", stack, "release", "--yes"))
    return time.monotonic() - began


@contextmanager
def _sandbox(stack: str) -> Iterator[dict[str, str]]:
    """A fresh sandbox of ``stack``, adopted; down again afterwards."""
    with tempfile.TemporaryDirectory(prefix="kubeshift-faults-") as tmp:
        env = sandbox_env(Path(tmp))
        try:
            _must("kubeshift sandbox up", _kubeshift(env, "--stack", stack, "sandbox", "up"))
            exports = _must("kubeshift sandbox env", _kubeshift(env, "sandbox", "env"))
            env = aimed_at_sandbox(env, exports)
            adopt(env, stack)
            yield env
        finally:
            _kubeshift(env, "sandbox", "down", timeout=120)


def sandbox_env(state: Path) -> dict[str, str]:
    """This environment without AWS, Pulumi or kubeshift settings, the state in ``state``."""
    return user_environment(state)


def _parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=22)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--stack", default="local")
    parser.add_argument("--to", default=None, help="the last phase of both rehearsals")
    parser.add_argument(
        "--smoke", action="store_true", help=f"one trial, to {SMOKE_TO}: the checks, no timing"
    )
    return parser.parse_args()


if __name__ == "__main__":
    raise SystemExit(main())
