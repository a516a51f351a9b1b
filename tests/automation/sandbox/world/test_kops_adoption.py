"""The world as kops builds it, adopted: tagged by kops's DNS name for the cluster (the
stack's ``cluster_id``); kops's instance groups in its state store, which the proposal
names from the nodes' boot script, adoption names every group kops still holds of
what it takes, and each is released under its own name."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest

from automation.adoption.discovery import discover
from automation.adoption.models import AdoptReport
from automation.adoption.stack_file import propose_stack
from automation.aws.clients import AwsAccess, AwsClients
from automation.aws.kops_state import group_claims
from automation.config.clients import StaticClients
from automation.core.errors import UserError
from automation.sandbox.provider.model import Aws
from automation.sandbox.world.build import build
from automation.sandbox.world.kops import STATE_STORE, domain
from automation.session.adoption import with_kops_claims
from tests.support.moto_fixtures import MotoServer

REGION = "us-west-2"


def test_kops_world_is_found_by_its_dns_name_and_lets_go_of_every_instance_group(
    kops_values: dict[str, Any], moto: MotoServer, tmp_path: Path
) -> None:
    """kops tags what it builds with its cluster's DNS name, not kubeshift's name: a
    stack without ``cluster_id`` is told which to set, and with it the proposal keeps
    it, so the program tags what it declares as kops did. The proposal names kops's
    state store, which holds a spec per group, and adoption names every one."""
    built = build(kops_values, Aws(REGION, moto.endpoint_url))
    groups = sorted(b.name for b in built if b.kind == "autoscaling:group")
    clients = AwsClients(AwsAccess(region=REGION))
    dns = domain("local-demo")
    vpc = clients.ec2.describe_vpcs(Filters=[{"Name": "tag-key", "Values": [
        f"kubernetes.io/cluster/{dns}"]}])["Vpcs"]  # fmt: skip
    assert len(vpc) == 1 and {"Key": "KubernetesCluster", "Value": dns} in vpc[0]["Tags"]

    unnamed = copy.deepcopy(kops_values)
    del unnamed["kubeshift:cluster"]["cluster_id"]
    with pytest.raises(UserError, match=rf"tagged as cluster {re.escape(dns)}: set "
                       r"kubeshift:cluster.cluster_id"):  # fmt: skip
        propose_stack(unnamed, tmp_path / "Pulumi.local.yaml", clients)

    proposed = propose_stack(kops_values, tmp_path / "Pulumi.local.yaml", clients)
    cluster = proposed.values["kubeshift:cluster"]
    assert (cluster["name"], cluster["cluster_id"]) == ("local-demo", dns)
    # the program tags what it tags for the cluster as kops did: no cluster tag is kept
    # but on kops's security-group rules, which kubeshift tags with none
    kept = cluster.get("kept_tags", {})
    held = {n for n, tags in kept.items() for key in tags if key.startswith("kubernetes.io/clu")}
    assert held and all("-sg-" in n for n in held), held

    store = f"s3://{STATE_STORE}/{dns}"
    assert proposed.values["kubeshift:runtime"]["kops_state"] == store
    assert any("kubeshift:runtime.kops_state names it" in n for n in proposed.proposal.notes)
    # what kops would build again: a spec per group, each naming the group the world built
    claims = group_claims(store, moto.client("s3"))
    assert sorted(name for c in claims for name in c.names) == groups
    members = {c.group for c in claims if c.role == "Master"}
    assert len(members) == 3 and all(g.startswith("master-") for g in members)
    discovery = discover(proposed.values, clients, "local")
    plan = AdoptReport(stack="local", phase=discovery.phase, outcome="planned",
                       discovery=discovery)  # fmt: skip
    named = with_kops_claims(plan, store, StaticClients(aws=clients))
    assert sorted(named.kops_claims) == sorted(c.group for c in claims)
    assert len(named.kops_release) == len(claims)
