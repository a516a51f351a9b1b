"""The DNS drain: nothing a record pointed at is deleted while clients may still use it.

Moving a record does not move its clients: each resolver and client keeps the old
answer for the record's TTL (some longer). So before a phase deletes a load balancer
whose records moved away in an earlier phase (vpc-move's old ingress load balancer at
retire-old-workers, its source API load balancer at cleanup, the mirror's load
balancers at cni-swap's teardown-mirror), this step waits until the TTL has passed
since the move was in sync in Route53, plus a margin (``kubeshift:runtime.dns_drain``);
then, where CloudWatch counts the load balancers' traffic, until none arrived for a few
minutes, naming any load balancer that still has some when the deadline passes.

When the move was in sync is when the moving phase finished (its after-gates checked
Route53): its last step in the journal, else its mark in the stack's progress record
(a hand run, another operator's); when neither tells, the wait starts now, which is
never shorter.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from automation.core.waiting import Pending, wait_until
from automation.model.context import HookContext
from automation.model.phase import HookResult
from components.contract.progress import parse_progress

INTERVAL = 10.0


@dataclass(frozen=True)
class Drain:
    """What one phase's drain waits for."""

    moved_in: str
    """The phase whose finish put the records on their new targets."""
    ttl: int
    """The TTL the records had while they pointed at what goes."""
    dns_names: Sequence[str]
    """The load balancers (by DNS name) this phase deletes."""


def moved_at(ctx: HookContext, phase: str) -> dt.datetime | None:
    """When ``phase`` finished: its last step in this run's journal, else its mark in the
    stack's progress record (a hand run, another operator's); None when neither knows."""
    journalled = ctx.finished_at(phase)
    if journalled is not None:
        return journalled
    mark = parse_progress(ctx.outputs.get("progress")).finished(phase)
    if mark is None or mark.at is None:
        return None
    return dt.datetime.fromisoformat(mark.at)


def drain_dns(
    ctx: HookContext,
    drain: Drain,
    clock: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
) -> HookResult:
    """Wait out the records' TTL plus the margin since ``drain.moved_in`` finished, then
    for the load balancers' traffic (CloudWatch) to stop; deadline and progress shown."""
    from automation.aws.flows import metrics_for, traffic_pending

    aws = ctx.clients.aws()
    metrics = metrics_for(aws.elbv2, aws.elb, drain.dns_names)
    if not metrics:
        return HookResult(False, "no load balancer to drain (none of them exists)")
    settings = ctx.settings.dns_drain
    hold = dt.timedelta(seconds=drain.ttl + settings.margin)
    since = moved_at(ctx, drain.moved_in)
    started = clock()
    until = (since or started) + hold
    held = max(0.0, (until - started).total_seconds())  # of the TTL wait, when the step began
    origin = f"{drain.moved_in} finished" if since else "now (no time recorded for the move)"
    minutes = settings.quiet_minutes

    def check() -> Pending:
        left = (until - clock()).total_seconds()
        if left > 0:
            why = f"TTL {drain.ttl} s + margin {settings.margin:g} s since {origin}"
            return Pending.of([f"clients may still hold the old answers: {left:.0f} s left"], why)
        return traffic_pending(aws.cloudwatch, metrics, minutes)

    if ctx.dry_run:
        status = check()
        waits = "; ".join(status.items) or "nothing to wait for"
        return HookResult(False, f"would wait for {len(metrics)} load balancer(s): {waits}")
    wait_until(
        f"clients to leave {len(metrics)} load balancer(s)",
        check,
        timeout=held + settings.traffic_timeout,
        interval=min(INTERVAL, max(1.0, hold.total_seconds())),
        on_progress=ctx.progress.on_wait,
    )
    waited = (clock() - started).total_seconds()
    names = ", ".join(m.balancer for m in metrics)
    return HookResult(
        False,
        f"waited {waited:.0f} s (TTL {drain.ttl} s + margin {settings.margin:g} s since {origin}); "
        f"no traffic for {minutes} min on: {names}",
        {
            "since": (since or started).isoformat(),
            "held": round(held, 1),
            "balancers": [m.balancer for m in metrics],
        },
    )
