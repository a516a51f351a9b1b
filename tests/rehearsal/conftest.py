"""One sandbox and one whole vpc-move rehearsal for every end-to-end assertion.

Everything goes through the ``kubeshift`` console script (and ``pulumi``) in
subprocesses, as operators run them: ``sandbox up`` for the ``local`` stack (which
builds its cluster as kops would have: boto3, kops's names, no state), ``adopt``
(refused without the names, ``--write-config``, the proposal taken as the stack file,
refused for kops's settings, then adopted keeping them, ``--keep-live``), ``run --yes``
from baseline to ingress-move (stopping after ingress-nodeport to read the world),
``back --to ingress-nodeport`` (the world must be as it was read) and forward again to
ingress-move, the drain and the old workers' retirement by hand
(``tests.rehearsal.by_hand``: a skip-ahead refused, ``kubeshift hooks`` around a hand-
run ``pulumi up``, an override, a second operator's fresh checkout), ``run --yes`` to
cleanup, then a second ``run``. The runs are not left in peace: the fixed fault trials
below kill, interrupt and resume them on the way — the engine killed mid-update and
recovered, Ctrl-C during a gate, kubeshift killed alone before the DNS cutover and
again while the way back drains the new workers, the whole group killed during a
control-plane gate — and a second operator's ``pulumi up`` is tried while a run goes
on. The tests only read the outcome from the outside: the journal (``status --json``),
the stack's record, moto and the sandbox's cluster, which must be what an
uninterrupted run leaves. Later end-to-end checks of vpc-move should
join this session instead of starting their own sandbox (CI budget).

A sandbox rehearses one stack, so the other scenarios (``test_cni_swap``,
``test_overlay_switch``) bring their own through :func:`rehearse_adopted`, for their
module only. In one pytest process their modules run first, so two sandboxes never run
at once; ``scripts/test`` runs them in a shard of their own after this one's.
"""

from __future__ import annotations

import contextlib
import functools
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from automation.run.going_back import undo_id
from components.contract.loading import load_stack_file
from components.contract.scenarios.vpc_move import (
    INGRESS_MOVE,
    INGRESS_NODEPORT,
    control_plane_phase,
)
from tests.rehearsal.by_hand import ByHand, drain_by_hand
from tests.rehearsal.team import Handover, hand_over, second_operators_env
from tests.rehearsal.world import read_world, workload_nodes
from tests.support.faults import (
    Fault,
    FaultyRun,
    JournalSource,
    Session,
    sandbox_journal,
    sandbox_store,
    table,
)
from tests.support.terraform_cli import run_state_rm_commands
from tests.support.user_env import aimed_at_sandbox, user_environment

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
STACK = "local"
KUBESHIFT = str(Path(sys.executable).with_name("kubeshift"))


@dataclass(frozen=True)
class Ran:
    argv: list[str]
    code: int
    stdout: str
    stderr: str
    seconds: float

    def json(self) -> Any:
        return json.loads(self.stdout)


@dataclass(frozen=True)
class Adoption:
    """``kubeshift adopt`` of the cluster ``sandbox up`` built as kops would have."""

    unnamed: Ran
    """``--dry-run --json`` with the stack file the world was built from, which gives
    none of kops's names: refused."""
    built_from: Path
    """A copy of that stack file."""
    proposed: Ran
    """``--write-config FILE`` then: a stack file proposed from what runs, which the
    rehearsal takes as the stack file, as a user does after reviewing it."""
    proposed_file: Path
    unkept: Ran
    """``--dry-run --json`` with the proposal less its ``descriptions`` and ``user_data``:
    kops's groups would be replaced and its workers' boot scripts updated, so refused."""
    differing: Ran
    """``--dry-run --json`` with the whole proposal: kops's settings that kubeshift
    declares otherwise and AWS changes in place differ, so refused."""
    planned: Ran
    """``--dry-run --keep-live --json`` with the whole proposal."""
    adopted: Ran
    """``--yes --keep-live --json``."""
    again: Ran
    """``--yes --json`` once more: nothing left to import."""
    stray_group: str
    """A security group tagged for the cluster that the program does not model (another
    tool's), made before adoption: listed, and left alone to the end."""
    kops_rules: list[str]
    """Ids of every rule of the cluster's groups before adoption (each tagged, as kops
    tags its rules, ``Name: from-…``)."""
    world_names: frozenset[str]
    """The names the world gave what it built, before adoption: groups, templates,
    security groups, roles, load balancers, target groups and etcd volumes."""
    events_volumes: dict[str, EventsVolume]
    """kops's events etcd volumes by id, before adoption: where each is and what holds it."""
    release_dry_run: Ran
    """``release --dry-run --json`` after adoption: kops's state store still holds every
    instance group."""
    released: Ran
    """``release --yes --json`` then, as a user does before the first run."""

    @property
    def stack_file(self) -> Path:
        """The stack file adoption read, and wrote the kept live values to."""
        return self.proposed_file.parent / "workspace" / "stacks" / f"Pulumi.{STACK}.yaml"


