"""The whole vpc-move of the ``local`` stack, rehearsed through the console script.

Asserted from the outside only: the journal, moto, the sandbox's cluster.
"""

from __future__ import annotations

import ipaddress
import json
import re
import signal
import subprocess
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes.client import AppsV1Api, CoreV1Api

from automation.core.errors import EXIT_CODES, ErrorKind
from automation.sandbox.workspace import SANDBOX_DRAIN_MARGIN
from automation.sandbox.world.kops import domain
from benchmarks.faults import world_differences
from components.contract.loading import load_stack_file
from tests.rehearsal.conftest import (
    REPO,
    STACK,
    Rehearsal,
    SecondOperator,
    events_volumes,
    kubeshift,
    volume_holders,
)
from tests.rehearsal.team import SECOND_OPERATOR
from tests.support.faults import REPEATABLE, repeated_successes, since_taken_back, table

pytestmark = [pytest.mark.rehearsal]


def _stack() -> dict[str, Any]:
    return yaml.safe_load((REPO / "stacks" / f"Pulumi.{STACK}.yaml").read_text())["config"]


def _target_cidr() -> ipaddress.IPv4Network:
    return ipaddress.ip_network(_stack()["kubeshift:migration"]["target_network"]["cidr"])


def _vpc_ids(rehearsal: Rehearsal) -> tuple[str, str]:
    """(source VPC id, target VPC id), told apart by the stack file's CIDRs."""
    vpcs = rehearsal.client("ec2").describe_vpcs()["Vpcs"]
    source = ipaddress.ip_network(_stack()["kubeshift:cluster"]["network"]["cidr"])
    by_cidr = {ipaddress.ip_network(v["CidrBlock"]): v["VpcId"] for v in vpcs}
    return by_cidr[source], by_cidr[_target_cidr()]


def _instances_by_id(rehearsal: Rehearsal) -> dict[str, dict[str, Any]]:
    pages = rehearsal.client("ec2").get_paginator("describe_instances").paginate()
    return {i["InstanceId"]: i for p in pages for r in p["Reservations"] for i in r["Instances"]}


def test_every_phase_succeeded(rehearsal: Rehearsal) -> None:
    records = rehearsal.kubeshift("--stack", STACK, "status", "--json").json()
    plan = rehearsal.kubeshift("--stack", STACK, "plan", "--json").json()
    phases = [p["id"] for p in plan["phases"]]
    assert [r for r in records if r["status"] != "succeeded"] == []
    by_hand = {"drain-workers", "retire-old-workers"}
    updates = {r["phase"] for r in records if r["step"] == "update"}
    # By hand: those two updates. baseline: `kubeshift adopt` imported the world `sandbox
    # up` handed over and it has no hooks, so the stack records it finished and the run
    # skips it. The way back from ingress-move to ingress-nodeport journals its own, and
    # so does member 2's move back.
    went_back = {
        f"back-from-{p}"
        for p in ("ingress-move", "dns-cutover", "target-workers", "control-plane-2")
    }
    assert updates == set(phases) - by_hand - {"baseline"} | went_back
    recorded = rehearsal.kubeshift("--stack", STACK, "status", "--recorded", "--json").json()
    assert [r["phase"] for r in recorded] == phases
    for row in recorded:
        assert row["update"] and row["after"], row  # "-": a phase with no after-steps
    hand_run = {r["phase"]: r["update"] for r in recorded if r["phase"] in by_hand}
    assert hand_run == dict.fromkeys(by_hand, "pulumi up by hand")


def test_an_update_by_hand_that_skips_the_drain_is_refused_and_changes_nothing(
    rehearsal: Rehearsal,
) -> None:
    refused = rehearsal.by_hand.refused
    assert refused.code != 0, refused.output[-3000:]
    assert "Phase 'retire-old-workers' cannot be updated yet" in refused.output
    assert "after drain-workers" in refused.output
    assert "kubeshift --stack local hooks drain-workers --before" in refused.output
    assert "Traceback" not in refused.output
    assert rehearsal.by_hand.world_after_refusal == rehearsal.by_hand.world_before_refusal


def test_hooks_by_command_around_a_hand_run_update_let_the_next_phase_go(
    rehearsal: Rehearsal,
) -> None:
    by_hand = rehearsal.by_hand
    steps = (by_hand.hooks_before, by_hand.drain_up, by_hand.hooks_after, by_hand.retire_hooks)
    for step in (*steps, by_hand.retire_up):
        assert step.ok, step.output[-3000:]
    assert "Drained" in by_hand.hooks_before.output
    assert "Recorded with the stack: before drain-workers." in by_hand.hooks_before.output
    assert "Recorded with the stack: after drain-workers." in by_hand.hooks_after.output
    records = _records(rehearsal)
    assert records["drain-workers/before:drain-old-nodes"]["status"] == "succeeded"
    assert "drain-workers/update" not in records  # the engineer's own `pulumi up`
    assert "Recorded with the stack: before retire-old-workers." in by_hand.retire_hooks.output
    assert "deleted" in by_hand.retire_up.output


