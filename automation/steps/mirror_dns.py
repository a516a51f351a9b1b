"""cni-swap steps: move each Service's DNS records to the mirror and back, validated.

Each Service in scope that declares DNS names is moved only once it serves where its
records go (``automation.steps.service_dns``), through ``automation.aws.dns``; DNS
controllers that would write those records are guarded (or paused) first and resumed
after, Services left on the primary with their stateful workloads never move, and the
mirror is torn down only once no record points at it and its clients have left.
"""

from __future__ import annotations

from typing import Any

from automation.core.errors import UserError
from automation.core.waiting import Pending, summarize
from automation.model.context import HookContext
from automation.model.phase import HookResult
from automation.steps.mirror import MIRROR, PRIMARY, SETTINGS_KEY, copy_options, mirror_settings


def _dns_namespaces(ctx: HookContext) -> tuple[str, ...]:
    settings = mirror_settings(ctx)
    scope = settings.dns_namespaces if settings.dns_namespaces is not None else settings.namespaces
    if not scope:
        raise UserError(
            f"{SETTINGS_KEY}.namespaces is empty; list the namespaces whose Services move."
        )
    return scope


def hosted_zones(ctx: HookContext) -> dict[str, str]:
    """Zone name -> id: the settings' zones, else the name of the cluster's zone id."""
    settings = mirror_settings(ctx)
    if settings.zones:
        return dict(settings.zones)
    from automation.aws.failures import ClientError
    from automation.core.errors import from_client_error

    zone_id = ctx.stack_config.cluster.dns.zone_id
    try:
        zone = ctx.clients.aws().route53.get_hosted_zone(Id=zone_id)["HostedZone"]
    except ClientError as exc:
        raise from_client_error(exc, f"read hosted zone {zone_id}") from exc
    return {str(zone["Name"]).rstrip("."): zone_id}


def left_on_primary(ctx: HookContext) -> frozenset[str]:
    """``namespace/name`` of the Services whose workloads stay on the primary
    (``stateful: leave-on-primary``): their records never move."""
    if mirror_settings(ctx).stateful != "leave-on-primary":
        return frozenset()
    from automation.kube.clients import list_all
    from automation.kube.copy.plan import stateful_workloads
    from automation.kube.stateful import served_by

    primary = ctx.clients.kube(PRIMARY)
    workloads = stateful_workloads(primary, copy_options(ctx))
    services = [
        svc
        for ns in {w.namespace for w in workloads}
        for svc in list_all(
            primary.core.list_namespaced_service, ns, action=f"list Services in {ns}"
        )["items"]
    ]
    return frozenset(served_by(workloads, services))


def _plan(ctx: HookContext, destination: str, other: str) -> Any:
    from automation.steps.service_dns import plan_service_dns

    settings = mirror_settings(ctx)
    return plan_service_dns(
        ctx.clients.kube(destination),
        hosted_zones(ctx),
        _dns_namespaces(ctx),
        expected=ctx.clients.kube(other),
        ttl=settings.dns_ttl,
        probe_path=settings.probe_path,
        excluded=left_on_primary(ctx),
    )


def _serving(ctx: HookContext, destination: str, other: str) -> Pending:
    from automation.steps.service_dns import services_serving

    return services_serving(
        ctx.clients.kube(destination),
        _dns_namespaces(ctx),
        expected=ctx.clients.kube(other),
        excluded=left_on_primary(ctx),
    )


def services_serve_on_mirror(ctx: HookContext) -> Pending:
    """Every Service with DNS names has a load balancer and ready endpoints on the mirror."""
    return _serving(ctx, MIRROR, PRIMARY)


def services_serve_on_primary(ctx: HookContext) -> Pending:
    """Every Service with DNS names has a load balancer and ready endpoints on the primary."""
    return _serving(ctx, PRIMARY, MIRROR)


def _move_dns(ctx: HookContext, destination: str, other: str) -> HookResult:
    from automation.aws.dns.cutover import cutover_records
    from automation.aws.dns.requests import SyncOptions

    plan = _plan(ctx, destination, other)
    if ctx.dry_run and plan.not_ready:
        return HookResult(
            False,
            f"dry-run: would refuse to move any record; not serving on {destination}: "
            f"{summarize(plan.items(), 3)}",
            {"not_ready": plan.items(), "records": plan.describe()},
        )
    plan.raise_if_not_ready()
    if not plan.cutovers:
        return HookResult(False, "no Service in scope declares a DNS name; nothing to move")
    gates = ctx.settings.gates
    sync = SyncOptions(timeout=gates.dns_sync_timeout, interval=gates.interval)
    report = cutover_records(
        ctx.clients.aws().route53,
        None,  # no target groups: the Kubernetes-side check above proved the service serves
        list(plan.cutovers),
        dry_run=ctx.dry_run,
        sync=sync,
        reporter=ctx.progress,
    )
    return report.as_hook_result()


def drain_mirror(ctx: HookContext) -> HookResult:
    """Before the mirror goes: the clients of its Services' load balancers left (the
    records' TTL plus the margin since dns-to-primary, then no traffic in CloudWatch)."""
    from automation.steps.dns_drain import Drain, drain_dns
    from automation.steps.service_dns import inspect_services
    from components.contract.scenarios.cni_swap import DNS_TO_PRIMARY

    services = inspect_services(
        ctx.clients.kube(MIRROR), _dns_namespaces(ctx), excluded=left_on_primary(ctx)
    )
    hostnames = sorted({s.hostname for s in services if s.hostname})
    return drain_dns(ctx, Drain(DNS_TO_PRIMARY, mirror_settings(ctx).dns_ttl, hostnames))


def dns_writers_guard(ctx: HookContext) -> HookResult:
    """No DNS controller on either cluster writes a record about to move (or pause them)."""
    from automation.steps.dns_writers import guard_records

    plan = _plan(ctx, MIRROR, PRIMARY)
    names = [c.name for c in plan.cutovers]
    return guard_records(ctx, names, [c.zone_id for c in plan.cutovers], [PRIMARY, MIRROR])


def resume_dns_writers(ctx: HookContext) -> HookResult:
    """Give back the replicas of the DNS controllers kubeshift paused, on both clusters."""
    from automation.steps.dns_writers import resume_writers

    return resume_writers(ctx, [PRIMARY, MIRROR])


def dns_to_mirror(ctx: HookContext) -> HookResult:
    """Point each service's records at its load balancer on the mirror, validated."""
    return _move_dns(ctx, MIRROR, PRIMARY)


def dns_to_primary(ctx: HookContext) -> HookResult:
    """Point each service's records back at its load balancer on the primary, validated."""
    return _move_dns(ctx, PRIMARY, MIRROR)


def records_on_primary(ctx: HookContext) -> Pending:
    """Teardown gate: no record still points at the mirror (each is at the primary's LB)."""
    from automation.aws.dns.plan import plan_states
    from automation.aws.dns.records import read_records

    plan = _plan(ctx, PRIMARY, MIRROR)
    route53 = ctx.clients.aws().route53
    items = list(plan.items())
    for cutover in plan.cutovers:
        if plan_states(cutover, read_records(route53, cutover.zone_id, cutover.name)):
            items.append(f"record {cutover.fqdn}: does not point at {cutover.endpoint} yet")
    return Pending.of(items, f"{len(plan.cutovers)} record(s) checked")