@dataclass(frozen=True)
class EventsVolume:
    """One of kops's events etcd volumes (kubeshift moves the main etcd only), as EC2
    describes it."""

    member: str
    """Its ``k8s.io/etcd/events`` tag: ``<member>/<every member>``."""
    zone: str
    state: str
    """``in-use`` or ``available``."""
    holders: tuple[tuple[str, str], ...]
    """(kops instance group, or else the Name tag, of the instance it is attached to;
    the attachment's state), one per attachment."""


def events_volumes(sandbox: dict[str, Any]) -> dict[str, EventsVolume]:
    """kops's events etcd volumes by id, each with the instances that hold it."""
    ec2 = _ec2(sandbox)
    tagged = [{"Name": "tag-key", "Values": ["k8s.io/etcd/events"]}]
    volumes = ec2.describe_volumes(Filters=tagged)["Volumes"]
    ids = sorted({a["InstanceId"] for v in volumes for a in v.get("Attachments") or []})
    pages = ec2.get_paginator("describe_instances").paginate(InstanceIds=ids) if ids else []
    names = {}
    for page in pages:
        for instance in (i for r in page["Reservations"] for i in r["Instances"]):
            tags = {t["Key"]: t["Value"] for t in instance.get("Tags") or []}
            named = tags.get("kops.k8s.io/instancegroup") or tags.get("Name")
            names[instance["InstanceId"]] = named or instance["InstanceId"]
    return {
        v["VolumeId"]: EventsVolume(
            member={t["Key"]: t["Value"] for t in v["Tags"]}["k8s.io/etcd/events"],
            zone=v["AvailabilityZone"],
            state=v["State"],
            holders=tuple((names[a["InstanceId"]], a["State"]) for a in v.get("Attachments") or []),
        )
        for v in volumes
    }


@dataclass
class Rehearsal:
    """The sandbox's coordinates and what each command of the rehearsal answered."""

    env: dict[str, str]
    """The shell's environment after ``eval "$(kubeshift sandbox env)"``."""
    user_env: dict[str, str]
    """The same shell before it: kubeshift aimed at the project as configured."""
    up: Ran
    adoption: Adoption
    faults: Session
    rerun: Ran
    sandbox: dict[str, Any]
    journal: Path | JournalSource
    """The journal's bytes, read from the bucket beside the stack's state."""
    by_hand: ByHand
    etcd_before: dict[int, tuple[str, ...]]
    """etcd member ID -> peer URLs, read right after ``sandbox up``."""
    events_before: dict[int, tuple[str, ...]]
    """The same of etcd-manager's events etcd."""
    holders_before: dict[str, str]
    """Each etcd volume's holder's address (:func:`volume_holders`), after ``sandbox up``."""
    admitted_across: frozenset[tuple[str, str]]
    """(group, group it admits) of each rule between the two VPCs' groups, read while
    the run paused after ``ingress-move``, both VPCs running."""
    second_env: dict[str, str]
    """Operator B's: a checkout and state directory of its own, the same S3 backend."""
    second_status: Ran
    """B's ``status --json`` after A's runs and the by-hand phases, before B runs on."""
    bridged: tuple[dict[str, Any], frozenset[str]] | None
    """The world (:mod:`tests.rehearsal.world`) and the nodes running workloads, once
    the run stopped after ingress-nodeport."""
    went_back: tuple[dict[str, Any], frozenset[str]] | None
    """The same after ``back --to ingress-nodeport`` from ingress-move (before the run
    went forward again)."""
    member_went_back: dict[int, tuple[str, ...]] | None = None
    """etcd member ID -> peer URLs after B's ``back --to control-plane-1`` (member 2
    moved back to the source VPC), before B's run went on to the end."""
    events_went_back: dict[int, tuple[str, ...]] | None = None
    holders_went_back: dict[str, str] | None = None
    """The events etcd's members and the volumes' holders at the same moment."""

    def kubeshift(self, *args: str, timeout: float = 900) -> Ran:
        return kubeshift(self.env, *args, timeout=timeout)

    @property
    def moto_endpoint(self) -> str:
        return str(self.sandbox["moto_endpoint"])

    @property
    def region(self) -> str:
        return str(self.sandbox["region"])

    def client(self, service: str) -> Any:
        return sandbox_client(self.sandbox, service)

    def etcd_members(self, *, events: bool = False) -> dict[int, tuple[str, ...]]:
        return etcd_members(self.sandbox, events=events)

    def kube(self) -> Any:
        import kubernetes

        primary = next(c for c in self.sandbox["clusters"] if c["role"] == "primary")
        return kubernetes.config.new_client_from_config(
            config_file=primary["kubeconfig"], context=primary["context"]
        )