def test_no_load_balancer_went_before_its_clients_could_have_left(rehearsal: Rehearsal) -> None:
    """Each dns-drain ran before its phase's update deleted a load balancer, and ended no
    sooner than the records' TTL plus the margin after the records' move was recorded; the
    load balancers it drained are gone afterwards (read in moto)."""
    ttl = _stack()["kubeshift:cluster"]["dns"]["ttl"]
    records = _records(rehearsal)
    recorded = rehearsal.kubeshift("--stack", STACK, "status", "--recorded", "--json").json()
    finished = {r["phase"]: r for r in recorded}
    drained = []
    for phase, moved_in in (("retire-old-workers", "dns-cutover"), ("cleanup", "control-plane-2")):
        drain = records[f"{phase}/before:dns-drain"]
        assert drain["status"] == "succeeded", drain
        since = datetime.fromisoformat(drain["details"]["since"])
        ended = datetime.fromtimestamp(drain["finished"], UTC)
        assert ended >= since + timedelta(seconds=ttl + SANDBOX_DRAIN_MARGIN - 1)
        assert finished[moved_in]["after"], finished[moved_in]
        update = records.get(f"{phase}/update")  # retire-old-workers' is a hand-run pulumi up
        assert update is None or update["started"] >= drain["finished"], (drain, update)
        drained += drain["details"]["balancers"]
    assert len(drained) == 2, drained
    left = rehearsal.client("elbv2").describe_load_balancers()["LoadBalancers"]
    assert set(drained).isdisjoint(lb["LoadBalancerName"] for lb in left)


def test_the_override_is_recorded_and_shown_by_status(rehearsal: Rehearsal) -> None:
    override = rehearsal.by_hand.override_up
    assert override.ok, override.output[-3000:]
    assert "kubeshift:skipProgressCheck lets phase 'control-plane-1' go ahead" in override.output
    rows = {r["phase"]: r for r in rehearsal.by_hand.recorded()}
    assert "before control-plane-1" in rows["control-plane-1"]["override"]
    later = rehearsal.kubeshift("--stack", STACK, "status", "--recorded", "--json").json()
    (row,) = [r for r in later if r["phase"] == "control-plane-1"]
    assert row["override"] == rows["control-plane-1"]["override"]  # the run kept it
    assert row["after"].startswith("run ")  # and finished the phase's steps
    shown = rehearsal.kubeshift("--stack", STACK, "status")
    assert shown.code == 0, shown.stderr
    assert "progress recorded with local" in shown.stdout and "override" in shown.stdout


def test_a_second_operators_fresh_checkout_sees_the_same_progress(rehearsal: Rehearsal) -> None:
    """``status --recorded`` in that checkout: what it shows comes from the stack itself."""
    status = rehearsal.by_hand.second_operator_status
    assert status.ok, status.output[-3000:]
    rows = {r["phase"]: r for r in rehearsal.by_hand.recorded()}
    assert rows["drain-workers"]["before"].startswith("hooks ")
    assert rows["drain-workers"]["after"].startswith("hooks ")
    assert rows["ingress-move"]["after"].startswith("run ")
    assert rows["retire-old-workers"]["update"] == "pulumi up by hand"


def test_every_fault_struck_and_the_run_went_on_to_the_end(rehearsal: Rehearsal) -> None:
    trials = rehearsal.faults.trials
    assert all(t.where for t in trials), table(trials)
    codes = {t.fault.how: t.code for t in trials}
    assert codes["sigint"] == 130, table(trials)
    assert codes["group-kill"] == codes["kill-alone"] == -signal.SIGKILL, table(trials)
    assert codes["engine-kill"] not in (0, None), table(trials)
    assert rehearsal.faults.final_code == 0


def test_going_back_to_ingress_nodeport_left_the_world_as_it_was_there(
    rehearsal: Rehearsal,
) -> None:
    """From ingress-move, ``back --to ingress-nodeport`` (killed once while it drained
    the new workers, then resumed) took ingress-move, dns-cutover and target-workers
    back: read from moto and the cluster, the world is the one read when the run first
    stopped after ingress-nodeport — the same groups and instances, no target-VPC
    worker, records on the old load balancers, the old nodes untainted, every workload
    Available on them — and the run then went forward again to the end."""
    assert rehearsal.bridged is not None and rehearsal.went_back is not None
    (before, ran_on), (after, runs_on) = rehearsal.bridged, rehearsal.went_back
    assert world_differences(before, after) == []
    old_nodes = {name for name, _, _ in before["nodes and taints"]}
    assert ran_on <= old_nodes and runs_on <= old_nodes, (ran_on, runs_on)
    assert all(ok for _, _, ok in after["deployments available"]), after
    records = _records(rehearsal)
    walk = ("ingress-move", "dns-cutover", "target-workers")
    assert {p: records[f"back-from-{p}/update"]["status"] for p in walk} == dict.fromkeys(
        walk, "succeeded"
    )
    # the way back ended only once the evicted pods were whole again on the old nodes
    assert records["back-from-target-workers/before:workloads-whole"]["status"] == "succeeded"
    kill = next(t for t in rehearsal.faults.trials if t.fault.at.startswith("back-from-"))
    assert kill.where.startswith("back-from-target-workers/"), table(rehearsal.faults.trials)
    assert kill.code == -signal.SIGKILL, table(rehearsal.faults.trials)


