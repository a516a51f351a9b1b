"""``kubeshift release``: the instance groups kops's state store holds of what the stack
took are shown, moved aside once confirmed, and not moved twice; the others stay."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from automation.aws.clients import AwsAccess, AwsClients
from automation.aws.kops_state import group_claims, move_aside
from automation.config.clients import StaticClients
from automation.core.errors import UserError
from automation.session.release import release
from tests.automation.fakes import FakeEngine
from tests.support.moto_fixtures import MotoServer

REPO = Path(__file__).resolve().parents[3]
STACK = "vpc-move-small"
STORE = "s3://kops/demo.k8s.local"
ASG = "aws:autoscaling/group:Group"


def _project(tmp_path: Path, runtime: dict[str, Any]) -> Path:
    project = tmp_path / "project"
    (project / "stacks").mkdir(parents=True)
    (project / "Pulumi.yaml").write_text((REPO / "Pulumi.yaml").read_text())
    values = yaml.safe_load((REPO / "stacks" / f"Pulumi.{STACK}.yaml").read_text())
    values["config"]["kubeshift:runtime"] = {**values["config"].get("kubeshift:runtime", {}),
                                             **runtime}  # fmt: skip
    (project / "stacks" / f"Pulumi.{STACK}.yaml").write_text(yaml.safe_dump(values))
    return project


def _store(moto: MotoServer) -> Any:
    s3 = moto.client("s3")
    s3.create_bucket(Bucket="kops", CreateBucketConfiguration={"LocationConstraint": moto.region})
    for group in ("nodes-a", "bastions"):
        spec = {"metadata": {"name": group}, "spec": {"role": "Node"}}
        s3.put_object(Bucket="kops", Key=f"demo.k8s.local/instancegroup/{group}",
                      Body=yaml.safe_dump(spec).encode())  # fmt: skip
    return s3


def _engine() -> FakeEngine:
    engine = FakeEngine()
    urn = f"urn:pulumi:s::kubeshift::{ASG}::workers-a"
    engine.deployment = {"resources": [{"urn": urn, "type": ASG, "id": "nodes-a.demo.k8s.local"}]}
    return engine


def test_the_groups_the_stack_took_are_moved_aside_once_confirmed(
    moto: MotoServer, tmp_path: Path
) -> None:
    s3 = _store(moto)
    project = _project(tmp_path, {"kops_state": STORE})
    clients = StaticClients(aws=AwsClients(AwsAccess(region=moto.region)))

    def run(**options: Any) -> Any:
        return release(project, STACK, clients=clients, engine_factory=lambda *_: _engine(),
                       **options)  # fmt: skip

    shown = run(dry_run=True, confirm=None)
    assert shown.groups == ["nodes-a"] and shown.moved == []  # bastions is not the stack's
    assert shown.commands[0].startswith(f"aws s3 mv {STORE}/instancegroup/nodes-a ")
    with pytest.raises(UserError, match=r"confirm with --yes.*Nothing was moved\."):
        run(dry_run=False, confirm=None)
    asked: list[str] = []
    done = run(dry_run=False, confirm=lambda q: asked.append(q) or True)
    assert done.moved == ["nodes-a"] and "(nodes-a)?" in asked[0]
    left = s3.list_objects_v2(Bucket="kops", Prefix="demo.k8s.local/")["Contents"]
    assert sorted(o["Key"] for o in left) == [
        "demo.k8s.local/instancegroup/bastions",
        "demo.k8s.local/kubeshift-released/instancegroup/nodes-a",
    ]
    again = run(dry_run=False, confirm=lambda q: asked.append(q) or True)
    assert again.groups == [] and again.moved == [] and len(asked) == 1


def test_a_stack_that_names_no_kops_store_is_one_sentence(moto: MotoServer, tmp_path: Path) -> None:
    project = _project(tmp_path, {})
    with pytest.raises(UserError, match=r"names no kops state store .*terraform state rm"):
        release(project, STACK, dry_run=True, confirm=None, engine_factory=lambda *_: _engine())


def test_hooks_before_a_phase_wait_until_kops_lets_go_of_its_groups(
    moto: MotoServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``hooks drain-workers before`` (whose update changes the old worker groups) is
    refused while kops's store holds one of them, before any step or record; released,
    the same command goes on to its steps."""
    from automation.core.errors import PreconditionFailed
    from automation.session.hooks import HooksRequest, execute_hooks
    from tests.automation.session.test_hooks import finished

    monkeypatch.setenv("KUBESHIFT_STATE_DIR", str(tmp_path / "state"))
    s3 = _store(moto)
    project = _project(tmp_path, {"kops_state": STORE})
    group = "demo-workers-general-m5-large-us-west-2b-on-demand"  # a logical name: the render's
    earlier = ("baseline", "target-network", "shared-resources", "ingress-nodeport",
               "target-workers", "dns-cutover", "ingress-move")  # fmt: skip
    engine = FakeEngine(progress=finished(*earlier))
    engine.deployment = {"resources": [{
        "urn": f"urn:pulumi:s::kubeshift::{ASG}::{group}", "type": ASG,
        "id": "nodes-a.demo.k8s.local",
    }]}  # fmt: skip
    clients = StaticClients(aws=AwsClients(AwsAccess(region=moto.region)))
    request = HooksRequest(project, STACK, "drain-workers", "before", yes=True)

    with pytest.raises(PreconditionFailed, match=r"kops's state store still holds \(nodes-a;"):
        execute_hooks(request, engine_factory=lambda *_: engine, clients=clients)
    assert [name for name, _ in engine.calls if name in {"up", "record"}] == []

    move_aside(STORE, group_claims(STORE, s3), s3)
    # released: past the check, its first step asks for the cluster (none in this test)
    with pytest.raises(UserError, match=r"No Kubernetes client for cluster 'primary'"):
        execute_hooks(request, engine_factory=lambda *_: engine, clients=clients)
