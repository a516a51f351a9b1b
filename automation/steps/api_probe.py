"""The API availability probe around the phases that move the control plane.

A phase that moves a member (or retires the old API load balancer) runs inside this
probe (``Phase.probe``): from its first step to its last, the API is asked
``/readyz`` every ``kubeshift:runtime.api_probe.interval`` seconds through the
kubeconfig's server. With ``resolve: route53`` a request counts as answered only while
Route53's answer for the API record reaches a running member (directly, or as a
healthy target of the load balancer it names) whose etcd member answers too; that is
how clients would fare where DNS, not the kubeconfig, picks the member. The runner
journals the report and stops after a phase whose longest gap exceeded ``max_gap``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from automation.aws.clients import AwsClients
from automation.config.etcd_settings import EtcdSettings
from automation.core.errors import RetryableError
from automation.core.results import ProbeOutcome
from automation.kube.api_probe import ApiProbe, Check, readyz
from automation.model.context import HookContext
from automation.model.phase import PhaseProbe


class ApiProbing:
    """The API probe of one phase, judged against ``max_gap``."""

    def __init__(self, probe: ApiProbe, max_gap: float, resolve: str) -> None:
        self.probe = probe
        self.max_gap = max_gap
        self.resolve = resolve

    def __enter__(self) -> ApiProbing:
        self.probe.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.probe.__exit__(*exc)

    def outcome(self, earlier: Mapping[str, Any] | None) -> ProbeOutcome:
        report = self.probe.report()
        if earlier:
            report = report.after(earlier)
        failure = None
        if report.longest_gap > self.max_gap:
            failure = (
                f"the API went unanswered for longer than kubeshift:runtime.api_probe.max_gap "
                f"({self.max_gap:g}s). {report.message()}"
            )
        details = {**report.as_dict(), "max_gap": self.max_gap, "resolve": self.resolve}
        return ProbeOutcome(report.message(), details, failure)


def api_probing(ctx: HookContext) -> ApiProbing | None:
    """The probe for ``ctx``'s phase, or None when switched off or in a dry run."""
    settings = ctx.settings.api_probe
    if not settings.enabled or ctx.dry_run:
        return None
    configuration = ctx.clients.kube("primary").api_client.configuration
    ask = readyz(configuration, settings.timeout)
    if settings.resolve == "route53":
        dns = ctx.stack_config.cluster.dns
        managed = ctx.stack_config.cluster.control_plane.membership == "etcd-manager"
        ask = through_record(
            ctx.clients.aws(), dns.zone_id, dns.api_record, ctx.settings.etcd, ask, managed=managed
        )
    probe = ApiProbe(ask, interval=settings.interval)
    return ApiProbing(probe, settings.max_gap, settings.resolve)


API_PROBE = PhaseProbe(
    name="api",
    summary="the API answers /readyz throughout, through its record as clients resolve it",
    start=api_probing,
)


def through_record(
    aws: AwsClients,
    zone_id: str,
    api_record: str,
    etcd: EtcdSettings | None,
    ask: Check,
    *,
    managed: bool = False,
) -> Check:
    """``ask``, counted only while the API record's answer reaches a member that serves
    (with ``etcd``: whose etcd member answers too; ``managed``: etcd-manager's member,
    found by the volume its instance holds and asked through the endpoints)."""
    from automation.aws.api_record import ApiRecordReader, record_name

    route53 = aws.client("route53")
    reader = ApiRecordReader(
        route53=route53,
        ec2=aws.client("ec2"),
        elbv2=aws.client("elbv2"),
        elb=aws.client("elb"),
        zone_id=zone_id,
        name=record_name(route53, zone_id, api_record),
    )

    members: dict[str, str] = {}
    """Address -> etcd-manager's member its instance holds the volume of, once found: an
    instance keeps its address and its volumes while the record reaches it."""

    def check() -> str | None:
        serving = reader.serving()
        if not serving.addresses:
            return f"the API record reaches no member: {serving.answer}"
        if etcd is not None and not any(
            managed_member_answers(aws, etcd, a, members) if managed else member_answers(etcd, a)
            for a in serving.addresses
        ):
            at = ", ".join(serving.addresses)
            return f"the API record reaches no member whose etcd answers ({serving.answer}: {at})"
        return ask()

    return check


def member_answers(etcd: EtcdSettings, address: str) -> bool:
    """The etcd member at the VPC ``address`` answers its status request."""
    url = etcd.client_url(address)
    with etcd.client([url]) as client:
        try:
            client.status(url)
        except RetryableError:  # EtcdUnavailable among them: no answer, for now
            return False
    return True


def managed_member_answers(
    aws: AwsClients, etcd: EtcdSettings, address: str, known: dict[str, str] | None = None
) -> bool:
    """etcd-manager's main etcd member on the instance at ``address`` answers its status
    request (its members are reached by name, through ``etcd.endpoints``); ``known``
    keeps the members found by address, so EC2 is asked once per address."""
    from automation.aws.etcd_volumes import member_at

    known = {} if known is None else known
    name = known.get(address) or member_at(aws.ec2, address)
    if name is None or not etcd.endpoints:
        return False
    known[address] = name
    with etcd.client(etcd.endpoints) as client:
        try:
            member = next((m for m in client.members() if m.name == f"etcd-{name}"), None)
            if member is None or not member.client_urls:
                return False
            client.status(member.client_urls[0])
        except RetryableError:
            return False
    return True
