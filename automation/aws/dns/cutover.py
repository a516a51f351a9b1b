"""Acting on a DNS cutover: check the target, send each batch, wait, roll back on failure.

:func:`cutover_records` moves records one at a time; :func:`cutover_record` checks the
new target serves (:func:`check_target`), sends each state's batch
(:func:`apply_transition`, which tells an earlier attempt's record set from someone
else's), waits until Route53 reports it INSYNC (:func:`wait_insync`), checks again,
and on any failure puts the previous record sets back. A dry run reads and checks, and
reports the batches it would send.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError, WaiterError

from automation.aws.dns.plan import PlanStep, plan_states
from automation.aws.dns.records import (
    RecordSet,
    canonical_name,
    comparable,
    conflicting,
    describe_record,
    read_records,
    record_key,
    transition,
)
from automation.aws.dns.reports import CutoverReport, RecordReport
from automation.aws.dns.requests import RecordCutover, SyncOptions
from automation.aws.probe import HttpProbe, ProbeResult, probe_http
from automation.aws.targets import targets_pending
from automation.core.errors import (
    GateTimeoutError,
    KubeshiftError,
    PreconditionFailed,
    StepFailedError,
    UserError,
    from_client_error,
)
from automation.core.progress import NullReporter, Reporter
from automation.core.waiting import DONE, Pending, wait_until

if TYPE_CHECKING:
    from mypy_boto3_elbv2 import ElasticLoadBalancingv2Client
    from mypy_boto3_route53 import Route53Client
    from mypy_boto3_route53.type_defs import ChangeTypeDef

Prober = Callable[[HttpProbe, str | None], ProbeResult]


def _submit(
    route53: Route53Client, zone_id: str, changes: list[ChangeTypeDef], comment: str
) -> str:
    try:
        return _send(route53, zone_id, changes, comment)
    except ClientError as exc:
        raise from_client_error(exc, f"change records in zone {zone_id}") from exc


def _send(route53: Route53Client, zone_id: str, changes: list[ChangeTypeDef], comment: str) -> str:
    answer = route53.change_resource_record_sets(
        HostedZoneId=zone_id, ChangeBatch={"Comment": comment[:256], "Changes": changes}
    )
    return str(answer["ChangeInfo"]["Id"])


def _already_exists(exc: ClientError) -> bool:
    error = exc.response.get("Error", {})
    return error.get("Code") == "InvalidChangeBatch" and "already exists" in error.get(
        "Message", ""
    )


def apply_transition(
    route53: Route53Client,
    zone_id: str,
    name: str,
    before: Sequence[RecordSet],
    after: Sequence[RecordSet],
    comment: str,
) -> str | None:
    """Turn the record sets of ``name`` from ``before`` into ``after``; the change id.

    When Route53 refuses the batch because a record set it creates exists, the name is
    read again. One unlike kubeshift's is someone else's: ``PreconditionFailed``, with
    it left alone. One like it is an earlier attempt's (botocore resends a request whose
    answer was lost; a run resumed after a partial failure): the batch is sent once more
    from what is there now, creating only the record sets still absent. None when that
    leaves nothing to send, so there is no change of this call's to wait for.
    """
    try:
        return _send(route53, zone_id, transition(before, after), comment)
    except ClientError as exc:
        if not _already_exists(exc):
            raise from_client_error(exc, f"change records in zone {zone_id}") from exc
    keys = {record_key(rr) for rr in (*before, *after)}
    now = [rr for rr in read_records(route53, zone_id, name) if record_key(rr) in keys]
    read = {record_key(rr) for rr in before}
    wanted = {record_key(rr): comparable(rr) for rr in after}
    foreign = [
        rr
        for rr in now
        if record_key(rr) not in read and comparable(rr) != wanted.get(record_key(rr))
    ]
    if foreign:
        raise PreconditionFailed(
            f"Record {'; '.join(describe_record(rr) for rr in foreign)} appeared after "
            f"kubeshift read {canonical_name(name)} and is not what kubeshift would create, so "
            "nothing was changed; check who manages the record, then run again."
        )
    retry = transition(now, after)
    return _submit(route53, zone_id, retry, comment) if retry else None


def wait_insync(
    route53: Route53Client,
    change_id: str,
    *,
    what: str,
    options: SyncOptions,
    reporter: Reporter | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Wait until the change is INSYNC; ``GateTimeoutError`` at the deadline.

    Each poll is one attempt of boto3's ``resource_record_sets_changed`` waiter (its
    acceptors decide INSYNC or error); ``wait_until`` owns the deadline and reports
    the pending change while it runs.
    """
    waiter = route53.get_waiter("resource_record_sets_changed")

    def poll() -> Pending:
        try:
            waiter.wait(Id=change_id, WaiterConfig={"Delay": 1, "MaxAttempts": 1})
        except WaiterError as exc:
            last: dict[str, Any] = dict(exc.last_response or {})
            if "Error" in last:
                error = ClientError(last, "GetChange")  # type: ignore[arg-type]
                raise from_client_error(error, f"read change {change_id}") from exc
            status = last.get("ChangeInfo", {}).get("Status", "unknown")
            return Pending.of([f"{change_id} {status}"], detail=what)
        return DONE

    wait_until(
        f"Route53 change INSYNC for {what}",
        poll,
        timeout=options.timeout,
        interval=options.interval,
        on_progress=reporter.on_wait if reporter else None,
        sleep=sleep,
    )


