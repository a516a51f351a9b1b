"""The whole cni-swap of ``cni-swap-example``, rehearsed through the console script.

One sandbox for the module, up only while it runs (the hook in ``conftest`` puts this
module first, so the vpc-move sandbox is not yet up): the live cluster built as kops
would have, with Weave on every node and a record per Service pointing at the load
balancer the real AWS cloud-controller-manager gave it; ``adopt`` with the proposed
stack file; then ``run --yes`` through the eight phases — the mirror cluster, the copy,
each record moved to the mirror once its Service serves there, Calico in and Weave out
on the primary, the old nodes drained under the availability probe on the mirror, the
records back, the mirror torn down — and a second ``run``. Asserted from the outside:
the journal, moto, and both clusters.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes.client import AppsV1Api, CoreV1Api

from automation.run.going_back import undo_id
from automation.sandbox.workspace import SANDBOX_DRAIN_MARGIN, SANDBOX_MIRROR_TTL, zone_name
from benchmarks.faults import world_differences
from components.contract.scenarios.cni_swap import (
    CNI_SWAP,
    COPY,
    DNS_TO_MIRROR,
    DNS_TO_PRIMARY,
)
from tests.rehearsal.conftest import (
    BACK,
    BEFORE_RUN,
    DETOUR,
    REPO,
    Look,
    StackRehearsal,
    rehearse_adopted,
    sandbox_client,
    sandbox_kube,
)
from tests.rehearsal.world import read_world

pytestmark = [pytest.mark.rehearsal, pytest.mark.cloudcontroller]  # the sandbox runs the CCM

STACK = "cni-swap-example"
MOVED = ("catalog/search", "payments/ledger", "shop/cart", "shop/web")


def _stack() -> dict[str, Any]:
    return yaml.safe_load((REPO / "stacks" / f"Pulumi.{STACK}.yaml").read_text())["config"]


@dataclass(frozen=True)
class Window:
    """Route53 and the moved Services' load balancers, read at one point of the run."""

    records: dict[str, str]
    """Route53's CNAMEs in the cluster's zone, name -> target."""
    primary: dict[str, str]
    """namespace/name -> the load balancer the cloud controller gave it on the primary."""
    mirror: dict[str, str]
    """The same on the mirror (none before the copy)."""


def _window(sandbox: dict[str, Any], *, mirrored: bool = True) -> Window:
    mirror = _load_balancers(sandbox, "mirror") if mirrored else {}
    return Window(_records(sandbox), _load_balancers(sandbox, "primary"), mirror)


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StackRehearsal]:
    """Right after adoption the run goes to copy (the world read there), on to
    dns-to-mirror and back to copy; then it stops after dns-to-mirror and after cni-swap
    to read Route53 then. (The walk through the whole mirror window, and dns-to-primary
    taken back, run in ``benchmarks/way_back.py``: ``--stack cni-swap-example``.)"""
    looks: dict[str, Look] = {
        BEFORE_RUN: lambda sandbox: _window(sandbox, mirrored=False),
        BACK: _outside,
        DETOUR: _outside,
        DNS_TO_MIRROR: _window,
        CNI_SWAP: _window,
    }
    state = tmp_path_factory.mktemp("mirror-rehearsal-state")
    with rehearse_adopted(state, STACK, looks, detour=(DNS_TO_MIRROR, COPY)) as done:
        yield done


@dataclass(frozen=True)
class Outside:
    """What the mirror window leaves behind, read from outside."""

    window: Window
    world: dict[str, Any]
    """moto's inventory, the primary's nodes and workloads (``tests.rehearsal.world``)."""
    certificates: list[str]
    mirror_namespaces: set[str]


def _outside(sandbox: dict[str, Any]) -> Outside:
    with sandbox_kube(sandbox, "primary") as primary, sandbox_kube(sandbox, "mirror") as other:
        world = read_world(lambda service: sandbox_client(sandbox, service), primary)
        namespaces = {n.metadata.name for n in CoreV1Api(other).list_namespace().items}
    return Outside(_window(sandbox, mirrored=False), world, _certificates(sandbox), namespaces)


def _certificates(sandbox: dict[str, Any]) -> list[str]:
    """The domains of the ACM certificates in moto."""
    acm = sandbox_client(sandbox, "acm")
    return sorted(c["DomainName"] for c in acm.list_certificates()["CertificateSummaryList"])