def sandbox_client(sandbox: dict[str, Any], service: str) -> Any:
    """A boto3 client of ``service`` on the sandbox's moto."""
    import boto3

    make: Any = boto3.client  # any service a test names, not one of the stubs' literals
    return make(
        service,
        region_name=str(sandbox["region"]),
        endpoint_url=str(sandbox["moto_endpoint"]),
        aws_access_key_id="sandbox",
        aws_secret_access_key="sandbox",
    )


def admitted_across(sandbox: dict[str, Any]) -> frozenset[tuple[str, str]]:
    """(group name, name of the group it admits) for each rule admitting a group of
    another VPC."""
    ec2 = sandbox_client(sandbox, "ec2")
    groups = {g["GroupId"]: g for g in ec2.describe_security_groups()["SecurityGroups"]}
    pairs = set()
    for rule in ec2.describe_security_group_rules()["SecurityGroupRules"]:
        into = groups[rule["GroupId"]]
        admitted = groups.get((rule.get("ReferencedGroupInfo") or {}).get("GroupId", ""))
        if admitted is not None and admitted["VpcId"] != into["VpcId"]:
            pairs.add((into["GroupName"], admitted["GroupName"]))
    return frozenset(pairs)


def etcd_members(sandbox: dict[str, Any], *, events: bool = False) -> dict[int, tuple[str, ...]]:
    """The sandbox's etcd members (ID -> peer URLs), asked at every member address or
    name; ``events``: etcd-manager's events etcd's."""
    from automation.etcd.client import EtcdClient
    from automation.sandbox.member_plan import SandboxEtcd

    plan = SandboxEtcd.model_validate(sandbox["etcd"])
    with EtcdClient(plan.events_client_urls() if events else plan.client_urls()) as client:
        return {m.id: m.peer_urls for m in client.members()}


def volume_holders(sandbox: dict[str, Any]) -> dict[str, str]:
    """kops's etcd volume (``<tag>=<member>``) -> the private address of the running
    instance holding it (``""``: none)."""
    ec2 = _ec2(sandbox)
    held: dict[str, str] = {}
    for tag in ("k8s.io/etcd/main", "k8s.io/etcd/events"):
        volumes = ec2.describe_volumes(Filters=[{"Name": "tag-key", "Values": [tag]}])["Volumes"]
        for volume in volumes:
            member = {t["Key"]: t["Value"] for t in volume["Tags"]}[tag].split("/")[0]
            address = ""
            for attachment in volume.get("Attachments") or []:
                found = ec2.describe_instances(InstanceIds=[attachment["InstanceId"]])
                for instance in (i for r in found["Reservations"] for i in r["Instances"]):
                    if instance["State"]["Name"] == "running":
                        address = instance.get("PrivateIpAddress", "")
            held[f"{tag}={member}"] = address
    return held


def kubeshift(env: dict[str, str], *args: str, timeout: float = 900) -> Ran:
    argv = [KUBESHIFT, *args]
    began = time.monotonic()
    proc = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
    return Ran(argv, proc.returncode, proc.stdout, proc.stderr, time.monotonic() - began)