def test_the_killed_engine_alone_was_recovered_once_through_the_documented_command(
    rehearsal: Rehearsal,
) -> None:
    """One recovery where the engine was killed mid-update, and none after the other
    faults but where one left an engine's lock behind (the harness fails a trial on any
    recovery no fault demanded). kubeshift killed alone mid-update orphans its ``pulumi``,
    which dies at its next write to the dead pipe or finishes first, as the machine's
    load decides: its lock is then left (one recovery, read from the backend's lock
    files) or not (none). Each recovery removed the lock of an engine its fault killed or
    orphaned, and nothing else."""
    trials = rehearsal.faults.trials
    assert [t.fault.how for t in trials] == [
        "engine-kill", "sigint", "kill-alone", "kill-alone", "group-kill"
    ], table(trials)  # fmt: skip
    demanded = [(t.recoveries, t.expected) for t in trials]
    orphans = [int(t.fault.how == "kill-alone" and t.left_lock) for t in trials]
    assert demanded == [(1, 1), *((n, n) for n in orphans[1:])], table(trials)
    records = _records(rehearsal)
    recoveries = [r for k, r in records.items() if k.startswith("recover/")]
    assert [r["status"] for r in recoveries] == ["succeeded"] * (1 + sum(orphans)), recoveries
    hurt = [t for t in trials if t.expected]
    for trial, recovery in zip(hurt, recoveries, strict=True):
        engines = [f"pulumi pid {e.pid} on " for e in trial.engines if e.locks]
        removed = recovery["details"]["stale_locks"]
        assert engines and len(removed) == 1, (engines, removed)
        assert any(removed[0].startswith(lock) for lock in engines), (engines, removed)


def test_nothing_the_killed_engine_had_made_was_made_twice(rehearsal: Rehearsal) -> None:
    """The engine is killed with target-network's first creates in flight (the VPC, a
    NAT address, a group rule, the peering); whichever had completed, ``recover`` took
    it into the state, so the run made none of them again."""
    ec2 = rehearsal.client("ec2")
    cidrs = Counter(v["CidrBlock"] for v in ec2.describe_vpcs()["Vpcs"])
    assert [cidr for cidr, count in cidrs.items() if count > 1] == []
    addresses = Counter(
        tag["Value"]
        for a in ec2.describe_addresses()["Addresses"]
        for tag in a.get("Tags") or []
        if tag["Key"] == "Name"
    )
    assert [name for name, count in addresses.items() if count > 1] == []
    peerings = ec2.describe_vpc_peering_connections()["VpcPeeringConnections"]
    waiting = [p["VpcPeeringConnectionId"] for p in peerings
               if p["Status"]["Code"] in ("initiating-request", "pending-acceptance")]  # fmt: skip
    assert waiting == []  # a second request would wait, never accepted


def test_no_step_finished_twice_and_every_interrupted_one_finished_later(
    rehearsal: Rehearsal,
) -> None:
    records = _records(rehearsal)
    assert repeated_successes(records) == []
    hurt = [
        k
        for k, r in records.items()
        if len(since_taken_back(r)) > 1 and r["step"] not in REPEATABLE
    ]
    assert hurt, "the faults left no trace in the journal"
    for key in hurt:
        statuses = [e["status"] for e in since_taken_back(records[key])]
        assert statuses[-1] == "succeeded" and "succeeded" not in statuses[:-1], (key, statuses)
    # target-workers was taken back once (``back --to ingress-nodeport``) and done again
    again = {
        k: [e["status"] for e in r["executions"]]
        for k, r in records.items()
        if r["phase"] == "target-workers"
    }
    assert again and all(s.count("undone") == 1 and s[-1] == "succeeded" for s in again.values())


def test_ctrl_c_stopped_the_run_at_a_safe_point(rehearsal: Rehearsal) -> None:
    """Inside a wait the step stops (interrupted); anywhere else it finishes first."""
    sigint = next(t for t in rehearsal.faults.trials if t.fault.how == "sigint")
    assert sigint.code == 130, table(rehearsal.faults.trials)
    assert sigint.stopped_at, "the journal said where the run stopped"
    if sigint.struck_status == "interrupted":
        assert sigint.stopped_at == sigint.where
    else:
        assert sigint.struck_status == "succeeded", sigint
        assert sigint.stopped_at != sigint.where, "it stopped at the step after"


def test_a_second_operators_update_and_run_were_refused(rehearsal: Rehearsal) -> None:
    trial = next(t for t in rehearsal.faults.trials if t.fault.meanwhile is not None)
    second = trial.meanwhile
    assert isinstance(second, SecondOperator)
    by_hand = second.pulumi_up.stdout + second.pulumi_up.stderr
    assert second.pulumi_up.returncode != 0, by_hand[-3000:]
    assert "being migrated by `kubeshift run`" in by_hand, by_hand[-3000:]
    assert "Traceback" not in by_hand
    run = second.kubeshift_run  # operator B's, from B's own checkout and state directory
    assert run.code == EXIT_CODES[ErrorKind.LOCKED], run.stderr
    assert "being migrated by" in run.stderr and "Traceback" not in run.stderr
    holder = re.search(r"being migrated by (\S+)@", run.stderr)
    assert holder is not None and holder[1] != SECOND_OPERATOR, "the first operator is named"


def _records(rehearsal: Rehearsal) -> dict[str, Any]:
    """The journal's steps, read from the bucket beside the stack's state."""
    source = rehearsal.journal
    body = source.read_bytes() if isinstance(source, Path) else source()
    assert body is not None, "no journal in the backend"
    records: dict[str, Any] = json.loads(body)["steps"]
    return records