def test_records_taken_home_left_the_world_as_it_was_at_copy(mirror: StackRehearsal) -> None:
    """Right after adoption: ``run --to copy`` (the world read then), ``run --to
    dns-to-mirror``, then ``back --to copy`` — each record home once its Service served on
    the primary, checked in sync — and the world read from outside is the one read at
    copy: moto's whole inventory, Route53, the primary's nodes and workloads, the mirror's
    namespaces. The run then moved the records to the mirror again."""
    went_back = mirror.went_back
    assert went_back is not None and went_back.code == 0, went_back
    undo = undo_id(DNS_TO_MIRROR)
    steps = {(o["phase"], o["step"]): o["status"] for o in went_back.json()}
    assert {p for p, _ in steps} == {undo}, steps
    for step in ("before:services-serve-on-primary", "before:dns-to-primary", "update"):
        assert steps[(undo, step)] == "succeeded", steps
    assert steps[(undo, "after:resume-dns-writers")] == "succeeded", steps
    at_copy, back = mirror.seen[DETOUR], mirror.seen[BACK]
    assert world_differences(at_copy.world, back.world) == []
    assert back.window.records == at_copy.window.records
    assert back.mirror_namespaces == at_copy.mirror_namespaces
    assert back.certificates == at_copy.certificates
    moved = mirror.records[f"{DNS_TO_MIRROR}/before:dns-to-mirror"]
    assert [e["status"] for e in moved["executions"]] == ["succeeded", "undone", "succeeded"]


def test_the_adopted_cluster_went_through_every_phase(mirror: StackRehearsal) -> None:
    assert mirror.adopted.json()["imported"], mirror.adopted.stdout[-2000:]
    failed = {k: r["status"] for k, r in mirror.records.items() if r["status"] != "succeeded"}
    assert failed == {}
    assert mirror.records["baseline/adopt"]["status"] == "succeeded"
    phases = [r["phase"] for r in mirror.records.values()]
    assert phases[-1] == "teardown-mirror" and "cni-swap" in phases


def _records(sandbox: dict[str, Any]) -> dict[str, str]:
    """Route53's CNAMEs now, name -> target."""
    route53 = sandbox_client(sandbox, "route53")
    zone = zone_name(_stack()["kubeshift:cluster"]["dns"]["api_record"])  # made by the sandbox
    zone_id = route53.list_hosted_zones_by_name(DNSName=zone)["HostedZones"][0]["Id"]
    sets = route53.list_resource_record_sets(HostedZoneId=zone_id)["ResourceRecordSets"]
    return {
        s["Name"]: _host(s["ResourceRecords"][0]["Value"]) for s in sets if s["Type"] == "CNAME"
    }


def _host(name: str) -> str:
    return name.rstrip(".").lower()


def _load_balancers(sandbox: dict[str, Any], role: str) -> dict[str, str]:
    """namespace/name -> the load balancer the cloud controller gave the Service."""
    with sandbox_kube(sandbox, role) as api:
        core = CoreV1Api(api)
        found = {}
        for key in MOVED:
            namespace, name = key.split("/")
            ingress = core.read_namespaced_service(name, namespace).status.load_balancer.ingress
            found[key] = _host(ingress[0].hostname)
    return found


def _targets(details: dict[str, Any], side: str) -> dict[str, str]:
    return {name: _host(d[side][0].rsplit(" ", 1)[-1]) for name, d in details.items()}


def test_each_record_pointed_at_the_mirror_through_the_swap_and_came_back(
    mirror: StackRehearsal,
) -> None:
    """Read in Route53, not in kubeshift's journal: before the run each record named its
    Service's load balancer on the primary; once dns-to-mirror had run, and still once
    cni-swap had replaced the primary's nodes and CNI, the same Service's load balancer
    on the mirror; at the end the primary's again."""
    before = mirror.seen[BEFORE_RUN]
    moved, swapped = (mirror.seen[k] for k in (DNS_TO_MIRROR, CNI_SWAP))
    service_of = {lb: key for key, lb in before.primary.items()}
    names = {n: service_of[t] for n, t in before.records.items() if t in service_of}
    assert sorted(set(names.values())) == sorted(MOVED), before
    end = _window(mirror.sandbox, mirrored=False)
    assert moved.primary == swapped.primary == end.primary == before.primary
    assert set(moved.mirror.values()).isdisjoint(before.primary.values()), moved
    assert {n: moved.records.get(n) for n in names} == {
        n: moved.mirror[s] for n, s in names.items()
    }
    on_mirror = {n: swapped.mirror[s] for n, s in names.items()}
    assert {n: swapped.records.get(n) for n in names} == on_mirror
    assert {n: end.records.get(n) for n in names} == {n: before.records[n] for n in names}
    # and the journal told the same story
    to_mirror = mirror.details("dns-to-mirror/before:dns-to-mirror")
    back = mirror.details("dns-to-primary/before:dns-to-primary")
    assert (
        _targets(to_mirror, "before")
        == _targets(back, "after")
        == {n: before.records[n] for n in names}
    )
    assert _targets(to_mirror, "after") == {n: moved.records[n] for n in names}


