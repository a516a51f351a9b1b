"""Target-group health gate against moto (real registrations, real DescribeTargetHealth)."""

from __future__ import annotations

import pytest

from automation.aws.clients import AwsClients
from automation.aws.targets import short_tg_name, targets_pending, wait_targets_healthy
from automation.core.errors import GateTimeoutError
from automation.core.progress import NullReporter
from automation.core.waiting import Pending
from tests.support.moto_patches import override_target_health
from tests.support.moto_world import make_network, make_target_group, run_instances

UNHEALTHY = ("unhealthy", "Target.ResponseCodeMismatch", "Health checks failed with codes [502]")


@pytest.fixture
def group(aws: AwsClients) -> tuple[str, list[str]]:
    net = make_network(aws.ec2)
    ids = [i["InstanceId"] for i in run_instances(aws.ec2, net, 3)]
    return make_target_group(aws.elbv2, net.vpc_id, "web-new", ids), ids


@pytest.mark.moto
def test_registered_running_targets_are_healthy(
    aws: AwsClients, group: tuple[str, list[str]]
) -> None:
    arn, ids = group
    assert targets_pending(aws.elbv2, [arn]).done
    [health] = wait_targets_healthy(aws.elbv2, [arn], timeout=1, interval=0.1)
    assert sorted(t.target_id for t in health.healthy) == sorted(ids)


@pytest.mark.moto
def test_empty_group_is_pending(aws: AwsClients) -> None:
    net = make_network(aws.ec2)
    arn = make_target_group(aws.elbv2, net.vpc_id, "empty", [])
    assert targets_pending(aws.elbv2, [arn]).items == ("empty: no targets registered",)


@pytest.mark.moto
def test_stopped_instance_is_reported_with_its_reason(
    aws: AwsClients, group: tuple[str, list[str]]
) -> None:
    """moto itself answers ``unused``/``Target.InvalidState`` for a stopped instance."""
    arn, ids = group
    aws.ec2.stop_instances(InstanceIds=[ids[0]])
    pending = targets_pending(aws.elbv2, [arn])
    assert pending.items == (f"web-new {ids[0]}:80 unused (Target.InvalidState)",)
    assert targets_pending(aws.elbv2, [arn], min_healthy=2).done


@pytest.mark.moto
@pytest.mark.parametrize(
    ("min_healthy", "done"),
    [(None, False), (1, True), (2, True), (3, False)],
    ids=["all", "at-least-1", "at-least-2", "at-least-3"],
)
def test_at_least_n_healthy(
    aws: AwsClients,
    group: tuple[str, list[str]],
    monkeypatch: pytest.MonkeyPatch,
    min_healthy: int | None,
    done: bool,
) -> None:
    """Unhealthy state injected by patching moto's in-process ELBv2 backend."""
    arn, ids = group
    override_target_health(monkeypatch, {ids[0]: UNHEALTHY})
    pending = targets_pending(aws.elbv2, [arn], min_healthy=min_healthy)
    assert pending.done is done
    if not done:
        assert f"web-new {ids[0]}:80 unhealthy (Target.ResponseCodeMismatch)" in pending.items


@pytest.mark.moto
def test_wait_reports_pending_then_succeeds(
    aws: AwsClients, group: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``initial`` then healthy: moto's backend patched, the override lifted on the 3rd poll."""
    arn, ids = group
    overrides = override_target_health(
        monkeypatch, {ids[1]: ("initial", "Elb.RegistrationInProgress", "")}
    )
    seen: list[tuple[str, ...]] = []

    class Recorder(NullReporter):
        def on_wait(self, what: str, status: Pending, remaining: float) -> None:
            seen.append(status.items)
            if len(seen) == 2:
                overrides.clear()

    wait_targets_healthy(
        aws.elbv2, [arn], timeout=30, interval=0.01, reporter=Recorder(), sleep=lambda _: None
    )
    assert seen[0] == (f"web-new {ids[1]}:80 initial (Elb.RegistrationInProgress)",)
    assert seen[-1] == ()


@pytest.mark.moto
def test_wait_times_out_naming_unhealthy_targets(
    aws: AwsClients, group: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Draining target injected by patching moto's in-process ELBv2 backend."""
    arn, ids = group
    override_target_health(
        monkeypatch, {ids[2]: ("draining", "Target.DeregistrationInProgress", "")}
    )
    with pytest.raises(GateTimeoutError, match=rf"still pending web-new {ids[2]}:80 draining"):
        wait_targets_healthy(aws.elbv2, [arn], timeout=0.05, interval=0.01)


@pytest.mark.parametrize(
    ("arn", "name"),
    [
        ("arn:aws:elasticloadbalancing:eu-west-1:1:targetgroup/web-new/73e2d6bc", "web-new"),
        ("not-an-arn", "not-an-arn"),
    ],
    ids=["arn", "other"],
)
def test_short_tg_name(arn: str, name: str) -> None:
    assert short_tg_name(arn) == name