def check_target(
    elbv2: ElasticLoadBalancingv2Client | None,
    cutover: RecordCutover,
    *,
    prober: Prober = probe_http,
    reporter: Reporter | None = None,
    sleep: Callable[[float], None] = time.sleep,
    wait: bool = True,
) -> list[str]:
    """Problems with the new target (empty = it serves): unhealthy targets, a failed probe."""
    check = cutover.check
    problems: list[str] = []
    if check.target_group_arns:
        if elbv2 is None:
            raise UserError(
                f"Record {cutover.fqdn} checks target groups but no ELBv2 client was given."
            )
        try:
            if wait and check.timeout > 0:
                wait_until(
                    f"healthy targets behind {cutover.fqdn}",
                    lambda: targets_pending(
                        elbv2, check.target_group_arns, min_healthy=check.min_healthy
                    ),
                    timeout=check.timeout,
                    interval=check.interval,
                    on_progress=reporter.on_wait if reporter else None,
                    sleep=sleep,
                )
            else:
                pending = targets_pending(
                    elbv2, check.target_group_arns, min_healthy=check.min_healthy
                )
                problems.extend(f"unhealthy target {item}" for item in pending.items)
        except GateTimeoutError as exc:
            problems.append(str(exc))
    if check.probe is not None:
        result = prober(check.probe, cutover.endpoint)
        if not result.ok:
            problems.append(result.message)
    return problems


def cutover_record(
    route53: Route53Client,
    elbv2: ElasticLoadBalancingv2Client | None,
    cutover: RecordCutover,
    *,
    dry_run: bool = False,
    sync: SyncOptions | None = None,
    reporter: Reporter | None = None,
    prober: Prober = probe_http,
    sleep: Callable[[float], None] = time.sleep,
) -> RecordReport:
    """Move one record to its new target, validated, rolled back on failure.

    Idempotent: a record already in its final state is reported ``unchanged``. A
    dry run reads the record, checks the target and reports the batches it would send.
    """
    sync = sync or SyncOptions()
    name = cutover.fqdn
    current = read_records(route53, cutover.zone_id, name)
    base = conflicting(current, cutover.record_type)
    before = tuple(describe_record(rr) for rr in base)
    steps = plan_states(cutover, current)
    if not steps:
        return RecordReport(name, "unchanged", "already points at the target", before, before)

    if dry_run:
        return _dry_run_report(elbv2, cutover, base, steps, prober)

    problems = check_target(elbv2, cutover, prober=prober, reporter=reporter, sleep=sleep)
    if problems:
        return RecordReport(
            name,
            "failed",
            f"new target not serving, record left alone: {'; '.join(problems)}",
            before,
            before,
        )

    state: tuple[RecordSet, ...] = base
    change_ids: list[str] = []
    try:
        for index, step in enumerate(steps):
            comment = f"kubeshift {name} {step.label}"
            change_id = apply_transition(
                route53, cutover.zone_id, name, state, step.records, comment
            )
            state = step.records
            if change_id is not None:
                change_ids.append(change_id)
                wait_insync(
                    route53,
                    change_id,
                    what=f"{name} {step.label}",
                    options=sync,
                    reporter=reporter,
                    sleep=sleep,
                )
            problems = check_target(
                elbv2, cutover, prober=prober, reporter=reporter, sleep=sleep, wait=False
            )
            if problems:
                raise StepFailedError(f"after {step.label}: {'; '.join(problems)}")
            pause = cutover.weighted.pause_seconds if cutover.weighted else 0.0
            if pause and index < len(steps) - 1:
                sleep(pause)
    except KubeshiftError as exc:
        return _roll_back(route53, cutover, state, base, exc, change_ids, sync, reporter, sleep)
    after = tuple(describe_record(rr) for rr in state)
    return RecordReport(
        name, "switched", f"now {'; '.join(after)}", before, after, tuple(change_ids)
    )


