"""The availability probe around the steps that move workloads.

When ``kubeshift:runtime.probe_services`` names Services, the drain and the ingress
move run inside an ``AvailabilityProbe``; their result carries its report (minimum
ready endpoints per Service) and a zero-endpoint interval fails the step — the phase
was not zero-downtime, and the journal says which Service and when. The probe watches
the cluster serving the traffic: the primary, or cni-swap's mirror while the primary's
old nodes are drained.
"""

from __future__ import annotations

from collections.abc import Callable

from automation.core.errors import PreconditionFailed
from automation.model.context import HookContext
from automation.model.phase import HookResult


def watched(
    ctx: HookContext,
    step: Callable[[], HookResult],
    *,
    serving: str = "primary",
    only: Callable[[str], bool] = lambda _service: True,
) -> HookResult:
    """Run ``step`` under the probe of the ``serving`` cluster's Services (those of
    ``kubeshift:runtime.probe_services`` that ``only`` keeps) and judge it."""
    from automation.kube.probe import AvailabilityProbe, no_zero_endpoint_interval

    services = [s for s in ctx.settings.probe_services if only(s)]
    if not services or ctx.dry_run:
        return step()
    probe = AvailabilityProbe(ctx.clients.kube(serving).discovery, services)
    with probe:
        result = step()
    report = probe.report()
    verdict = no_zero_endpoint_interval(report)
    ctx.log.info("availability on the %s: %s", serving, report.message())
    if not verdict.done:
        raise PreconditionFailed(
            f"{result.message} But availability was lost: {'; '.join(verdict.items[:5])}."
        )
    return HookResult(
        changed=result.changed,
        message=f"{result.message} Availability: {report.message()}",
        details={**result.details, "availability": report.as_dict()},
    )
