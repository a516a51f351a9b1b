"""The DNS drain on moto: the TTL and margin since the move, then CloudWatch's traffic."""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
from typing import Any

import pytest

from automation.aws.clients import AwsAccess, AwsClients
from automation.config.clients import StaticClients
from automation.config.gate_settings import DnsDrainSettings
from automation.config.settings import RuntimeSettings
from automation.core.errors import GateTimeoutError
from automation.model.context import HookContext
from automation.model.phase import HookResult
from automation.steps.dns_drain import Drain, drain_dns
from tests.support.moto_fixtures import MotoServer
from tests.support.moto_world import make_network

pytestmark = pytest.mark.moto

MOVED_IN = "dns-cutover"


@pytest.fixture
def aws(moto: MotoServer) -> AwsClients:
    return AwsClients(AwsAccess(region=moto.region, endpoint_url=moto.endpoint_url))


@pytest.fixture
def old_lb(aws: AwsClients) -> dict[str, Any]:
    net = make_network(aws.ec2, subnet="10.0.1.0/24")
    made = aws.elbv2.create_load_balancer(Name="web-old", Subnets=[net.subnet_id], Type="network")
    return dict(made["LoadBalancers"][0])


def _context(
    aws: AwsClients, *, moved: dt.datetime | None, margin: float, dry_run: bool = False, **more: Any
) -> HookContext:
    marks = [] if moved is None else [
        {"phase": MOVED_IN, "milestone": "after", "by": "t", "at": moved.isoformat()}
    ]  # fmt: skip
    return HookContext(
        stack="test",
        scenario="vpc-move",
        phase="retire-old-workers",
        clients=StaticClients(aws=aws),
        settings=RuntimeSettings(dns_drain=DnsDrainSettings(margin=margin, **more)),
        outputs={"progress": {"marks": marks}},
        dry_run=dry_run,
    )


def _timed(ctx: HookContext, drain: Drain) -> tuple[float, HookResult]:
    began = time.monotonic()
    result = drain_dns(ctx, drain)
    return time.monotonic() - began, result


def test_a_move_longer_ago_than_ttl_and_margin_waits_for_nothing(
    aws: AwsClients, old_lb: dict[str, Any]
) -> None:
    an_hour_ago = dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)
    ctx = _context(aws, moved=an_hour_ago, margin=60)
    _, result = _timed(ctx, Drain(MOVED_IN, 300, [old_lb["DNSName"]]))
    assert result.details["held"] == 0  # no TTL wait left: the hour is past TTL + margin
    assert "since dns-cutover finished" in result.message and "web-old" in result.message


def test_a_fresh_move_waits_out_ttl_plus_margin_from_its_mark(
    aws: AwsClients, old_lb: dict[str, Any]
) -> None:
    ctx = _context(aws, moved=dt.datetime.now(dt.UTC), margin=3)
    waited, result = _timed(ctx, Drain(MOVED_IN, 2, [old_lb["DNSName"]]))
    assert 0 < result.details["held"] <= 5  # 5 s from the mark, a moment before the step
    assert waited >= result.details["held"]


def test_without_a_recorded_time_the_wait_starts_now(
    aws: AwsClients, old_lb: dict[str, Any]
) -> None:
    ctx = _context(aws, moved=None, margin=0)
    waited, result = _timed(ctx, Drain(MOVED_IN, 2, [old_lb["DNSName"]]))
    assert result.details["held"] == 2 and waited >= 2
    assert "no time recorded" in result.message


def test_traffic_still_arriving_fails_at_the_deadline_naming_the_load_balancer(
    aws: AwsClients, old_lb: dict[str, Any]
) -> None:
    dimension = old_lb["LoadBalancerArn"].split(":loadbalancer/")[1]
    aws.cloudwatch.put_metric_data(
        Namespace="AWS/NetworkELB",
        MetricData=[{
            "MetricName": "NewFlowCount",
            "Dimensions": [{"Name": "LoadBalancer", "Value": dimension}],
            "Timestamp": dt.datetime.now(dt.UTC) - dt.timedelta(seconds=30),
            "Value": 5,
        }],
    )  # fmt: skip
    an_hour_ago = dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)
    ctx = _context(aws, moved=an_hour_ago, margin=0, traffic_timeout=1)
    with pytest.raises(GateTimeoutError, match="web-old: 5 new flows in the last 3 min"):
        drain_dns(ctx, Drain(MOVED_IN, 60, [old_lb["DNSName"]]))


def test_a_dry_run_says_what_it_would_wait_for_and_waits_not(
    aws: AwsClients, old_lb: dict[str, Any]
) -> None:
    ctx = _context(aws, moved=dt.datetime.now(dt.UTC), margin=60, dry_run=True)
    result = drain_dns(ctx, Drain(MOVED_IN, 300, [old_lb["DNSName"]]))
    assert not result.changed and not result.details  # it returned without waiting
    assert result.message.startswith("would wait for 1 load balancer(s): clients may still hold")


def test_no_load_balancer_left_to_delete_is_nothing_to_drain(aws: AwsClients) -> None:
    ctx = _context(aws, moved=dt.datetime.now(dt.UTC), margin=600)
    result = drain_dns(ctx, Drain(MOVED_IN, 300, ["gone.elb.us-west-2.amazonaws.com"]))
    assert not result.details and result.message.startswith("no load balancer to drain")


def test_this_runs_journal_tells_when_the_move_finished_before_the_stack_records_it(
    aws: AwsClients, old_lb: dict[str, Any]
) -> None:
    """The moving phase's mark reaches the stack with the next phase's update; until then
    the journal's time of its last step counts."""
    an_hour_ago = dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)
    just_now = dt.datetime.now(dt.UTC)
    ctx = _context(aws, moved=None, margin=3)
    ctx = dataclasses.replace(ctx, finished_at=lambda p: just_now if p == MOVED_IN else None)
    waited, result = _timed(ctx, Drain(MOVED_IN, 2, [old_lb["DNSName"]]))
    assert 0 < result.details["held"] <= 5 and waited >= result.details["held"]
    assert "since dns-cutover finished" in result.message
    ctx = dataclasses.replace(ctx, finished_at=lambda p: an_hour_ago)
    _, result = _timed(ctx, Drain(MOVED_IN, 2, [old_lb["DNSName"]]))
    assert result.details["held"] == 0