def _dry_run_report(
    elbv2: ElasticLoadBalancingv2Client | None,
    cutover: RecordCutover,
    base: Sequence[RecordSet],
    steps: Sequence[PlanStep],
    prober: Prober,
) -> RecordReport:
    """What a real run would send; the target is checked once, without waiting.

    In a dry run of a whole scenario the new target usually does not exist yet, so a
    failing check is reported, not fatal: the real run waits for it and refuses.
    """
    plans = [
        f"{s.label}: " + ", ".join(_describe_change(c) for c in transition(prev, s.records))
        for prev, s in zip([base, *[x.records for x in steps]], steps, strict=False)
    ]
    try:
        problems = check_target(elbv2, cutover, prober=prober, wait=False)
    except KubeshiftError as exc:
        problems = [str(exc)]
    note = f" (once the new target serves; now: {'; '.join(problems)})" if problems else ""
    return RecordReport(
        cutover.fqdn,
        "would-switch",
        "would " + " then ".join(plans) + note,
        tuple(describe_record(rr) for rr in base),
        tuple(describe_record(rr) for rr in steps[-1].records),
    )


def is_cut_over(route53: Route53Client, cutover: RecordCutover) -> bool:
    """Whether the record is already in its final state (nothing left to change)."""
    return not plan_states(cutover, read_records(route53, cutover.zone_id, cutover.name))


def _describe_change(change: ChangeTypeDef) -> str:
    return f"{change['Action']} {describe_record(change['ResourceRecordSet'])}"


def _roll_back(
    route53: Route53Client,
    cutover: RecordCutover,
    state: Sequence[RecordSet],
    base: Sequence[RecordSet],
    cause: KubeshiftError,
    change_ids: list[str],
    sync: SyncOptions,
    reporter: Reporter | None,
    sleep: Callable[[float], None],
) -> RecordReport:
    name = cutover.fqdn
    before = tuple(describe_record(rr) for rr in base)
    changes = transition(state, base)
    if not changes:  # the failing change never applied
        return RecordReport(
            name, "failed", f"{cause}; record unchanged", before, before, tuple(change_ids)
        )
    try:
        change_id = apply_transition(
            route53, cutover.zone_id, name, state, base, f"kubeshift {name} rollback"
        )
    except KubeshiftError as exc:
        now = tuple(describe_record(rr) for rr in state)
        return RecordReport(
            name, "failed", f"{cause}; ROLLBACK FAILED: {exc}", before, now, tuple(change_ids)
        )
    note = ""
    try:
        if change_id is not None:
            change_ids.append(change_id)
            wait_insync(
                route53,
                change_id,
                what=f"{name} rollback",
                options=sync,
                reporter=reporter,
                sleep=sleep,
            )
    except KubeshiftError as exc:
        note = f" (rollback submitted, not yet in sync: {exc})"
    return RecordReport(
        name,
        "rolled-back",
        f"{cause}; previous value restored{note}",
        before,
        before,
        tuple(change_ids),
    )


def cutover_records(
    route53: Route53Client,
    elbv2: ElasticLoadBalancingv2Client | None,
    cutovers: Sequence[RecordCutover],
    *,
    dry_run: bool = False,
    sync: SyncOptions | None = None,
    reporter: Reporter | None = None,
    prober: Prober = probe_http,
    continue_on_failure: bool = False,
    sleep: Callable[[float], None] = time.sleep,
) -> CutoverReport:
    """Cut several records over, one at a time, with a report per record.

    After a record fails (and is rolled back) the rest are ``skipped`` unless
    ``continue_on_failure``. Call ``as_hook_result()`` on the report to get a hook
    result, or ``raise_for_failure()``.
    """
    reports: list[RecordReport] = []
    stop = False
    with (reporter or NullReporter()).task("DNS cutover", total=len(cutovers)) as task:
        for cutover in cutovers:
            if stop:
                reports.append(RecordReport(cutover.fqdn, "skipped", "an earlier record failed"))
            else:
                report = cutover_record(
                    route53,
                    elbv2,
                    cutover,
                    dry_run=dry_run,
                    sync=sync,
                    reporter=reporter,
                    prober=prober,
                    sleep=sleep,
                )
                reports.append(report)
                stop = not report.ok and not continue_on_failure
            task.advance()
    return CutoverReport(tuple(reports), dry_run)