def test_target_vpc_holds_the_workers_and_load_balancers(rehearsal: Rehearsal) -> None:
    source, target = _vpc_ids(rehearsal)
    ec2, asg = rehearsal.client("ec2"), rehearsal.client("autoscaling")
    subnet_vpc = {s["SubnetId"]: s["VpcId"] for s in ec2.describe_subnets()["Subnets"]}
    groups = asg.describe_auto_scaling_groups()["AutoScalingGroups"]
    assert groups, "no ASG left at all"
    for group in groups:
        vpcs = {subnet_vpc[s] for s in group["VPCZoneIdentifier"].split(",")}
        assert vpcs == {target}, f"{group['AutoScalingGroupName']} is in {vpcs}"
    running = [i for i in _instances_by_id(rehearsal).values() if i["State"]["Name"] == "running"]
    assert running and all(i["VpcId"] == target for i in running)
    lbs = rehearsal.client("elbv2").describe_load_balancers()["LoadBalancers"]
    assert lbs and {lb["VpcId"] for lb in lbs} == {target}, "a load balancer outside the target"
    assert source != target


def test_each_kops_instance_group_moved_as_one_group_over_the_target_zones(
    rehearsal: Rehearsal,
) -> None:
    """kops's worker instance groups span both AZs and both types; the proposal made
    each a pool of ``group_per: capacity``, so its new generation is one group again."""
    _, target = _vpc_ids(rehearsal)
    ec2, asg = rehearsal.client("ec2"), rehearsal.client("autoscaling")
    subnet_azs = {
        s["SubnetId"]: s["AvailabilityZone"]
        for s in ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [target]}])["Subnets"]
    }
    groups = asg.describe_auto_scaling_groups()["AutoScalingGroups"]
    workers = [g for g in groups if "k8s.io/role/master" not in {t["Key"] for t in g["Tags"]}]
    target_azs = set(_stack()["kubeshift:migration"]["target_network"]["azs"])
    assert len(workers) == 2, [g["AutoScalingGroupName"] for g in workers]
    for group in workers:
        assert {subnet_azs[s] for s in group["VPCZoneIdentifier"].split(",")} == target_azs
        assert {i["AvailabilityZone"] for i in group["Instances"]} == target_azs


def _member_zones(rehearsal: Rehearsal) -> dict[str, str]:
    """Member number -> its zone, as kops named the member's instance group before
    adoption (``master-<zone>-<n>.masters.<cluster domain>``)."""
    named = (
        re.fullmatch(r"master-(.+)-(\d+)\.masters\..+", n) for n in rehearsal.adoption.world_names
    )
    return {m[2]: m[1] for m in named if m}


def test_kops_events_volumes_follow_their_members(rehearsal: Rehearsal) -> None:
    """kubeshift declares the main etcd's volumes only: kops's second etcd's are not its
    own. Before adoption each was attached to its member's kops instance, in the
    member's zone; after the whole migration the same volumes are all still there, in
    those zones, each held by its moved member's instance: that member boots the adopted
    group's nodeup, whose etcd-manager claims both of its member's volumes by kops's
    tags."""
    members = [
        str(n) for n in range(1, _stack()["kubeshift:cluster"]["control_plane"]["members"] + 1)
    ]
    every = ",".join(members)
    zones = _member_zones(rehearsal)
    assert sorted(zones) == members, zones
    before = rehearsal.adoption.events_volumes
    by_member = {v.member: v for v in before.values()}
    assert sorted(by_member) == [f"{n}/{every}" for n in members]
    as_kops_left_them = {
        f"{n}/{every}": (zone, "in-use", ((f"master-{zone}-{n}", "attached"),))
        for n, zone in zones.items()
    }
    assert {m: (v.zone, v.state, v.holders) for m, v in by_member.items()} == as_kops_left_them
    after = events_volumes(rehearsal.sandbox)
    assert sorted(after) == sorted(before)  # the same volumes: none deleted, replaced or added
    moved = {
        i: (v.member, v.zone, "in-use",
            ((f"{_stack()['kubeshift:cluster']['name']}-control-plane-"
              f"{v.member.split('/')[0]}-{_stack()['kubeshift:migration']['suffix']}",
              "attached"),))
        for i, v in before.items()
    }  # fmt: skip
    assert {i: (v.member, v.zone, v.state, v.holders) for i, v in after.items()} == moved


def test_while_both_vpcs_ran_each_admitted_the_others_instances(rehearsal: Rehearsal) -> None:
    """kops's instances carry its ``masters`` or ``nodes`` group only, and no group in
    common: the new VPC's groups were admitted in those two, which the running
    instances carry, and kubeshift's shared group of the new side admitted kops's."""
    dns = domain(_stack()["kubeshift:cluster"]["name"])
    suffix = _stack()["kubeshift:migration"]["suffix"]
    cluster = _stack()["kubeshift:cluster"]["name"]
    old = {f"masters.{dns}", f"nodes.{dns}"}
    new = {f"{cluster}-{role}-{suffix}" for role in ("control-plane", "node")}
    admitted = rehearsal.admitted_across
    assert {(into, peer) for into in old for peer in new} <= admitted, admitted
    assert {(f"{cluster}-shared-{suffix}", peer) for peer in old} <= admitted, admitted
    assert not [into for into, _ in admitted if into.startswith("shared")], admitted