def by_hand_update(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """A second operator's ``pulumi up`` in the sandbox's environment."""
    exports = kubeshift(env, "--stack", STACK, "sandbox", "env")
    up = f"pulumi up --stack {STACK} --yes --skip-preview --non-interactive"
    return subprocess.run(
        ["bash", "-euc", f"{exports.stdout}\n{up}"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@dataclass(frozen=True)
class SecondOperator:
    """What a second operator got while the run went on."""

    pulumi_up: subprocess.CompletedProcess[str]
    kubeshift_run: Ran


def second_operator(env: dict[str, str], second_env: dict[str, str]) -> SecondOperator:
    """A by-hand ``pulumi up`` in the run's shell, and operator B's ``kubeshift run``
    from B's own checkout, both during the run."""
    return SecondOperator(
        by_hand_update(env),
        kubeshift(second_env, "--stack", STACK, "run", "--yes", timeout=300),
    )


BY_HAND_FROM = "drain-workers"  # drain-workers and retire-old-workers go by hand


def ci_faults_to_the_bridge() -> list[Fault]:
    """The trial of the run up to ingress-nodeport (where the world is read, to compare
    with what going back leaves)."""
    return [Fault("target-network/update", "engine-kill", delay=2.0)]


def ci_faults_on_the_way_back() -> list[Fault]:
    """``back --to ingress-nodeport`` killed while it drains the new workers."""
    return [Fault(f"{undo_id('target-workers')}/before:drain-new-nodes", "kill-alone")]


def ci_faults_before_by_hand(env: dict[str, str], second_env: dict[str, str]) -> list[Fault]:
    """The trials of the run from ingress-nodeport up to the by-hand phases, in the
    order the run meets them."""
    return [
        Fault("target-workers/after:*", "sigint"),
        Fault(
            "dns-cutover/before:*",
            "kill-alone",
            meanwhile=lambda: second_operator(env, second_env),
        ),
    ]


def ci_faults_after_by_hand() -> list[Fault]:
    return [Fault("control-plane-2/after:*", "group-kill")]


def joined(first: Session, second: Session) -> Session:
    """The two runs' trials as one session (the first ended with the by-hand phases)."""
    return Session(
        trials=first.trials + second.trials,
        final_code=second.final_code,
        runs=first.runs + second.runs,
        log=first.log + second.log,
    )


def failure_report(what: str, ran: Ran, logs: Path) -> str:
    tails = []
    for log in sorted(logs.glob("*.log")):
        lines = log.read_text(errors="replace").splitlines()[-15:]
        tails.append(f"--- {log.name}\n" + "\n".join(lines))
    return (
        f"{what} exited {ran.code} after {ran.seconds:.0f}s\nstdout:\n{ran.stdout[-4000:]}\n"
        f"stderr:\n{ran.stderr[-6000:]}\n" + "\n".join(tails)
    )


def _ec2(sandbox: dict[str, Any]) -> Any:
    import boto3

    return boto3.client(
        "ec2", region_name=sandbox["region"], endpoint_url=sandbox["moto_endpoint"],
        aws_access_key_id="sandbox", aws_secret_access_key="sandbox",
    )  # fmt: skip


def kops_rules(sandbox: dict[str, Any]) -> list[str]:
    """Ids of the security-group rules the world made, each named as kops names its
    rules (``from-…``)."""
    rules = _ec2(sandbox).describe_security_group_rules()["SecurityGroupRules"]
    return [
        r["SecurityGroupRuleId"]
        for r in rules
        if any(t["Key"] == "Name" and t["Value"].startswith("from-") for t in r.get("Tags", []))
    ]


def world_names(sandbox: dict[str, Any]) -> frozenset[str]:
    """The names of what the world built that a name identifies, as they run."""
    ec2 = _ec2(sandbox)
    names = {g["GroupName"] for g in ec2.describe_security_groups()["SecurityGroups"]}
    names -= {"default", "bastion"}
    names |= {t["LaunchTemplateName"] for t in ec2.describe_launch_templates()["LaunchTemplates"]}
    names |= {
        t["Value"]
        for v in ec2.describe_volumes()["Volumes"]
        for t in v.get("Tags", [])
        if t["Key"] == "Name" and ".etcd-main." in t["Value"]
    }
    autoscaling, elb, iam = (sandbox_client(sandbox, s) for s in ("autoscaling", "elbv2", "iam"))
    groups = autoscaling.describe_auto_scaling_groups()["AutoScalingGroups"]
    names |= {g["AutoScalingGroupName"] for g in groups}
    names |= {b["LoadBalancerName"] for b in elb.describe_load_balancers()["LoadBalancers"]}
    names |= {t["TargetGroupName"] for t in elb.describe_target_groups()["TargetGroups"]}
    names |= {r["RoleName"] for r in iam.list_roles()["Roles"] if r["Path"] == "/"}
    return frozenset(names)


def stray_group(sandbox: dict[str, Any]) -> str:
    """What another tool left in the cluster's VPC: a group the program does not model."""
    ec2 = _ec2(sandbox)
    vpc = ec2.describe_vpcs(Filters=[{"Name": "cidr", "Values": ["10.0.0.0/16"]}])["Vpcs"][0]
    tags = [{"Key": "kubernetes.io/cluster/local-demo.k8s.local", "Value": "owned"},
            {"Key": "Name", "Value": "bastion"}]  # fmt: skip
    return str(
        ec2.create_security_group(
            GroupName="bastion", Description="another tool's", VpcId=vpc["VpcId"],
            TagSpecifications=[{"ResourceType": "security-group", "Tags": tags}],
        )["GroupId"]
    )  # fmt: skip


def adopt(env: dict[str, str], logs: Path, sandbox: dict[str, Any]) -> Adoption:
    """Where a user starts: a stack file proposed from what runs, the live cluster taken
    into the stack, then a second time."""
    stray = stray_group(sandbox)
    kops = kops_rules(sandbox)
    names = world_names(sandbox)
    events = events_volumes(sandbox)
    unnamed = kubeshift(env, "--stack", STACK, "--json", "adopt", "--dry-run")
    stack_file = logs.parent / "workspace" / "stacks" / f"Pulumi.{STACK}.yaml"  # as above
    built_from = shutil.copy(stack_file, logs.parent / "built-from.yaml")
    proposed_file = logs.parent / "proposed.yaml"
    proposed = kubeshift(env, "--stack", STACK, "adopt", "--write-config", str(proposed_file))
    if proposed.code != 0:
        pytest.fail(failure_report("kubeshift adopt --write-config", proposed, logs), pytrace=False)
    unkept_values = load_stack_file(proposed_file)
    del unkept_values["kubeshift:cluster"]["descriptions"]
    del unkept_values["kubeshift:cluster"]["user_data"]
    stack_file.write_text(yaml.safe_dump({"config": unkept_values}, sort_keys=False))
    unkept = kubeshift(env, "--stack", STACK, "--json", "adopt", "--dry-run")
    shutil.copy(proposed_file, stack_file)
    differing = kubeshift(env, "--stack", STACK, "--json", "adopt", "--dry-run")
    planned = kubeshift(env, "--stack", STACK, "--json", "adopt", "--dry-run", "--keep-live")
    adopted = kubeshift(env, "--stack", STACK, "--json", "adopt", "--yes", "--keep-live")
    if adopted.code != 0:
        pytest.fail(failure_report("kubeshift adopt", adopted, logs), pytrace=False)
    again = kubeshift(env, "--stack", STACK, "--json", "adopt", "--yes")
    release_dry_run = kubeshift(env, "--stack", STACK, "--json", "release", "--dry-run")
    released = kubeshift(env, "--stack", STACK, "--json", "release", "--yes")
    if released.code != 0:
        pytest.fail(failure_report("kubeshift release", released, logs), pytrace=False)
    return Adoption(
        unnamed, Path(built_from), proposed, proposed_file, unkept, differing, planned, adopted,
        again, stray, kops, names, events, release_dry_run, released,
    )  # fmt: skip


OWN_SANDBOX_MODULES = ("test_cni_swap.py", "test_overlay_switch.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The modules with their own sandbox first, before the session's sandbox is up."""
    own = [i for i in items if i.path.name in OWN_SANDBOX_MODULES and i.path.parent == HERE]
    if not own:
        return
    rest = [i for i in items if i not in own]
    first = next((n for n, i in enumerate(rest) if i.path.parent == HERE), len(rest))
    items[:] = rest[:first] + own + rest[first:]


def sandbox_kube(sandbox: dict[str, Any], role: str = "primary") -> Any:
    """An API client of the sandbox's ``role`` cluster (a context manager)."""
    import kubernetes

    cluster = next(c for c in sandbox["clusters"] if c["role"] == role)
    return kubernetes.config.new_client_from_config(
        config_file=cluster["kubeconfig"], context=cluster["context"]
    )


BEFORE_RUN = "adopted"
BACK = "went back"  # the look after ``back --to`` (``rehearse_adopted``'s ``back_to``)
DETOUR = "before the detour"  # the look at the phase ``detour`` goes back to, first
"""The key of a look taken once the cluster is adopted, before ``run``."""

Look = Callable[[dict[str, Any]], object]
"""What a test reads from outside (moto, the clusters) at one point of the migration,
given ``sandbox status --json``."""


@dataclass(frozen=True)
class StackRehearsal:
    """One stack's own sandbox, adopted and run through: what each command answered."""

    env: dict[str, str]
    adopted: Ran
    run: Ran
    """The last ``run --yes``: to the end, after the stops ``looks`` asked for."""
    rerun: Ran
    records: dict[str, dict[str, Any]]
    """The journal after the run, by ``phase/step``."""
    recorded: dict[str, dict[str, Any]]
    """The progress the stack records after the run (``status --recorded``), by phase."""
    sandbox: dict[str, Any]
    seen: dict[str, Any]
    """What each look read, by its key (:data:`BEFORE_RUN` or the phase it followed)."""
    handover: Handover | None = None
    """With ``handover_after``: what the two operators sharing the S3 backend got."""
    went_back: Ran | None = None
    """With ``back_to``: ``back --to`` once the run had reached the end, before the last
    ``run`` went forward again (what the world was then: ``seen[BACK]``)."""
    back_dry_run: Ran | None = None
    """With ``back_to``: ``back --to --dry-run`` right before it."""
    held: Ran | None = None
    """A Terraform-built world's: ``run --yes`` right after adoption, while Terraform's
    state still manages what was adopted (before ``terraform state rm`` let it go)."""

    def client(self, service: str) -> Any:
        return sandbox_client(self.sandbox, service)

    def kube(self, role: str = "primary") -> Any:
        return sandbox_kube(self.sandbox, role)

    def details(self, key: str) -> dict[str, Any]:
        record = self.records[key]
        assert record["status"] == "succeeded", record
        return dict(record["details"])


@contextlib.contextmanager
def rehearse_adopted(
    state: Path,
    stack: str,
    looks: Mapping[str, Look] | None = None,
    *,
    handover_after: str | None = None,
    back_to: str | None = None,
    detour: tuple[str, str] | None = None,
    built_by: str = "kops",
) -> Iterator[StackRehearsal]:
    """``sandbox up`` (kops-built), ``adopt --write-config``, the proposal taken as the
    stack file, ``adopt --yes --keep-live``, ``run --yes``, ``status``, a second ``run``; then
    ``sandbox down``. A failing command fails the tests with its output and the logs.

    ``built_by``: ``terraform-modules`` builds seed 001's world instead, and the previous
    tool is let go as its user would: ``run`` first (refused while Terraform's state
    holds what was adopted: :attr:`StackRehearsal.held`), then the ``terraform state rm``
    commands adopt printed, on the sandbox's state file; kops's is ``kubeshift release``.

    ``looks`` read the world from outside while the migration goes on, so a test need
    not take kubeshift's own account of it: under :data:`BEFORE_RUN` right after
    adoption; under a phase id once ``run --yes --to <phase>`` has stopped after that
    phase (in the plan's order), before the run goes on.

    ``handover_after``: the sandbox keeps the stack's state in its moto's S3
    (``sandbox up --backend s3``), and a second operator takes the migration over after
    that phase (:mod:`tests.rehearsal.team`); the records are then the second's view.

    ``back_to``: once the run reached the end, ``back --to`` that phase (``looks[BACK]``
    reads the world then), and the last ``run`` goes forward again. ``detour``: (X, Y)
    — right after adoption, ``run --to X`` then ``back --to Y`` (``looks[BACK]`` then),
    before the looks and the run go on (with ``looks[DETOUR]``: ``run --to Y`` first, and
    that look then)."""
    env = user_environment(state)
    env["COLUMNS"] = "200"
    logs = state / "sandbox" / "logs"

    took: list[str] = []

    def must(what: str, ran: Ran) -> Ran:
        if ran.code != 0:
            pytest.fail(failure_report(what, ran, logs), pytrace=False)
        took.append(f"{what.removeprefix('kubeshift ')} {ran.seconds:.0f}s")
        return ran

    try:
        backend = ("--backend", "s3") if handover_after else ()
        up = ("--stack", stack, "sandbox", "up", *backend, "--built-by", built_by)
        must("kubeshift sandbox up", kubeshift(env, *up))
        exports = must("kubeshift sandbox env", kubeshift(env, "sandbox", "env")).stdout
        env = aimed_at_sandbox(env, exports)
        sandbox = kubeshift(env, "sandbox", "status", "--json").json()
        proposal = state / "proposed.yaml"
        wrote = kubeshift(env, "--stack", stack, "adopt", "--write-config", str(proposal))
        must("kubeshift adopt --write-config", wrote)
        shutil.copy(proposal, state / "sandbox" / "workspace" / "stacks" / f"Pulumi.{stack}.yaml")
        adopted = must(
            "kubeshift adopt",
            kubeshift(env, "--stack", stack, "--json", "adopt", "--yes", "--keep-live"),
        )
        held = None
        if built_by == "terraform-modules":
            held = kubeshift(env, "--stack", stack, "--json", "run", "--yes")
            terraform = adopted.json()["terraform_release"]
            run_state_rm_commands(state / "sandbox" / "terraform.tfstate", terraform)
        else:
            must("kubeshift release", kubeshift(env, "--stack", stack, "release", "--yes"))
        stops = dict(looks or {})
        before = stops.pop(BEFORE_RUN, None)
        back_look = stops.pop(BACK, None)
        seen = {BEFORE_RUN: before(sandbox)} if before else {}
        went_back = back_dry_run = None
        detour_look = stops.pop(DETOUR, None)
        if detour:
            reach, back_to_early = detour
            if detour_look:
                argv = ("--stack", stack, "--json", "run", "--yes", "--to", back_to_early)
                must(f"kubeshift run --to {back_to_early}", kubeshift(env, *argv))
                seen[DETOUR] = detour_look(sandbox)
            must(
                f"kubeshift run --to {reach}",
                kubeshift(env, "--stack", stack, "--json", "run", "--yes", "--to", reach),
            )
            went_back = must(
                f"kubeshift back --to {back_to_early}",
                kubeshift(env, "--stack", stack, "--json", "back", "--to", back_to_early, "--yes"),
            )
            seen[BACK] = back_look(sandbox) if back_look else None
        seconds = 0.0
        for phase, look in stops.items():
            argv = ("--stack", stack, "--json", "run", "--yes", "--to", phase)
            seconds += must(f"kubeshift run --to {phase}", kubeshift(env, *argv)).seconds
            seen[phase] = look(sandbox)
        handover = None
        if handover_after:
            s3 = sandbox_client(sandbox, "s3")
            handover = hand_over(env, state, stack, handover_after, s3, kubeshift, KUBESHIFT, REPO)
            env = second_operators_env(env, state)
        if back_to:
            must("kubeshift run", kubeshift(env, "--stack", stack, "--json", "run", "--yes"))
            dry = ("--stack", stack, "--json", "back", "--to", back_to, "--dry-run")
            back_dry_run = kubeshift(env, *dry)
            back = ("--stack", stack, "--json", "back", "--to", back_to, "--yes")
            went_back = must(f"kubeshift back --to {back_to}", kubeshift(env, *back))
            seen[BACK] = back_look(sandbox) if back_look else None
        run = must("kubeshift run", kubeshift(env, "--stack", stack, "--json", "run", "--yes"))
        status = kubeshift(env, "--stack", stack, "status", "--json").json()
        records = {f"{r['phase']}/{r['step']}": r for r in status}
        progress = kubeshift(env, "--stack", stack, "status", "--recorded", "--json").json()
        recorded = {r["phase"]: r for r in progress}
        rerun = kubeshift(env, "--stack", stack, "--json", "run", "--yes")
        sys.stderr.write(f"\n{stack} rehearsal: run {seconds + run.seconds:.0f}s\n")
        sys.stderr.write(f"{stack} commands: {'; '.join(took)}\n")
        yield StackRehearsal(
            env, adopted, run, rerun, records, recorded, sandbox, seen, handover, went_back,
            back_dry_run, held,
        )  # fmt: skip
    finally:
        down = kubeshift(env, "sandbox", "down", timeout=120)
        if down.code != 0:
            sys.stderr.write(failure_report("kubeshift sandbox down", down, logs))
        shutil.rmtree(state / "sandbox" / "run", ignore_errors=True)


@pytest.fixture(scope="session")
def rehearsal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rehearsal]:
    state = tmp_path_factory.mktemp("rehearsal-state")
    env = user_environment(state)
    env["COLUMNS"] = "200"
    logs = state / "sandbox" / "logs"
    try:
        up = kubeshift(env, "--stack", STACK, "sandbox", "up", "--backend", "s3")
        if up.code != 0:
            pytest.fail(failure_report("kubeshift sandbox up", up, logs), pytrace=False)
        user_env, env = env, aimed_at_sandbox(env, kubeshift(env, "sandbox", "env").stdout)
        sandbox = kubeshift(env, "sandbox", "status", "--json").json()
        etcd_before = etcd_members(sandbox)
        events_before = etcd_members(sandbox, events=True)
        holders_before = volume_holders(sandbox)
        adoption = adopt(env, logs, sandbox)
        journal = sandbox_journal(KUBESHIFT, STACK, env, REPO)
        backend = sandbox_store(KUBESHIFT, STACK, env, REPO)
        second_env = second_operators_env(env, state)  # B's checkout, after adoption

        def faulty(runs: str, *argv: str, command: str = "run") -> FaultyRun:
            return FaultyRun(
                KUBESHIFT, STACK, env, REPO, journal, state / runs, argv, backend=backend,
                command=command,
            )  # fmt: skip

        def seconds(runs: str, *argv: str, command: str = "run") -> FaultyRun:
            """Operator B's runs (its checkout as brought up to date when it took over)."""
            return FaultyRun(
                KUBESHIFT, STACK, second_env, REPO, journal, state / runs, argv,
                backend=backend, command=command,
            )  # fmt: skip

        def world() -> tuple[dict[str, Any], frozenset[str]]:
            with sandbox_kube(sandbox) as kube:
                return read_world(functools.partial(sandbox_client, sandbox), kube), (
                    workload_nodes(kube)
                )

        session = faulty("runs-1a", "--to", INGRESS_NODEPORT).rehearse(ci_faults_to_the_bridge())
        across: frozenset[tuple[str, str]] = frozenset()
        bridged = went_back = member_went_back = events_went_back = holders_went_back = None
        if session.final_code == 0:
            bridged = world()
            onward = faulty("runs-1b", "--to", INGRESS_MOVE)
            session = joined(session, onward.rehearse(ci_faults_before_by_hand(env, second_env)))
        if session.final_code == 0:
            across = admitted_across(sandbox)
            back = faulty("back", "--to", INGRESS_NODEPORT, command="back")
            session = joined(session, back.rehearse(ci_faults_on_the_way_back()))
        if session.final_code == 0:
            went_back = world()
            again = faulty("runs-1c", "--to", INGRESS_MOVE)
            session = joined(session, again.rehearse([]))
        if session.final_code == 0:
            exports = kubeshift(env, "--stack", STACK, "sandbox", "env").stdout
            by_hand = drain_by_hand(KUBESHIFT, STACK, exports, env, state)
            # operator B takes over: its checkout brought up to date, the rest is B's
            second_env = second_operators_env(env, state)
            second_status = kubeshift(second_env, "--stack", STACK, "status", "--json")
            rest = seconds("runs-2a", "--to", control_plane_phase(2))
            session = joined(session, rest.rehearse(ci_faults_after_by_hand()))
        if session.final_code == 0:  # member 2 back to the source VPC, then on again
            back = seconds("runs-2b", "--to", control_plane_phase(1), command="back")
            session = joined(session, back.rehearse([]))
            member_went_back = etcd_members(sandbox)
            events_went_back = etcd_members(sandbox, events=True)
            holders_went_back = volume_holders(sandbox)
        if session.final_code == 0:
            session = joined(session, seconds("runs-2c").rehearse([]))
        sys.stderr.write("\nfault trials:\n" + table(session.trials) + "\n")
        if session.final_code != 0:
            last = Ran(["kubeshift", "run"], session.final_code or -1, "", session.log[-1], 0)
            pytest.fail(failure_report("the interrupted kubeshift run", last, logs), pytrace=False)
        rerun = kubeshift(env, "--stack", STACK, "--json", "run", "--yes")
        yield Rehearsal(
            env=env,
            user_env=user_env,
            up=up,
            adoption=adoption,
            faults=session,
            rerun=rerun,
            sandbox=sandbox,
            journal=journal,
            by_hand=by_hand,
            etcd_before=etcd_before,
            events_before=events_before,
            holders_before=holders_before,
            admitted_across=across,
            second_env=second_env,
            second_status=second_status,
            bridged=bridged,
            went_back=went_back,
            member_went_back=member_went_back,
            events_went_back=events_went_back,
            holders_went_back=holders_went_back,
        )
    finally:
        down = kubeshift(env, "sandbox", "down", timeout=120)
        if down.code != 0:
            sys.stderr.write(failure_report("kubeshift sandbox down", down, logs))
        shutil.rmtree(state / "sandbox" / "run", ignore_errors=True)
