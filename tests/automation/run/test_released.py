"""A phase does not start while Terraform or kops still manages a resource it would
change; once released, it runs. The state is a real v4 file, kops's store moto's S3; the
run is the real Runner."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from automation.aws.clients import AwsAccess, AwsClients
from automation.aws.kops_state import group_claims, move_aside
from automation.config.clients import StaticClients
from automation.core.errors import PreconditionFailed
from automation.model.phase import Phase
from automation.review.diff import PhaseDiff, ResourceKey
from automation.run.journal import Journal
from automation.run.released import release_check
from automation.run.runner import Runner
from tests.automation.fakes import Counter, FakeEngine, small_scenario
from tests.automation.run.test_runner import make_context
from tests.support.moto_fixtures import MotoServer

ASG = "aws:autoscaling/group:Group"
TG = "aws:lb/targetGroup:TargetGroup"
STORE = "s3://kops/prod.k8s.local"
TG_ARN = "arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/k8s-ingress/6d0ecf83"


def _urn(type_: str, name: str) -> str:
    return f"urn:pulumi:s::kubeshift::{type_}::{name}"


DEPLOYMENT = {
    "resources": [
        {"urn": _urn(ASG, "workers-a"), "type": ASG, "id": "k8s-prod-workers-a", "outputs": {}},
        {"urn": _urn(TG, "ingress"), "type": TG, "id": TG_ARN, "outputs": {"arn": TG_ARN}},
    ]
}


def _state(tmp_path: Path, *, workers: bool = True) -> Path:
    def resource(module: str, type_: str, name: str, **attributes: str) -> dict[str, Any]:
        instance = {"schema_version": 0, "attributes": attributes}
        return {"module": module, "mode": "managed", "type": type_, "name": name,
                "provider": "provider", "instances": [instance]}  # fmt: skip

    resources = [resource('module.workers["a"]', "aws_autoscaling_group", "this",
                          id="k8s-prod-workers-a")] if workers else []  # fmt: skip
    resources.append(resource("module.ingress", "aws_lb_target_group", "tg", id=TG_ARN, arn=TG_ARN))
    path = tmp_path / "k8s.tfstate"
    path.write_text(json.dumps({"version": 4, "serial": 1, "resources": resources}))
    return path


class Renders:
    """Each phase's difference from the one before, as ``PhaseRenders.entering`` gives it."""

    def __init__(self, diffs: dict[str, PhaseDiff]) -> None:
        self.diffs = diffs
        self.asked: list[str] = []

    def entering(self, phase: str) -> PhaseDiff:
        self.asked.append(phase)
        return self.diffs.get(phase, PhaseDiff())


def _check(location: str, renders: Renders, engine: FakeEngine) -> Callable[[Phase], None]:
    """The check of a local state (its S3 client never made)."""
    check = release_check(location, None, StaticClients(), renders, engine)
    assert check is not None
    return check


def test_without_a_terraform_state_nothing_is_checked() -> None:
    assert release_check(None, None, StaticClients(), Renders({}), FakeEngine()) is None


def _drain_changes_the_workers() -> Renders:
    return Renders(
        {"drain": PhaseDiff(changed={ResourceKey(ASG, "workers-a"): ["desiredCapacity"]})}
    )


def test_a_phase_that_changes_what_terraform_manages_refuses_before_any_step(
    tmp_path: Path,
) -> None:
    counter, engine = Counter(), FakeEngine()
    engine.deployment = DEPLOYMENT
    scenario = small_scenario(counter)
    check = _check(str(_state(tmp_path)), _drain_changes_the_workers(), engine)
    runner = Runner(engine, Journal(tmp_path / "s.journal.json", "s"), make_context,
                    confirm=lambda _q: True, sleep=lambda _s: None, refuse=check)  # fmt: skip
    with pytest.raises(PreconditionFailed) as refused:
        runner.run(scenario.phases)
    said = str(refused.value)
    assert said.startswith("drain would change 1 resource(s) Terraform still manages")
    command = said.split("`")[1]
    assert shlex.split(command) == [
        "terraform", "state", "rm", 'module.workers["a"].aws_autoscaling_group.this'
    ]  # fmt: skip
    assert engine.ups() == ["network", "workers"], "nothing of drain ran"
    assert counter.runs.get("drain", 0) == 0

    # released (the command run), the same run goes on
    _state(tmp_path, workers=False)
    runner.run(scenario.phases)
    assert engine.ups() == ["network", "workers", "drain"]


def test_only_what_a_forward_phase_changes_is_checked(tmp_path: Path) -> None:
    engine = FakeEngine()
    engine.deployment = DEPLOYMENT
    renders = Renders({
        "adds": PhaseDiff(added=[ResourceKey(ASG, "workers-b")]),
        "moves": PhaseDiff(moved={ResourceKey(TG, "ingress-mig"): ResourceKey(TG, "ingress")}),
    })  # fmt: skip
    # a state that is never read while nothing existing changes: a missing file is fine
    missing = _check(str(tmp_path / "none.tfstate"), renders, engine)
    missing(Phase(id="adds", summary="adds a group"))
    missing(Phase(id="back-from-x", summary="undo", program_phase="moves"))
    assert renders.asked == ["adds"], "a way back is not checked"

    check = _check(str(_state(tmp_path)), renders, engine)
    with pytest.raises(PreconditionFailed, match=r"module\.ingress\.aws_lb_target_group\.tg"):
        check(Phase(id="moves", summary="moves the target group"))  # matched by its ARN


def test_a_phase_waits_until_kops_lets_go_of_the_instance_groups_it_would_change(
    moto: MotoServer, tmp_path: Path
) -> None:
    """kops's state store (``runtime.kops_state``) holds the group's instance group: the
    phase refuses, naming it and the move that releases it; once moved, the run goes on."""
    s3 = moto.client("s3")
    s3.create_bucket(Bucket="kops", CreateBucketConfiguration={"LocationConstraint": moto.region})
    spec = {"metadata": {"name": "workers-a"}, "spec": {"role": "Node"}}
    s3.put_object(Bucket="kops", Key="prod.k8s.local/instancegroup/workers-a",
                  Body=yaml.safe_dump(spec).encode())  # fmt: skip
    counter, engine = Counter(), FakeEngine()
    engine.deployment = {"resources": [
        {"urn": _urn(ASG, "workers-a"), "type": ASG, "id": "workers-a.prod.k8s.local"}
    ]}  # fmt: skip
    clients = StaticClients(aws=AwsClients(AwsAccess(region=moto.region)))
    check = release_check(None, STORE, clients, _drain_changes_the_workers(), engine)
    assert check is not None
    runner = Runner(engine, Journal(tmp_path / "s.journal.json", "s"), make_context,
                    confirm=lambda _q: True, sleep=lambda _s: None, refuse=check)  # fmt: skip
    scenario = small_scenario(counter)
    with pytest.raises(PreconditionFailed) as refused:
        runner.run(scenario.phases)
    said = str(refused.value)
    assert "instance group(s) kops's state store still holds (workers-a;" in said
    assert shlex.split(said.split("`")[3]) == [
        "aws", "s3", "mv", f"{STORE}/instancegroup/workers-a",
        f"{STORE}/kubeshift-released/instancegroup/workers-a",
    ]  # fmt: skip
    assert engine.ups() == ["network", "workers"] and counter.runs.get("drain", 0) == 0

    move_aside(STORE, group_claims(STORE, s3), s3)  # `kubeshift release --yes`
    runner.run(scenario.phases)
    assert engine.ups() == ["network", "workers", "drain"]
