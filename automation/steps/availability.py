"""The availability probe around the steps that move workloads.

When ``kubeshift:runtime.probe_services`` names Services, the drain and the ingress
move run inside an ``AvailabilityProbe``; their result carries its report (minimum
ready endpoints per Service) and a zero-endpoint interval fails the step — the phase
was not zero-downtime, and the journal says which Service and when.
"""

from __future__ import annotations

from collections.abc import Callable

from automation.context import HookContext
from automation.errors import PreconditionFailed
from automation.phase import HookResult


def watched(ctx: HookContext, step: Callable[[], HookResult]) -> HookResult:
    """Run ``step`` under the probe (when Services are configured) and judge it."""
    from automation.kube.probe import AvailabilityProbe, no_zero_endpoint_interval

    services = list(ctx.settings.probe_services)
    if not services or ctx.dry_run:
        return step()
    probe = AvailabilityProbe(ctx.clients.kube("primary").discovery, services)
    with probe:
        result = step()
    report = probe.report()
    verdict = no_zero_endpoint_interval(report)
    ctx.log.info("availability: %s", report.message())
    if not verdict.done:
        raise PreconditionFailed(
            f"{result.message} But availability was lost: {'; '.join(verdict.items[:5])}."
        )
    return HookResult(
        changed=result.changed,
        message=f"{result.message} Availability: {report.message()}",
        details={**result.details, "availability": report.as_dict()},
    )
