"""Target-group health: the gate before any traffic moves to new targets.

Traffic moves (DNS cutover, ingress move) only once the new target groups serve: all
registered targets healthy, or at least N of them. The gate polls
``DescribeTargetHealth`` rather than the ``target_in_service`` waiter because it must
report each unhealthy target with AWS's reason code (``Target.ResponseCodeMismatch``,
``Target.Timeout``…) while it waits, and support "at least N".
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from automation.core.errors import from_client_error
from automation.core.progress import Reporter
from automation.core.waiting import Pending, wait_until

if TYPE_CHECKING:
    from mypy_boto3_elbv2 import ElasticLoadBalancingv2Client


@dataclass(frozen=True)
class TargetState:
    """One target's health as ELBv2 reports it."""

    target_group_arn: str
    target_id: str
    port: int | None
    state: str
    reason: str = ""
    description: str = ""

    @property
    def healthy(self) -> bool:
        return self.state == "healthy"

    @property
    def label(self) -> str:
        where = f"{self.target_id}:{self.port}" if self.port else self.target_id
        why = f" ({self.reason})" if self.reason else ""
        return f"{short_tg_name(self.target_group_arn)} {where} {self.state}{why}"


@dataclass(frozen=True)
class TargetGroupHealth:
    """The health of one target group against the number of healthy targets required."""

    target_group_arn: str
    targets: tuple[TargetState, ...]
    required: int

    @property
    def healthy(self) -> tuple[TargetState, ...]:
        return tuple(t for t in self.targets if t.healthy)

    @property
    def unhealthy(self) -> tuple[TargetState, ...]:
        return tuple(t for t in self.targets if not t.healthy)

    @property
    def ok(self) -> bool:
        return len(self.healthy) >= self.required

    def pending(self) -> list[str]:
        """What keeps this group from being ok (empty when ok)."""
        if self.ok:
            return []
        name = short_tg_name(self.target_group_arn)
        if not self.targets:
            return [f"{name}: no targets registered"]
        items = [t.label for t in self.unhealthy]
        if not items or len(self.targets) < self.required:
            items.append(f"{name}: {len(self.healthy)}/{self.required} healthy")
        return items


def short_tg_name(arn: str) -> str:
    """``arn:…:targetgroup/web/0123`` → ``web``."""
    parts = arn.split(":targetgroup/", 1)
    return parts[1].split("/", 1)[0] if len(parts) == 2 else arn


def describe_health(
    elbv2: ElasticLoadBalancingv2Client, target_group_arn: str
) -> tuple[TargetState, ...]:
    """Every registered target of the group with its state and reason."""
    try:
        answer = elbv2.describe_target_health(TargetGroupArn=target_group_arn)
    except ClientError as exc:
        raise from_client_error(exc, f"describe targets of {target_group_arn}") from exc
    states = []
    for item in answer.get("TargetHealthDescriptions", []):
        target, health = item.get("Target", {}), item.get("TargetHealth", {})
        states.append(
            TargetState(
                target_group_arn=target_group_arn,
                target_id=target.get("Id", "?"),
                port=target.get("Port"),
                state=health.get("State", "unknown"),
                reason=health.get("Reason", ""),
                description=health.get("Description", ""),
            )
        )
    return tuple(sorted(states, key=lambda s: (s.target_id, s.port or 0)))


def group_health(
    elbv2: ElasticLoadBalancingv2Client, target_group_arn: str, *, min_healthy: int | None = None
) -> TargetGroupHealth:
    """Health of one group; ``min_healthy`` None means every registered target (and ≥ 1)."""
    targets = describe_health(elbv2, target_group_arn)
    required = max(1, len(targets)) if min_healthy is None else min_healthy
    return TargetGroupHealth(target_group_arn, targets, required)


def targets_pending(
    elbv2: ElasticLoadBalancingv2Client,
    target_group_arns: Sequence[str],
    *,
    min_healthy: int | None = None,
) -> Pending:
    """Gate check: pending items are the unhealthy targets (with reasons) of every group."""
    items: list[str] = []
    for arn in target_group_arns:
        items.extend(group_health(elbv2, arn, min_healthy=min_healthy).pending())
    detail = "all targets healthy" if min_healthy is None else f"at least {min_healthy} healthy"
    return Pending.of(items, detail=f"required: {detail} per group")


def wait_targets_healthy(
    elbv2: ElasticLoadBalancingv2Client,
    target_group_arns: Sequence[str],
    *,
    min_healthy: int | None = None,
    timeout: float = 600.0,
    interval: float = 10.0,
    reporter: Reporter | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[TargetGroupHealth, ...]:
    """Block until every group is healthy enough; ``GateTimeoutError`` lists what is not."""
    what = f"healthy targets in {', '.join(short_tg_name(a) for a in target_group_arns)}"
    wait_until(
        what,
        lambda: targets_pending(elbv2, target_group_arns, min_healthy=min_healthy),
        timeout=timeout,
        interval=interval,
        on_progress=reporter.on_wait if reporter else None,
        sleep=sleep,
    )
    return tuple(group_health(elbv2, a, min_healthy=min_healthy) for a in target_group_arns)
