"""The whole overlay-switch of ``overlay-switch-example``, rehearsed through the console script.

One sandbox for the module (before the vpc-move one is up): the live cluster built as
kops would have, running Calico on IPIP; the real AWS cloud-controller-manager's route
controller, the only one reporting the nodes' ``NetworkUnavailable`` (kwok leaves it
out); ``adopt``, then ``run --yes`` through routes, route-readiness, native-routing and
verify, and a second ``run``. Asserted from the outside: the journal, moto, the cluster.

This rehearsal keeps the stack's state in the sandbox's S3 (``sandbox up --backend
s3``) and is shared by two operators: A runs baseline and routes, B (a checkout and
state directory of its own) takes over from there (``tests.rehearsal.team``).
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes.client import AppsV1Api, CoreV1Api, CustomObjectsApi

from automation.kube.calico import GROUP, PLURAL, RESTART_ANNOTATION, VERSION
from tests.rehearsal.conftest import (
    BACK,
    BEFORE_RUN,
    REPO,
    StackRehearsal,
    kubeshift,
    rehearse_adopted,
    sandbox_client,
    sandbox_kube,
)
from tests.rehearsal.team import SECOND_OPERATOR

pytestmark = [pytest.mark.rehearsal, pytest.mark.cloudcontroller]  # the sandbox runs the CCM

STACK = "overlay-switch-example"
CLUSTER = "data-use1"
CLUSTER_ID = f"{CLUSTER}.k8s.local"
"""What its tags and its cloud controller know it by (kops's name)."""
CALICO_PODS = "k8s-app=calico-node"
HANDOVER = "routes"  # operator A runs baseline and routes; operator B the rest
FIRST_PHASES = {"baseline", "routes"}
BACK_TO = "baseline"  # once at the end: every phase taken back, the latest first
PHASES_AFTER_BASELINE = ("routes", "route-readiness", "native-routing", "verify")
TAKEN_BACK = set(PHASES_AFTER_BASELINE)


def _stack() -> dict[str, Any]:
    return yaml.safe_load((REPO / "stacks" / f"Pulumi.{STACK}.yaml").read_text())["config"]


def _calico_generation(sandbox: dict[str, Any]) -> int:
    """calico-node's DaemonSet generation: one more for each change of its spec."""
    with sandbox_kube(sandbox) as api:
        calico: Any = AppsV1Api(api).read_namespaced_daemon_set("calico-node", "kube-system")
    return int(calico.metadata.generation)


@pytest.fixture(scope="module")
def overlay(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StackRehearsal]:
    """calico-node's generation is read once adopted, before the run."""
    state = tmp_path_factory.mktemp("overlay-rehearsal-state")
    looks = {BEFORE_RUN: _calico_generation, BACK: _overlay_now}
    with rehearse_adopted(state, STACK, looks, handover_after=HANDOVER, back_to=BACK_TO) as done:
        yield done


def _overlay_now(sandbox: dict[str, Any]) -> tuple[str, int, list[bool], int]:
    """The IP pool's IPIP mode and calico-node's generation, read from the cluster; each
    instance's source/destination check and the pod routes in any route table, read in
    moto."""
    with sandbox_kube(sandbox) as api:
        pool: Any = CustomObjectsApi(api).get_cluster_custom_object(
            GROUP, VERSION, PLURAL, "default-ipv4-ippool"
        )
    ec2 = sandbox_client(sandbox, "ec2")
    checks = [_source_dest_check(ec2, i["InstanceId"]) for i in _instances(ec2)]
    pod_cidr = ipaddress.ip_network(_stack()["kubeshift:migration"]["overlay"]["pod_cidr"])
    pod_routes = [
        r for t in ec2.describe_route_tables()["RouteTables"] for r in t["Routes"]
        if ipaddress.ip_network(r.get("DestinationCidrBlock") or "0.0.0.0/32").subnet_of(pod_cidr)
    ]  # fmt: skip
    return str(pool["spec"]["ipipMode"]), _calico_generation(sandbox), checks, len(pod_routes)


def _nodes(overlay: StackRehearsal) -> list[Any]:
    with overlay.kube() as api:
        return list(CoreV1Api(api).list_node().items)


def test_the_adopted_cluster_went_through_every_phase(overlay: StackRehearsal) -> None:
    assert overlay.adopted.json()["imported"], overlay.adopted.stdout[-2000:]
    failed = {k: r["status"] for k, r in overlay.records.items() if r["status"] != "succeeded"}
    assert failed == {}
    phases = [r["phase"] for r in overlay.records.values()]
    assert phases[0] == "baseline" and phases[-1] == "verify"


def test_kops_calico_rule_was_listed_by_adoption_and_left_alone(overlay: StackRehearsal) -> None:
    ec2 = overlay.client("ec2")
    listed = ec2.describe_security_groups()["SecurityGroups"]
    groups = {g["GroupId"]: g["GroupName"] for g in listed}
    rules = ec2.describe_security_group_rules()["SecurityGroupRules"]
    # kops admits Calico's IP-in-IP (protocol 4, no ports) to the members from the nodes
    [ipip] = [r for r in rules if r["IpProtocol"] == "4"]
    assert not ipip["IsEgress"] and (ipip["FromPort"], ipip["ToPort"]) == (-1, -1)
    assert groups[ipip["GroupId"]] == f"masters.{CLUSTER}.k8s.local"
    assert groups[ipip["ReferencedGroupInfo"]["GroupId"]] == f"nodes.{CLUSTER}.k8s.local"
    # adoption listed it as not modelled; after the whole switch it is still there
    unmodelled = overlay.adopted.json()["discovery"]["unmodelled"]
    assert ipip["SecurityGroupRuleId"] in {u["arn"].rsplit("/", 1)[-1] for u in unmodelled}


def _tagged_tables(overlay: StackRehearsal) -> list[dict[str, Any]]:
    tables = overlay.client("ec2").describe_route_tables()["RouteTables"]
    return [
        t for t in tables
        if {"Key": f"kubernetes.io/cluster/{CLUSTER_ID}", "Value": "owned"} in t.get("Tags", [])
        or {"Key": "KubernetesCluster", "Value": CLUSTER_ID} in t.get("Tags", [])
    ]  # fmt: skip


def test_the_route_controller_wrote_a_route_per_node_in_the_one_tagged_table(
    overlay: StackRehearsal,
) -> None:
    [table] = _tagged_tables(overlay)  # the controller refuses a cluster with two
    routes = {
        r["DestinationCidrBlock"]: r["InstanceId"]
        for r in table["Routes"]
        if r.get("InstanceId") and r["State"] == "active"
    }
    pod_cidr = ipaddress.ip_network(_stack()["kubeshift:migration"]["overlay"]["pod_cidr"])
    nodes = _nodes(overlay)
    assert nodes
    for node in nodes:
        assert ipaddress.ip_network(node.spec.pod_cidr).subnet_of(pod_cidr)
        assert routes.get(node.spec.pod_cidr) == node.spec.provider_id.rsplit("/", 1)[-1], node
    # The VPC's other tables carry no pod route.
    others = overlay.client("ec2").describe_route_tables()["RouteTables"]
    pod_routes = [
        r for t in others if t["RouteTableId"] != table["RouteTableId"] for r in t["Routes"]
        if ipaddress.ip_network(r.get("DestinationCidrBlock") or "0.0.0.0/32").subnet_of(pod_cidr)
    ]  # fmt: skip
    assert pod_routes == []


def test_every_node_reported_route_created_by_the_controller_after_the_routes_phase(
    overlay: StackRehearsal,
) -> None:
    # The update tags the one node table; the controller writes the routes within seconds,
    # possibly before the update ends. (Taken back, the table went with its routes and the
    # controller, finding none, left the conditions as they were.)
    routes_began = overlay.records["routes/update"]["executions"][0]["started"]
    nodes = _nodes(overlay)
    assert nodes
    for node in nodes:
        [condition] = [c for c in node.status.conditions if c.type == "NetworkUnavailable"]
        assert (condition.status, condition.reason) == ("False", "RouteCreated"), node.metadata.name
        # Set when the controller wrote the route, once the tagged table existed (kwok,
        # which would stamp the node's creation time, does not report it here).
        changed = condition.last_transition_time.astimezone(dt.UTC).timestamp()
        assert changed >= int(routes_began), (node.metadata.name, changed, routes_began)


def test_ipip_is_off_and_calico_rolled_once_per_switch(overlay: StackRehearsal) -> None:
    """Once per switch: native-routing, its way back and native-routing again each
    changed calico-node's spec once (the second run none), and every calico-node pod
    running now was made after the last roll-calico began."""
    with overlay.kube() as api:
        apps, core, custom = AppsV1Api(api), CoreV1Api(api), CustomObjectsApi(api)
        pool: Any = custom.get_cluster_custom_object(GROUP, VERSION, PLURAL, "default-ipv4-ippool")
        calico: Any = apps.read_namespaced_daemon_set("calico-node", "kube-system")
        pods: list[Any] = core.list_namespaced_pod("kube-system", label_selector=CALICO_PODS).items
    assert pool["spec"]["ipipMode"] == "Never"
    annotations = calico.spec.template.metadata.annotations or {}
    assert RESTART_ANNOTATION in annotations, annotations
    status = calico.status
    assert status.updated_number_scheduled == status.desired_number_scheduled == status.number_ready
    assert status.desired_number_scheduled == len(_nodes(overlay))
    before = overlay.seen[BEFORE_RUN]
    generations = (calico.metadata.generation, status.observed_generation)
    assert generations == (before + 3, before + 3), f"generation {before} before the run"
    rolled = overlay.records["native-routing/after:roll-calico"]
    live = [p for p in pods if p.metadata.deletion_timestamp is None]
    assert len(live) == status.desired_number_scheduled, [p.metadata.name for p in pods]
    made = {p.metadata.name: p.metadata.creation_timestamp.timestamp() for p in live}
    older = {name: at for name, at in made.items() if at < int(rolled["started"])}
    assert older == {}, (rolled["started"], made)


def _instances(ec2: Any) -> list[dict[str, Any]]:
    pages = ec2.get_paginator("describe_instances").paginate(
        Filters=[
            {"Name": "tag-key", "Values": [f"kubernetes.io/cluster/{CLUSTER_ID}"]},
            {"Name": "instance-state-name", "Values": ["running"]},
        ]
    )
    return [i for p in pages for r in p["Reservations"] for i in r["Instances"]]


def _source_dest_check(ec2: Any, instance_id: str) -> bool:
    answer = ec2.describe_instance_attribute(InstanceId=instance_id, Attribute="sourceDestCheck")
    return bool(answer["SourceDestCheck"]["Value"])


def test_the_source_destination_check_is_off_on_every_instance(overlay: StackRehearsal) -> None:
    ec2 = overlay.client("ec2")
    instances = _instances(ec2)
    assert len(instances) == len(_nodes(overlay))
    for instance in instances:
        assert _source_dest_check(ec2, instance["InstanceId"]) is False, instance["InstanceId"]


def test_a_second_run_changes_nothing(overlay: StackRehearsal) -> None:
    assert overlay.rerun.code == 0, overlay.rerun.stderr[-2000:]
    outcomes = overlay.rerun.json()
    assert outcomes and {o["status"] for o in outcomes} == {"skipped"}


def test_each_phase_previewed_and_updated_what_the_checkpoint_said_differs(
    overlay: StackRehearsal,
) -> None:
    """The example stack runs with ``preview_scope: judged``, as a user's stack does by
    default (the sandbox would map verify): each preview after the adopted baseline, the
    ways back's included, was judged against the checkpoint and reached only what
    differs, what depends on it and the stack resource — through the real engine, its
    update plans and the guard — and the run ended with the world the other assertions
    here check. A phase judged to change nothing was not previewed; its update still
    wrote the stack's progress record."""
    previews = {
        key.split("/")[0]: record["details"]
        for key, record in overlay.records.items()
        if key.endswith("/preview") and record["status"] == "succeeded"
    }  # fmt: skip
    assert previews and all("checkpoint" in d for d in previews.values()), previews
    narrowed = {p: d for p, d in previews.items() if d["previewed"] != "every resource"}
    assert narrowed, previews
    skipped = []
    for phase, details in narrowed.items():
        if details["checkpoint"].startswith("the program declares"):  # nothing differs
            assert details["previewed"] == "skipped", (phase, details)
            skipped.append(phase)
        else:
            assert details["previewed"] == f"{details['judged']} targets", (phase, details)
    assert skipped, narrowed  # the phases that change only the cluster
    for phase in skipped:
        assert overlay.records[f"{phase}/update"]["status"] == "succeeded"
        if not phase.startswith("back-from-"):  # a way back's update unrecords its phase
            assert overlay.recorded[phase]["update"].startswith("run "), overlay.recorded[phase]
    back = {p: d for p, d in previews.items() if p.startswith("back-from-")}
    assert len(back) == 4 and all(d["guard"] == "accepted" for d in back.values()), back


def _operators(record: dict[str, Any]) -> set[str]:
    return {e["operator"].split("@")[0] for e in record["executions"]}


def test_a_second_operator_carries_the_migration_on_through_the_shared_backend(
    overlay: StackRehearsal,
) -> None:
    """Journal and run lock live in the bucket beside the stack's state: B is refused
    while A's run holds the stack, naming A; B sees A's journal, is refused by a stale
    lock of another machine until ``recover`` clears it, and runs the rest; nothing ran
    twice, and neither operator's machine kept a journal of its own."""
    handover = overlay.handover
    assert handover is not None
    assert handover.first_run["code"] == 0, handover.first_run["stderr"][-2000:]
    held = handover.lock_while_held
    assert held["operator"].split("@")[0] != SECOND_OPERATOR

    refused = handover.refused_while_held
    assert refused.code == 6, refused.stderr[-2000:]
    assert f"being migrated by {held['operator']} (pid {held['pid']}" in refused.stderr
    assert "Traceback" not in refused.stderr

    seen = {f"{r['phase']}/{r['step']}": r for r in handover.status_after_first}
    assert {key.split("/")[0] for key in seen} == FIRST_PHASES, sorted(seen)
    assert all(r["status"] == "succeeded" for r in seen.values()), seen
    assert all(_operators(r) == {held["operator"].split("@")[0]} for r in seen.values())
    # (the way back's own journal is asserted in test_going_back_...)

    stale = handover.refused_stale
    assert stale.code == 6 and "carol@ci-runner-9" in stale.stderr, stale.stderr[-2000:]
    assert "lease ran out" in stale.stderr and "`kubeshift recover` removes" in stale.stderr
    assert handover.recovered.code == 0, handover.recovered.stderr[-2000:]
    assert handover.second_run.code == 0, handover.second_run.stderr[-2000:]
    recovery = overlay.records["recover/recovery-1"]
    assert "carol@ci-runner-9" in recovery["details"]["stale_run_lock"]

    for key, record in overlay.records.items():
        phase = key.split("/")[0]
        if phase in FIRST_PHASES - TAKEN_BACK:
            assert _operators(record) == {held["operator"].split("@")[0]}, key
        elif phase in FIRST_PHASES:  # A ran it, B took it back and ran it again
            assert _operators(record) == {held["operator"].split("@")[0], SECOND_OPERATOR}, key
        elif phase != "recover":
            assert _operators(record) == {SECOND_OPERATOR}, key
        successes = sum(e["status"] == "succeeded" for e in record["executions"])
        assert successes == (2 if phase in TAKEN_BACK else 1), key  # done, undone, redone

    assert handover.keys_at_end == [
        f".kubeshift/kubeshift/{STACK}/journal.json",
        *[k for k in handover.keys_at_end if k.startswith(".pulumi/")],
    ], "no lock is left, and nothing but the journal beside the state"
    assert any(k.endswith(f"{STACK}.json") for k in handover.keys_at_end)
    states = [
        Path(overlay.env["KUBESHIFT_STATE_DIR"]),
        Path(overlay.env["KUBESHIFT_STATE_DIR"]).parent,
    ]
    assert not [p for d in states for p in d.glob("*.journal.json")]


def test_going_back_takes_ipip_back_and_the_next_run_switches_it_off_again(
    overlay: StackRehearsal,
) -> None:
    """``back --to baseline`` at the end: every phase taken back, the latest first (the
    pool on IPIP again, calico-node rolled for it, then the shared node route table and
    its pod routes gone and every instance's source/destination check on again), the
    stack's record and the journal moved back, so the next ``run`` did them again."""
    dry = overlay.back_dry_run
    assert dry is not None and dry.code == 0, dry
    planned = [(o["phase"], o["step"]) for o in dry.json()]
    assert ("back-from-native-routing", "before:enable-ipip") in planned, planned
    went_back = overlay.went_back
    assert went_back is not None and went_back.code == 0, went_back
    steps = [(o["phase"], o["step"], o["status"]) for o in went_back.json()]
    phases = list(dict.fromkeys(phase for phase, _, _ in steps))
    assert phases == [f"back-from-{p}" for p in reversed(PHASES_AFTER_BASELINE)], steps
    assert {status for _, _, status in steps} == {"succeeded"}, steps
    before = overlay.seen[BEFORE_RUN]
    ipip, generation, checks, pod_routes = overlay.seen[BACK]
    assert (ipip, generation) == ("Always", before + 2), "IPIP back on, calico-node rolled"
    assert checks and all(checks), "the source/destination check on again everywhere"
    assert pod_routes == 0, "the pod routes went with the shared node route table"
    update = overlay.records["back-from-native-routing/update"]
    assert update["status"] == "succeeded" and "kubeshift:phase" not in update["message"]
    before_each = ("baseline", *PHASES_AFTER_BASELINE[:-1])
    for phase, before_it in zip(PHASES_AFTER_BASELINE, before_each, strict=True):
        config = overlay.records[f"back-from-{phase}/config"]
        assert config["message"] == f"kubeshift:phase = {before_it}", phase
    recorded = overlay.recorded
    assert recorded["native-routing"]["after"].startswith("run "), "redone by the last run"
    redone = overlay.records["native-routing/after:disable-ipip"]
    assert [e["status"] for e in redone["executions"]] == ["succeeded", "undone", "succeeded"]
    shown = kubeshift(overlay.env, "--stack", STACK, "status")
    text = " ".join(shown.stdout.split())
    assert "Taken back: verify, by kubeshift back" in text, shown.stdout[-3000:]
    assert "Taken back: native-routing, by kubeshift back" in text
