"""``kubeshift adopt`` refuses in sentences, and then imports nothing and writes nothing.

Discovery runs for real against moto (an account holding none, or too much, of the
cluster); the engine is the recording fake, so a refusal shows as no engine call.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from automation.adoption.models import AdoptReport
from automation.aws.clients import AwsAccess, AwsClients
from automation.config.clients import StaticClients
from automation.core.errors import UserError
from automation.session.adoption import AdoptRequest, execute_adoption
from tests.automation.fakes import FakeEngine
from tests.support.moto_fixtures import MotoServer

REPO = Path(__file__).resolve().parents[3]
STACK = "vpc-move-small"  # cluster "demo", source VPC 10.0.0.0/16


@pytest.fixture(autouse=True)
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KUBESHIFT_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


def adopt(moto: MotoServer, engine: FakeEngine, **options: bool) -> AdoptReport:
    clients = StaticClients(aws=AwsClients(AwsAccess(region=moto.region)))
    return execute_adoption(
        AdoptRequest(REPO, STACK, **options),
        engine_factory=lambda *_: engine,
        clients=clients,
    )


def test_an_account_without_the_cluster_is_refused_with_the_first_missing_piece(
    moto: MotoServer, state: Path
) -> None:
    engine = FakeEngine()
    report = adopt(moto, engine, yes=True)

    assert report.outcome == "refused"
    refusals = report.refusals
    vpc = "demo-source-network-vpc: no live VPC 10.0.0.0/16 tagged kubernetes.io/cluster/demo."
    assert vpc in refusals
    # what hangs off the VPC is skipped, not reported again
    skipped = report.discovery.skipped
    assert "demo-source-network-private-us-west-2a" in skipped
    assert not any(r.startswith("demo-source-network-private-us-west-2a") for r in refusals)
    assert all("\n" not in r for r in refusals)
    assert [name for name, _ in engine.calls if name in {"preview", "up"}] == []
    assert not (state / f"{STACK}.journal.json").exists()


def test_two_vpcs_tagged_for_the_cluster_are_ambiguous_and_nothing_is_imported(
    moto: MotoServer, state: Path
) -> None:
    ec2 = moto.client("ec2")
    tag = [{"ResourceType": "vpc", "Tags": [{"Key": "kubernetes.io/cluster/demo",
                                             "Value": "owned"}]}]  # fmt: skip
    for _ in range(2):
        ec2.create_vpc(CidrBlock="10.0.0.0/16", TagSpecifications=tag)
    engine = FakeEngine()

    report = adopt(moto, engine, yes=True)

    assert report.outcome == "refused"
    ambiguous = "demo-source-network-vpc: 2 live VPC 10.0.0.0/16 tagged kubernetes.io/cluster/demo"
    assert any(r.startswith(ambiguous) for r in report.refusals)
    assert [name for name, _ in engine.calls if name in {"preview", "up"}] == []
    assert not (state / f"{STACK}.journal.json").exists()


def test_a_stack_past_its_first_phase_is_one_sentence(
    moto: MotoServer, tmp_path: Path, state: Path
) -> None:
    project = tmp_path / "project"
    (project / "stacks").mkdir(parents=True)
    (project / "Pulumi.yaml").write_text((REPO / "Pulumi.yaml").read_text())
    text = (REPO / "stacks" / f"Pulumi.{STACK}.yaml").read_text()
    moved = text.replace("kubeshift:phase: baseline", "kubeshift:phase: target-network")
    assert moved != text
    (project / "stacks" / f"Pulumi.{STACK}.yaml").write_text(moved)
    clients = StaticClients(aws=AwsClients(AwsAccess(region=moto.region)))

    with pytest.raises(UserError, match="Adoption maps the live cluster to the first phase"):
        execute_adoption(
            AdoptRequest(project, STACK), engine_factory=lambda *_: FakeEngine(), clients=clients
        )
    assert not state.exists() or not any(state.iterdir())


def test_adoption_names_what_the_terraform_state_still_manages_and_how_to_release_it(
    moto: MotoServer, tmp_path: Path
) -> None:
    """``runtime.terraform_state``: the adopted resources Terraform still manages are
    named by their state addresses, with the command that releases them."""
    import json
    import shlex

    from automation.adoption.models import AdoptedResource, Discovery
    from automation.session.adoption import with_terraform_claims

    def resource(name: str, id_: str) -> dict[str, object]:
        return {"module": "module.k8s", "mode": "managed", "type": "aws_autoscaling_group",
                "name": name, "instances": [{"attributes": {"id": id_}}]}  # fmt: skip

    state = {"version": 4, "resources": [resource("a", "demo-nodes-a"), resource("z", "other")]}
    (tmp_path / "k8s.tfstate").write_text(json.dumps(state))
    adopted = [
        AdoptedResource(
            type="aws:autoscaling/group:Group",
            name="demo-nodes-us-west-2a",
            id="demo-nodes-a",
            import_id="demo-nodes-a",
        ),
        AdoptedResource(
            type="aws:ec2/vpc:Vpc",
            name="demo-source-network-vpc",
            id="vpc-0abc",
            import_id="vpc-0abc",
        ),
    ]
    discovery = Discovery(stack=STACK, cluster="demo", phase="baseline", resources=adopted,
                          problems=[], skipped=[], unmodelled=[])  # fmt: skip
    plan = AdoptReport(stack=STACK, phase="baseline", outcome="planned", discovery=discovery)
    clients = StaticClients(aws=AwsClients(AwsAccess(region=moto.region)))

    named = with_terraform_claims(plan, str(tmp_path / "k8s.tfstate"), clients)

    assert named.terraform_claims == ["module.k8s.aws_autoscaling_group.a"]
    (command,) = named.terraform_release
    assert shlex.split(command) == [
        "terraform",
        "state",
        "rm",
        "module.k8s.aws_autoscaling_group.a",
    ]
