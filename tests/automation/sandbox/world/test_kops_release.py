"""The world kops built keeps kops's instance groups in its state store; the proposal
names the store from the nodes' boot script, adoption names every group kops still
holds of what it takes, and each is released under its own name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from automation.adoption.discovery import discover
from automation.adoption.models import AdoptReport
from automation.adoption.stack_file import propose_stack
from automation.aws.clients import AwsAccess, AwsClients
from automation.aws.kops_state import group_claims
from automation.config.clients import StaticClients
from automation.sandbox.provider.model import Aws
from automation.sandbox.world.build import build
from automation.sandbox.world.kops import STATE_STORE, domain
from automation.session.adoption import with_kops_claims
from tests.support.moto_fixtures import MotoServer

REGION = "us-west-2"


def test_adoption_names_every_instance_group_kops_still_holds(
    kops_values: dict[str, Any], moto: MotoServer, tmp_path: Path
) -> None:
    built = build(kops_values, Aws(REGION, moto.endpoint_url))
    groups = sorted(b.name for b in built if b.kind == "autoscaling:group")
    clients = AwsClients(AwsAccess(region=REGION))

    proposed = propose_stack(kops_values, tmp_path / "Pulumi.local.yaml", clients)
    store = f"s3://{STATE_STORE}/{domain('local-demo')}"
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
