"""Clusters whose names reach what AWS allows, with pools split per instance type, AZ
and capacity type (kops's instance groups named after all three): the world kops
would build, ``adopt --write-config``'s proposal validates, and every resource the
program declares is found under the name it runs with (Hypothesis over the names'
lengths, derandomized; each example builds and reads a world in moto, so two are
drawn beside the name the issue met (lengths 20, 21, 27, 35 and 40 passed when seven
were drawn); the names' own properties are drawn by the hundred in
tests/components/test_naming_properties.py)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from automation.adoption.discovery import discover
from automation.adoption.stack_file import propose_stack
from automation.aws.clients import AwsAccess, AwsClients
from automation.sandbox.provider.model import Aws
from automation.sandbox.world.build import build
from automation.sandbox.world.kops import load_balancer_name
from components.contract.checks import CLUSTER_NAME_MAX
from components.contract.loading import load_config
from tests.support.moto_fixtures import MotoServer

REGION = "us-west-2"
LONG = st.from_regex(rf"[a-z][a-z0-9-]{{18,{CLUSTER_NAME_MAX - 2}}}[a-z0-9]", fullmatch=True)
"""20 to 40 characters: load balancers and target groups (32) cut each name kubeshift
gives, and so does kops (``api-<cluster>-<hash>``)."""


def _world(values: dict[str, Any], moto: MotoServer, cluster: str) -> dict[str, Any]:
    """``values`` renamed ``cluster`` (kops's name for it ``<cluster>.k8s.local``), its
    pools split per type, AZ and capacity, built in a fresh moto."""
    stack = copy.deepcopy(values)
    block = stack["kubeshift:cluster"]
    block["name"], block["cluster_id"] = cluster, f"{cluster}.k8s.local"
    for pool in block["worker_pools"]:
        pool["group_per"] = "type-zone-capacity"
    moto.reset()
    route53 = moto.client("route53")
    zone = route53.create_hosted_zone(Name="local-demo.example.internal", CallerReference=cluster)
    block["dns"]["zone_id"] = zone["HostedZone"]["Id"].rsplit("/", 1)[-1]
    build(stack, Aws(REGION, moto.endpoint_url))
    return stack


@settings(max_examples=2, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cluster=LONG)
@example(cluster="analytics-prod-eu-central-1")  # 27 characters, as issue 47 met it
def test_a_long_named_cluster_split_per_type_zone_and_capacity_is_adopted_as_it_runs(
    kops_values: dict[str, Any], moto: MotoServer, tmp_path: Path, cluster: str
) -> None:
    stack = _world(kops_values, moto, cluster)
    clients = AwsClients(AwsAccess(region=REGION))
    proposed = propose_stack(stack, tmp_path / "Pulumi.local.yaml", clients)
    assert proposed.proposal.problems == []
    load_config(proposed.values)  # the proposal is a stack kubeshift takes
    pools = proposed.values["kubeshift:cluster"]["worker_pools"]
    assert {p.get("group_per", "type-zone-capacity") for p in pools} == {"type-zone-capacity"}
    assert proposed.groups == 2 * 2 * 2 + 3  # 2 types x 2 AZs x 2 capacities, 3 members
    names = proposed.values["kubeshift:cluster"]["names"]
    balancing = [n for k, n in names.items() if k.startswith(("load-balancer:", "target-group:"))]
    assert balancing and all(len(name) <= 32 for name in balancing)
    # the one balancer kops built is the API's, kept under the name kops cut for it
    kept = [n for k, n in names.items() if k.startswith("load-balancer:")]
    assert kept == [load_balancer_name("api", cluster, f"api.{cluster}.k8s.local")]
    assert proposed.values["kubeshift:cluster"]["kept_tags"]  # mapped, so tags were kept
    # adopting it: every resource the program declares is found under its live name
    named = discover(proposed.values, clients, "local")
    assert named.problems == [] and named.skipped == []