def test_the_old_groups_went_and_took_kops_rules_about_them_along(rehearsal: Rehearsal) -> None:
    """kops's masters admitted its nodes: AWS refuses to delete a group another's rule
    refers to (so does the sandbox's moto), and the old groups are gone all the same."""
    source, _ = _vpc_ids(rehearsal)
    ec2 = rehearsal.client("ec2")
    groups = ec2.describe_security_groups()["SecurityGroups"]
    left = {g["GroupName"] for g in groups if g["VpcId"] == source}
    assert not {n for n in left if n.endswith(".k8s.local")}, left
    live = {g["GroupId"] for g in groups}
    referenced = {
        r["ReferencedGroupInfo"]["GroupId"]
        for r in ec2.describe_security_group_rules()["SecurityGroupRules"]
        if r.get("ReferencedGroupInfo")
    }
    assert referenced <= live, referenced - live


def _dns_name(name: str) -> str:
    return name.replace("\\052", "*").rstrip(".").lower()


def test_records_point_at_the_new_load_balancers(rehearsal: Rehearsal) -> None:
    _, target = _vpc_ids(rehearsal)
    route53 = rehearsal.client("route53")
    lbs = rehearsal.client("elbv2").describe_load_balancers()["LoadBalancers"]
    new_lb_names = {lb["DNSName"].rstrip(".").lower() for lb in lbs if lb["VpcId"] == target}
    zone = _stack()["kubeshift:cluster"]["dns"]
    zones = route53.list_hosted_zones()["HostedZones"]
    records = [
        r
        for z in zones
        for r in route53.list_resource_record_sets(HostedZoneId=z["Id"])["ResourceRecordSets"]
        if r["Type"] in {"A", "CNAME"}
    ]
    wanted = [zone["api_record"], *zone["ingress_records"]]
    for name in wanted:
        # Route53 answers a wildcard's "*" as the octal escape "\052".
        found = [r for r in records if _dns_name(r["Name"]) == _dns_name(name)]
        assert found, f"no record {name}"
        for record in found:
            if name == zone["api_record"] and zone.get("api_alias"):
                # kops's API record: an A record aliased to the load balancer, and so after
                assert record["Type"] == "A" and "ResourceRecords" not in record, record
                values = {record["AliasTarget"]["DNSName"].rstrip(".").lower()}
            else:
                assert record["Type"] == "CNAME", record
                values = {v["Value"].rstrip(".").lower() for v in record["ResourceRecords"]}
            assert values <= new_lb_names, f"{name} -> {values}"


def test_nodes_and_workloads_live_in_the_target_vpc(rehearsal: Rehearsal) -> None:
    _, target = _vpc_ids(rehearsal)
    instances = _instances_by_id(rehearsal)
    with rehearsal.kube() as client:
        nodes = CoreV1Api(client).list_node().items
        node_vpc = {
            n.metadata.name: instances[n.spec.provider_id.rsplit("/", 1)[-1]]["VpcId"]
            for n in nodes
        }
        assert nodes and set(node_vpc.values()) == {target}
        deployments = AppsV1Api(client).list_deployment_for_all_namespaces().items
        seeded = [d for d in deployments if d.metadata.namespace not in {"kube-system"}]
        assert seeded
        for deployment in seeded:
            status = deployment.status
            assert status.available_replicas == deployment.spec.replicas, deployment.metadata.name
        pods = CoreV1Api(client).list_pod_for_all_namespaces().items
        placed = [p for p in pods if p.spec.node_name]
        assert placed and all(node_vpc.get(p.spec.node_name) == target for p in placed)


def _side(address: str) -> str:
    """``source`` or ``target``: the network of the stack's a private address is in."""
    stack = _stack()
    nets = {
        "source": stack["kubeshift:cluster"]["network"]["cidr"],
        "target": stack["kubeshift:migration"]["target_network"]["cidr"],
    }
    found = [
        side
        for side, cidr in nets.items()
        if address and ipaddress.ip_address(address) in ipaddress.ip_network(cidr)
    ]
    return found[0] if found else f"nowhere ({address or 'no holder'})"


def test_both_etcd_clusters_kept_their_members_while_the_volumes_followed_them(
    rehearsal: Rehearsal,
) -> None:
    """kops's etcd-manager keeps two etcd clusters, main and events. Each control-plane
    phase replaced one member's instance; read from etcd itself at the end, both clusters
    have the same members under the same IDs at the same peer URLs (the members' names:
    kubeshift wrote none), and from EC2 each member's two volumes, held in the source VPC
    after ``sandbox up``, are held by a running instance in the target VPC."""
    members = _stack()["kubeshift:cluster"]["control_plane"]["members"]
    assert len(rehearsal.etcd_before) == len(rehearsal.events_before) == members
    assert rehearsal.etcd_members() == rehearsal.etcd_before
    assert rehearsal.etcd_members(events=True) == rehearsal.events_before
    before = rehearsal.holders_before
    after = volume_holders(rehearsal.sandbox)
    assert sorted(after) == sorted(before) and len(before) == 2 * members
    assert {v: _side(a) for v, a in before.items()} == dict.fromkeys(before, "source")
    assert {v: _side(a) for v, a in after.items()} == dict.fromkeys(after, "target")
    records = rehearsal.kubeshift("--stack", STACK, "status", "--json").json()
    assert not [r for r in records if r["step"] == "after:etcd-peer-url"]
    backs = [r for r in records if r["step"] == "after:etcd-member-back"
             and not r["phase"].startswith("back-from-")]  # fmt: skip
    assert len(backs) == members
    assert all("main etcd" in r["message"] and "events etcd" in r["message"] for r in backs)