def test_the_moved_services_kept_endpoints_on_the_mirror_while_the_primary_drained(
    mirror: StackRehearsal,
) -> None:
    availability = mirror.details("cni-swap/after:drain-old-generation")["availability"]
    assert sorted(availability["services"]) == sorted(MOVED)
    assert availability["zero_downtime"] is True
    assert all(s["min_ready"] >= 1 and not s["zero_intervals"]
               for s in availability["services"].values())  # fmt: skip


def test_the_mirror_ran_the_copies_from_its_own_registry(mirror: StackRehearsal) -> None:
    target = _stack()["kubeshift:runtime"]["mirror"]["registry_rewrites"][0]["target"]
    with mirror.kube("mirror") as api:
        deployments = AppsV1Api(api).list_deployment_for_all_namespaces().items
    copied = {f"{d.metadata.namespace}/{d.metadata.name}": d for d in deployments}
    assert sorted(copied) == sorted(MOVED)
    for deployment in copied.values():
        images = [c.image for c in deployment.spec.template.spec.containers]
        assert all(i.startswith(f"{target}/") for i in images), images


def test_the_primary_runs_calico_on_new_nodes_and_weave_is_gone(mirror: StackRehearsal) -> None:
    with mirror.kube("primary") as api:
        apps, core = AppsV1Api(api), CoreV1Api(api)
        daemonsets = {d.metadata.name for d in apps.list_namespaced_daemon_set("kube-system").items}
        nodes = core.list_node().items
    assert "calico-node" in daemonsets and "weave-net" not in daemonsets
    generations = {
        n.metadata.labels.get("kubeshift.io/generation")
        for n in nodes
        if "node-role.kubernetes.io/control-plane" not in n.metadata.labels
    }
    assert generations == {"cni"}


def test_nothing_of_the_mirror_is_left_and_its_grants_are_revoked(mirror: StackRehearsal) -> None:
    groups = mirror.client("autoscaling").describe_auto_scaling_groups()["AutoScalingGroups"]
    assert groups and not [g for g in groups if g["AutoScalingGroupName"].endswith("-mirror")]
    zones = {z["Name"] for z in mirror.client("route53").list_hosted_zones()["HostedZones"]}
    assert f"{_stack()['kubeshift:migration']['mirror']['zone_name']}." not in zones
    granted = mirror.details("mirror-cluster/after:grant-mirror-access")["grants"]
    revoked = mirror.details("teardown-mirror/before:revoke-mirror-access")["grants"]
    # "added: <dependency> <- <mirror's node group> tcp/5432", then "removed: ..."
    assert [g.split(" ", 1)[1] for g in revoked] == [g.split(" ", 1)[1] for g in granted]
    [dependency] = {g.split(" ")[1] for g in granted}
    mirrors = {g.split(" ")[3] for g in granted}
    [group] = mirror.client("ec2").describe_security_groups(GroupIds=[dependency])["SecurityGroups"]
    sources = {p["GroupId"] for rule in group["IpPermissions"] for p in rule["UserIdGroupPairs"]}
    assert sources and sources.isdisjoint(mirrors), sources  # the primary's workers only


def test_the_mirror_went_only_once_its_load_balancers_clients_could_have_left(
    mirror: StackRehearsal,
) -> None:
    """teardown-mirror's dns-drain counted from when dns-to-primary's last step finished
    (this run's journal: the stack records that phase only with teardown's own update),
    waited the records' TTL plus the margin, named one load balancer per moved Service,
    and ended before the update that deleted the mirror began."""
    drain = mirror.records["teardown-mirror/before:dns-drain"]
    assert drain["status"] == "succeeded", drain
    since = datetime.fromisoformat(drain["details"]["since"])
    moved_back = max(
        r["finished"] for key, r in mirror.records.items() if key.startswith(DNS_TO_PRIMARY + "/")
    )
    assert abs(since.timestamp() - moved_back) < 1, (since, moved_back)
    hold = SANDBOX_MIRROR_TTL + SANDBOX_DRAIN_MARGIN
    assert drain["finished"] >= since.timestamp() + hold - 1
    assert len(drain["details"]["balancers"]) == len(MOVED)
    assert mirror.records["teardown-mirror/update"]["started"] >= drain["finished"]


def test_a_second_run_changes_nothing(mirror: StackRehearsal) -> None:
    assert mirror.rerun.code == 0, mirror.rerun.stderr[-2000:]
    outcomes = mirror.rerun.json()
    assert outcomes and {o["status"] for o in outcomes} == {"skipped"}


def test_the_example_stack_names_its_calico_manifest_in_the_repository() -> None:
    manifest = _stack()["kubeshift:runtime"]["mirror"]["new_cni_manifest"]
    assert (REPO / manifest).is_file() and not Path(manifest).is_absolute()
