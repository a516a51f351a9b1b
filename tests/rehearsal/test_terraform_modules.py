"""vpc-move of a cluster as seed 001's Terraform modules built it, rehearsed through the
console script: ``sandbox up --built-by terraform-modules`` (8 worker groups, one
launch template each; members attaching their etcd volume and fixed interface by id;
nothing tagged for kops or kubeshift; the API record a CNAME to the API load balancer;
Terraform's state beside it), ``adopt --write-config`` taken as the stack file,
``adopt --yes --keep-live``, ``run`` refused while Terraform's state still manages what
was adopted, the ``terraform state rm`` adopt printed, then ``run --yes`` to the end and a
second ``run``. Asserted from the outside: the journal, moto, etcd itself.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from tests.rehearsal.conftest import (
    BEFORE_RUN,
    REPO,
    StackRehearsal,
    etcd_members,
    rehearse_adopted,
    sandbox_client,
)
from tests.support.terraform_cli import instance_address

pytestmark = [pytest.mark.rehearsal, pytest.mark.own_sandbox]  # the scenarios shard

STACK = "local"
FIRST_MEMBER_MOVED = "control-plane-1"
END = "end"


def _stack() -> dict[str, Any]:
    return yaml.safe_load((REPO / "stacks" / f"Pulumi.{STACK}.yaml").read_text())["config"]


def _api_records(sandbox: dict[str, Any]) -> list[dict[str, Any]]:
    """Every record set at the API's name, read in moto's Route53."""
    route53 = sandbox_client(sandbox, "route53")
    name = _stack()["kubeshift:cluster"]["dns"]["api_record"].rstrip(".") + "."
    found = []
    for zone in route53.list_hosted_zones()["HostedZones"]:
        sets = route53.list_resource_record_sets(HostedZoneId=zone["Id"])["ResourceRecordSets"]
        found += [s for s in sets if s["Name"] == name]
    return found


def _api_balancers(sandbox: dict[str, Any]) -> dict[str, str]:
    """DNS name -> VPC of each load balancer."""
    elbv2 = sandbox_client(sandbox, "elbv2")
    return {b["DNSName"]: b["VpcId"] for b in elbv2.describe_load_balancers()["LoadBalancers"]}


def _look(sandbox: dict[str, Any]) -> dict[str, Any]:
    return {
        "etcd": etcd_members(sandbox),
        "api": _api_records(sandbox),
        "balancers": _api_balancers(sandbox),
    }


@pytest.fixture(scope="module")
def modules(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StackRehearsal]:
    state = tmp_path_factory.mktemp("modules-rehearsal-state")
    looks = {BEFORE_RUN: _look, FIRST_MEMBER_MOVED: _look}
    with rehearse_adopted(state, STACK, looks, built_by="terraform-modules") as done:
        done.seen[END] = _look(done.sandbox)
        done.seen["state"] = state
        yield done


def test_the_proposal_adopts_with_nothing_left_to_differ(modules: StackRehearsal) -> None:
    adopted = modules.adopted.json()
    assert adopted["imported"] and adopted["outcome"] == "adopted", adopted["message"]
    assert "previews no change" in adopted["message"]
    assert adopted["added"] == []  # nothing the modules lacked had to be made beside them
    proposed = yaml.safe_load((modules.seen["state"] / "proposed.yaml").read_text())
    cluster = proposed["config"]["kubeshift:cluster"]
    assert cluster["legacy_tags"] is False and cluster["autoscaler_tags"] is False
    assert cluster["own_tags"] is False
    assert [p["template_per"] for p in cluster["worker_pools"]] == ["group"]


def test_terraform_held_the_run_until_its_state_let_go(modules: StackRehearsal) -> None:
    """Right after adoption Terraform's state still managed everything adopted: the run
    refused before any step, in one sentence naming the release; after the ``terraform
    state rm`` adopt printed, the state holds none of what was adopted."""
    held = modules.held
    assert held is not None and held.code != 0
    message = held.json()["message"] if held.stdout.strip().startswith("{") else held.stderr
    assert "terraform state rm" in message and "Traceback" not in held.stderr
    released = set(modules.adopted.json()["terraform_claims"])  # addresses
    document = json.loads((modules.seen["state"] / "sandbox" / "terraform.tfstate").read_text())
    left = {
        instance_address(resource, instance)
        for resource in document["resources"]
        for instance in resource["instances"]
    }
    assert released and not released & left


def test_every_phase_ran_once_and_a_second_run_found_nothing_to_do(
    modules: StackRehearsal,
) -> None:
    failed = {k: r["status"] for k, r in modules.records.items() if r["status"] != "succeeded"}
    assert failed == {}
    phases = list(dict.fromkeys(r["phase"] for r in modules.records.values()))
    assert phases[0] == "baseline" and phases[-1] == "cleanup"
    assert modules.rerun.code == 0


def _host(url: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    return ipaddress.ip_address(urlsplit(url).hostname or "")


def test_the_members_moved_under_their_ids_one_at_a_time(modules: StackRehearsal) -> None:
    """Read from etcd itself: the same members before, after member 1's move and at the
    end; member 1 alone at its target address after its phase, every member at the end.
    Each moved member's kept boot script attached the interface it moved to."""
    plan = modules.sandbox["etcd"]
    source, target = (ipaddress.ip_network(r) for r in plan["address_map"].values())
    before = modules.seen[BEFORE_RUN]["etcd"]
    first = modules.seen[FIRST_MEMBER_MOVED]["etcd"]
    after = modules.seen[END]["etcd"]
    assert len(before) == _stack()["kubeshift:cluster"]["control_plane"]["members"]
    assert set(before) == set(first) == set(after)
    assert all(_host(u) in source for urls in before.values() for u in urls)
    moved = [i for i, urls in first.items() if all(_host(u) in target for u in urls)]
    assert len(moved) == 1
    assert all(_host(u) in target for urls in after.values() for u in urls)


def test_the_cname_api_record_followed_the_api_load_balancer(modules: StackRehearsal) -> None:
    """seed 001's API record is a CNAME to the API load balancer: one record, a CNAME, on
    the source VPC's balancer when adopted and on the target VPC's at the end."""
    target_cidr = _stack()["kubeshift:migration"]["target_network"]["cidr"]
    ec2 = modules.client("ec2")
    vpcs = {v["VpcId"]: v["CidrBlock"] for v in ec2.describe_vpcs()["Vpcs"]}
    sides = []
    for key in (BEFORE_RUN, FIRST_MEMBER_MOVED, END):
        seen = modules.seen[key]
        (record,) = seen["api"]
        assert record["Type"] == "CNAME", record
        (value,) = [r["Value"].rstrip(".") for r in record["ResourceRecords"]]
        vpc = seen["balancers"][value]
        sides.append("target" if vpcs.get(vpc) == target_cidr else "source")
    assert sides[0] == "source" and sides[-1] == "target", sides