def test_member_2_went_back_to_the_source_vpc_under_its_id_and_on_again(
    rehearsal: Rehearsal,
) -> None:
    """Operator B's ``back --to control-plane-1`` after control-plane-2 moved member 2
    back the way it came: read right after, both etcd clusters had the same members
    under the same IDs, and member 2's two volumes were held in the source VPC again
    (member 1's in the target one, member 3's never left); then B's run moved it to the
    target VPC once more. The API record went back on the source API load balancer,
    checked in Route53, and the API probe followed it without a gap longer than its
    bound."""
    assert rehearsal.member_went_back == rehearsal.etcd_before
    assert rehearsal.events_went_back == rehearsal.events_before
    records = _records(rehearsal)
    recorded = records["back-from-control-plane-2/before:record-etcd-member"]["details"]
    expected = recorded["expectations"]
    assert (expected["main"]["name"], expected["events"]["name"]) == ("etcd-2", "etcd-events-2")
    held = rehearsal.holders_went_back
    assert held is not None
    sides = {volume: _side(address) for volume, address in held.items()}
    assert sides == {
        f"k8s.io/etcd/{etcd}={member}": "target" if member == "1" else "source"
        for etcd in ("main", "events")
        for member in ("1", "2", "3")
    }, held
    for step in ("after:etcd-member-back", "after:api-record-in-route53", "update"):
        assert records[f"back-from-control-plane-2/{step}"]["status"] == "succeeded", step
    assert records["control-plane-2/after:etcd-member-back"]["status"] == "succeeded"


def test_the_cname_api_record_moved_between_load_balancers_and_never_changed_type(
    rehearsal: Rehearsal,
) -> None:
    """The stack's API record is a CNAME (seed 001's): at every control-plane phase the
    gate found it as declared (on the source load balancer while member 1 moved, then on
    the new one; back on the source one once member 2's move was taken back), no other
    record was ever declared for it, and it is a CNAME to the new API load balancer now."""
    zone = _stack()["kubeshift:cluster"]["dns"]
    assert not zone.get("api_alias")
    records = rehearsal.kubeshift("--stack", STACK, "status", "--json").json()
    gates = {
        r["phase"]: r["message"] for r in records if r["step"] == "after:api-record-in-route53"
    }
    members = _stack()["kubeshift:cluster"]["control_plane"]["members"]
    moves = {f"control-plane-{k}" for k in range(1, members + 1)}
    assert set(gates) == moves | {"back-from-control-plane-2"}, gates
    assert all(message == "1/1 records as declared" for message in gates.values()), gates
    route53 = rehearsal.client("route53")
    sets = [
        s
        for z in route53.list_hosted_zones()["HostedZones"]
        for s in route53.list_resource_record_sets(HostedZoneId=z["Id"])["ResourceRecordSets"]
    ]
    (api,) = [s for s in sets if _dns_name(s["Name"]) == _dns_name(zone["api_record"])]
    assert api["Type"] == "CNAME", api
    balancers = rehearsal.client("elbv2").describe_load_balancers()["LoadBalancers"]
    by_dns = {_dns_name(lb["DNSName"]): lb["LoadBalancerName"] for lb in balancers}
    assert by_dns[_dns_name(api["ResourceRecords"][0]["Value"])].endswith("-api-mig"), api


PROBED = (
    "ingress-move/before:move-ingress-pods",
    "back-from-target-workers/before:drain-new-nodes",
    "drain-workers/before:drain-old-nodes",
)
"""The steps that move workloads under the availability probe."""


def test_the_probe_saw_every_configured_service_keep_a_ready_endpoint(
    rehearsal: Rehearsal,
) -> None:
    """Read from the probe's own report of each step it watched (not the steps' status
    or message): it watched the Services the stack file names, the ones the sandbox
    seeded, and none went without a ready endpoint."""
    runtime = load_stack_file(rehearsal.adoption.stack_file)["kubeshift:runtime"]
    configured = sorted(runtime["probe_services"])
    assert configured and configured == sorted(rehearsal.sandbox["probe_services"])
    reports = {
        key: record["details"]["availability"]
        for key, record in _records(rehearsal).items()
        if "availability" in (record.get("details") or {})
    }
    assert set(PROBED) <= set(reports), sorted(reports)
    assert {k: sorted(r["services"]) for k, r in reports.items()} == dict.fromkeys(
        reports, configured
    )
    assert {k: (r["zero_downtime"], (r["min_ready"] or 0) >= 1) for k, r in reports.items()} == (
        dict.fromkeys(reports, (True, True))
    )
    stalled = {
        (key, name): service["zero_intervals"]
        for key, report in reports.items()
        for name, service in report["services"].items()
        if service["zero_intervals"] or (service["min_ready"] or 0) < 1
    }
    assert stalled == {}


def test_the_api_answered_through_its_record_across_every_control_plane_phase(
    rehearsal: Rehearsal,
) -> None:
    """Read from the API probe's own record of each phase that moves the control plane or
    retires its old load balancer: it followed the record through moto (a request counted
    only while the record reached a running member whose etcd answered), was answered, and
    never went unanswered longer than its bound; ``status --phases`` reports it."""
    phases = [
        p["id"] for p in rehearsal.kubeshift("--stack", STACK, "plan", "--json").json()["phases"]
    ]
    probed = [p for p in phases if p.startswith("control-plane-")] + [
        "cleanup",
        "back-from-control-plane-2",
    ]
    records = _records(rehearsal)
    seen = {p: records[f"{p}/probe:api"] for p in probed}
    assert {p: r["status"] for p, r in seen.items()} == dict.fromkeys(probed, "succeeded")
    for phase, record in seen.items():
        report = record["details"]
        assert report["resolve"] == "route53", (phase, report)
        assert report["requests"] >= 2 and report["answered"] >= 1, (phase, report)
        assert report["longest_gap"] <= report["max_gap"], (phase, report)
    shown = rehearsal.kubeshift("--stack", STACK, "status", "--phases").stdout
    assert all(f"{p}/probe:api: API:" in shown for p in probed), shown[-3000:]


def test_every_preview_was_judged_against_the_checkpoint_and_the_engine_agreed(
    rehearsal: Rehearsal,
) -> None:
    """The sandbox's ``preview_scope: verify``: each phase's preview — the ways back's too
    — reached what it does without a judgement (every resource, or a control-plane
    phase's own targets), and the run would have stopped had the engine changed a
    resource the offline judgement against the checkpoint left out. The phases that
    change only the cluster were judged to reach a few resources (adoption reads sets in
    AWS's order, so some load balancers and groups count as changed until an update
    writes them as declared, and are targeted needlessly), target-network every one it
    creates."""
    plan = rehearsal.kubeshift("--stack", STACK, "plan", "--json").json()
    targeted = {p["id"] for p in plan["phases"] if p["id"].startswith("control-plane-")}
    records = _records(rehearsal)
    previews = {
        key.split("/")[0]: record["details"]
        for key, record in records.items()
        if key.endswith("/preview") and record["status"] == "succeeded"
    }
    # the way back is judged too (the program rendered at the phase it applies), and the
    # engine's full preview agreed with the judgement; the guard accepted each
    back = {p: d for p, d in previews.items() if p.startswith("back-from-")}
    assert back and all(d["guard"] == "accepted" for d in back.values()), back
    assert all(d["previewed"] == "every resource" for d in back.values()), back
    judged = {p: d for p, d in previews.items() if p not in back}
    assert judged and all("checkpoint" in d for d in previews.values()), previews
    reached = {p: d["previewed"] for p, d in judged.items() if p not in targeted}
    assert set(reached.values()) == {"every resource"}, reached
    assert all(judged[p]["previewed"].endswith(" targets") for p in targeted & set(judged))
    network = judged["target-network"]["judged"]
    assert network is not None and network >= 35, judged["target-network"]  # its creates
    for phase in ("ingress-nodeport", "ingress-move"):
        placed = judged[phase]["judged"]
        assert placed is not None and placed < network / 2, (phase, judged[phase])


def test_a_second_run_changes_nothing(rehearsal: Rehearsal) -> None:
    assert rehearsal.rerun.code == 0, rehearsal.rerun.stderr
    outcomes = rehearsal.rerun.json()
    assert outcomes and {o["status"] for o in outcomes} == {"skipped"}
    preview = rehearsal.kubeshift("--stack", STACK, "--json", "preview", "--phase", "cleanup")
    assert preview.code == 0, preview.stderr
    assert preview.json()["changes"] == []


def test_a_command_is_aimed_at_the_sandbox_only_by_its_env_and_says_so(
    rehearsal: Rehearsal,
) -> None:
    """With the sandbox up, a shell that did not load `kubeshift sandbox env` runs against
    the project as configured (no journal there); the loaded one says first that it is
    aimed at the sandbox, and reads the sandbox's journal."""
    plain = kubeshift(rehearsal.user_env, "--stack", STACK, "--json", "status")
    assert plain.code == 2, plain.stdout + plain.stderr
    assert "has no journal yet" in plain.stderr
    assert "sandbox" not in plain.stderr
    aimed = rehearsal.kubeshift("--stack", STACK, "--json", "status")
    assert aimed.code == 0, aimed.stderr
    assert aimed.stderr.splitlines()[0].startswith("aimed at the sandbox in ")
    assert "cleanup" in {r["phase"] for r in aimed.json()}


def test_a_hand_run_in_the_sandbox_env_sees_the_same_stack(rehearsal: Rehearsal) -> None:
    """`eval "$(kubeshift sandbox env)"` then `pulumi preview`, as an engineer runs it."""
    exports = rehearsal.kubeshift("--stack", STACK, "sandbox", "env")
    assert exports.code == 0, exports.stderr
    preview = f"pulumi preview --stack {STACK} --expect-no-changes --non-interactive"
    script = f"{exports.stdout}\n{preview}"
    proc = subprocess.run(
        ["bash", "-euc", script], env=rehearsal.env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "unchanged" in proc.stdout


def test_a_refresh_finds_no_drift(rehearsal: Rehearsal) -> None:
    """`kubeshift recover` refreshes: reading the world back must not invent changes,
    and the next preview must find nothing to do. (AWS lists a set — an interface's
    security groups — in its own order; read as a list, that was drift on every run.)"""
    exports = rehearsal.kubeshift("--stack", STACK, "sandbox", "env")

    def pulumi(command: str) -> subprocess.CompletedProcess[str]:
        line = f"pulumi {command} --stack {STACK} --non-interactive --expect-no-changes"
        return subprocess.run(
            ["bash", "-euc", f"{exports.stdout}\n{line}"],
            env=rehearsal.env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip

    refresh = pulumi("refresh --yes --skip-preview")
    assert refresh.returncode == 0, refresh.stdout[-3000:] + refresh.stderr[-3000:]
    preview = pulumi("preview")
    assert preview.returncode == 0, preview.stdout[-3000:] + preview.stderr[-3000:]


def test_a_stack_change_that_would_shrink_an_etcd_volume_is_refused_by_the_engine(
    rehearsal: Rehearsal,
) -> None:
    """The real program, under the real engine, refuses before declaring anything —
    for kubeshift's preview and for a `pulumi preview` by hand alike."""
    stack_file = Path(rehearsal.env["KUBESHIFT_PROJECT_DIR"]) / "stacks" / f"Pulumi.{STACK}.yaml"
    original = stack_file.read_text()
    document = yaml.safe_load(original)
    document["config"]["kubeshift:cluster"]["control_plane"]["etcd_volume_size"] = 1
    stack_file.write_text(yaml.safe_dump(document, sort_keys=False))
    try:
        ours = rehearsal.kubeshift("--stack", STACK, "preview", "--phase", "cleanup")
        exports = rehearsal.kubeshift("--stack", STACK, "sandbox", "env")
        by_hand = subprocess.run(
            ["bash", "-euc", f"{exports.stdout}\npulumi preview --stack {STACK} --non-interactive"],
            env=rehearsal.env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    finally:
        stack_file.write_text(original)
    assert ours.code != 0 and "Traceback" not in ours.stderr
    assert "cannot shrink" in ours.stderr and "etcd_volume_size" in ours.stderr, ours.stderr
    assert by_hand.returncode != 0 and "cannot shrink" in by_hand.stdout + by_hand.stderr


def test_sandbox_status_lists_live_processes(rehearsal: Rehearsal) -> None:
    status = rehearsal.kubeshift("sandbox", "status", "--json")
    assert status.code == 0, status.stderr
    processes = status.json()["processes"]
    assert processes and all(p["running"] for p in processes), processes
    names = " ".join(p["name"] for p in processes)
    for service in ("moto", "etcd", "kube-apiserver", "kwok"):
        assert service in names, names


def test_replace_nodes_puts_a_fresh_worker_in_a_named_ones_place_once(
    rehearsal: Rehearsal,
) -> None:
    """`kubeshift replace-nodes`, as an operator runs it after a gate named a node:
    drained, terminated through its group, a fresh node Ready; a second call skips it."""
    instances = _instances_by_id(rehearsal)
    with rehearsal.kube() as client:
        workers = {
            n.metadata.name: n.spec.provider_id.rsplit("/", 1)[-1]
            for n in CoreV1Api(client).list_node().items
            if "node-role.kubernetes.io/control-plane" not in (n.metadata.labels or {})
        }
    victim = sorted(workers)[0]
    args = ("--stack", STACK, "replace-nodes", "--phase", "cleanup", victim)
    planned = rehearsal.kubeshift(*args, "--dry-run", "--json")
    assert planned.code == 0, planned.stderr[-3000:]
    assert "would be drained and terminated" in planned.json()[0]["message"], planned.stdout
    replaced = rehearsal.kubeshift(*args, "--yes", "--json", "--timeout", "600")
    assert replaced.code == 0, replaced.stderr[-3000:]
    (outcome,) = replaced.json()
    assert (outcome["step"], outcome["status"]) == (f"action:replace-node {victim}", "succeeded")

    with rehearsal.kube() as client:
        nodes = {n.metadata.name: n for n in CoreV1Api(client).list_node().items}
    assert victim not in nodes
    fresh = set(nodes) - set(workers) - {
        n for n, node in nodes.items()
        if "node-role.kubernetes.io/control-plane" in (node.metadata.labels or {})
    }  # fmt: skip
    assert len(fresh) == 1, fresh
    (fresh_node,) = fresh
    fresh_instance = nodes[fresh_node].spec.provider_id.rsplit("/", 1)[-1]
    current = _instances_by_id(rehearsal)
    assert current[fresh_instance]["VpcId"] == instances[workers[victim]]["VpcId"]
    assert current[workers[victim]]["State"]["Name"] in {"shutting-down", "terminated"}

    again = rehearsal.kubeshift(*args, "--yes", "--json")
    assert again.code == 0 and again.json()[0]["status"] == "skipped", again.stdout


def _operators(record: dict[str, Any]) -> list[str]:
    return [e["operator"].split("@")[0] for e in record["executions"]]


def test_a_second_operator_saw_the_journal_and_ran_the_rest_from_the_bucket(
    rehearsal: Rehearsal,
) -> None:
    """The journal lives in the bucket beside the stack's state: B, with a checkout and
    a state directory of its own, sees A's runs before running anything, then runs the
    phases after the by-hand ones (and resumes its own killed run); that nothing ran
    twice is :func:`test_no_step_finished_twice_and_every_interrupted_one_finished_later`'s."""
    shown = rehearsal.second_status
    assert shown.code == 0, shown.stderr[-2000:]
    before = {f"{r['phase']}/{r['step']}": r for r in shown.json()}
    assert before["ingress-move/update"]["status"] == "succeeded"
    first = set(_operators(before["ingress-move/update"]))
    assert first and SECOND_OPERATOR not in first
    assert not any(SECOND_OPERATOR in _operators(r) for r in before.values())

    records = _records(rehearsal)
    mine = [k for k, r in records.items() if SECOND_OPERATOR in _operators(r)]
    assert "cleanup/update" in mine and "control-plane-2/update" in mine, sorted(mine)
    assert all(k.split("/")[0] not in {"baseline", "target-network"} for k in mine)
    state = Path(rehearsal.second_env["KUBESHIFT_STATE_DIR"])
    assert not list(state.parent.rglob("*.journal.json")), "no machine kept a journal of its own"
