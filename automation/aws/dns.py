"""Validated DNS cutover: move a record to a new target only once the target serves.

Both scenarios move traffic by DNS (seed 001: records to the new VPC's load balancers,
the API record from CNAME to an A record and back; seed 000: each service to the
mirror cluster and back). For each record this module reads what the record is now,
checks the new target (target groups healthy, an optional HTTP(S) probe through the
new endpoint), changes the record in one atomic batch (UPSERT, or DELETE + CREATE when
the type changes, or a weighted shift in steps), waits until Route53 reports the
change INSYNC, checks again, and on any failure puts the previous record sets back.

Every state of a record is a set of record sets; each move is the batch turning one
set into the next, and the rollback is the batch turning it back. A record already
in its target state is left alone, so a resumed run changes nothing twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias, cast

from botocore.exceptions import ClientError, WaiterError
from pydantic import BaseModel, ConfigDict, Field, field_validator

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
from automation.core.results import HookResult
from automation.core.waiting import DONE, Pending, summarize, wait_until

if TYPE_CHECKING:
    from mypy_boto3_elbv2 import ElasticLoadBalancingv2Client
    from mypy_boto3_route53 import Route53Client
    from mypy_boto3_route53.literals import RRTypeType
    from mypy_boto3_route53.type_defs import (
        ChangeTypeDef,
        ResourceRecordSetOutputTypeDef,
        ResourceRecordSetTypeDef,
        ResourceRecordSetUnionTypeDef,
    )

RecordSet: TypeAlias = "ResourceRecordSetTypeDef"
Prober = Callable[[HttpProbe, str | None], ProbeResult]

# --- what the caller asks for ---------------------------------------------------------


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CnameTarget(_Frozen):
    """Point the record at a host name (typically a load balancer's DNS name)."""

    kind: Literal["cname"] = "cname"
    value: str
    ttl: int = Field(default=60, ge=0)


class ARecordTarget(_Frozen):
    """Point the record at addresses (seed 001: the API at the first moved member)."""

    kind: Literal["a"] = "a"
    addresses: tuple[str, ...] = Field(min_length=1)
    ttl: int = Field(default=60, ge=0)


class AliasTarget(_Frozen):
    """Point the record at an AWS resource by Route53 alias (a load balancer)."""

    kind: Literal["alias"] = "alias"
    dns_name: str
    hosted_zone_id: str = Field(description="The load balancer's CanonicalHostedZoneId.")
    evaluate_target_health: bool = False
    record_type: Literal["A", "AAAA"] = "A"


RecordTarget = Annotated[CnameTarget | ARecordTarget | AliasTarget, Field(discriminator="kind")]


class WeightedShift(_Frozen):
    """Move traffic in weighted steps (percent to the new target) instead of at once."""

    steps: tuple[int, ...] = (10, 50, 100)
    old_set_identifier: str = "kubeshift-old"
    new_set_identifier: str = "kubeshift-new"
    collapse: bool = Field(
        default=True, description="At 100%, replace the weighted pair by a plain record."
    )
    pause_seconds: float = Field(default=0.0, ge=0, description="Dwell after each step.")

    @field_validator("steps")
    @classmethod
    def _ascending(cls, steps: tuple[int, ...]) -> tuple[int, ...]:
        if not steps or any(not 0 < s <= 100 for s in steps) or list(steps) != sorted(set(steps)):
            raise ValueError("steps must be strictly ascending percentages in 1..100")
        return steps


class TargetCheck(_Frozen):
    """What must hold of the new target before and after the record moves."""

    target_group_arns: tuple[str, ...] = ()
    min_healthy: int | None = Field(default=None, ge=1, description="None = every target.")
    probe: HttpProbe | None = None
    timeout: float = Field(default=120.0, ge=0, description="How long to wait for health.")
    interval: float = Field(default=10.0, gt=0)


class RecordCutover(_Frozen):
    """One record to move, where to, and how to prove the new target serves."""

    zone_id: str
    name: str
    target: RecordTarget
    weighted: WeightedShift | None = None
    check: TargetCheck = TargetCheck()

    @property
    def fqdn(self) -> str:
        return _name(self.name)

    @property
    def record_type(self) -> RRTypeType:
        target = self.target
        if isinstance(target, CnameTarget):
            return "CNAME"
        if isinstance(target, ARecordTarget):
            return "A"
        return target.record_type

    @property
    def endpoint(self) -> str:
        """Where a probe connects to reach the new target."""
        target = self.target
        if isinstance(target, CnameTarget):
            return target.value.rstrip(".")
        if isinstance(target, ARecordTarget):
            return target.addresses[0]
        return target.dns_name.rstrip(".")


class SyncOptions(_Frozen):
    """How long to wait for Route53 to report a change INSYNC."""

    timeout: float = Field(default=300.0, gt=0)
    interval: float = Field(default=10.0, gt=0)


# --- what the caller gets back --------------------------------------------------------

Status = Literal["unchanged", "switched", "would-switch", "rolled-back", "failed", "skipped"]


@dataclass(frozen=True)
class RecordReport:
    """What happened to one record."""

    name: str
    status: Status
    message: str
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    change_ids: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status in {"unchanged", "switched", "would-switch"}


@dataclass(frozen=True)
class CutoverReport:
    """Per-record outcomes of a cutover, in the order the records were given."""

    records: tuple[RecordReport, ...]
    dry_run: bool = False

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.records)

    @property
    def changed(self) -> bool:
        return any(r.status in {"switched", "rolled-back"} for r in self.records)

    def summary(self) -> str:
        counts: dict[str, list[str]] = {}
        for record in self.records:
            counts.setdefault(record.status, []).append(record.name)
        return "; ".join(f"{status}: {summarize(names)}" for status, names in counts.items())

    def raise_for_failure(self) -> None:
        """Raise ``StepFailedError`` naming every record that failed or was rolled back."""
        bad = [r for r in self.records if r.status in {"failed", "rolled-back"}]
        if bad:
            lines = " ".join(f"{r.name}: {r.message}." for r in bad)
            skipped = [r.name for r in self.records if r.status == "skipped"]
            rest = f" Not attempted: {summarize(skipped)}." if skipped else ""
            raise StepFailedError(f"DNS cutover failed for {len(bad)} record(s). {lines}{rest}")

    def as_hook_result(self) -> HookResult:
        """The hook's result; raises when any record failed (after its rollback)."""
        self.raise_for_failure()
        details = {
            r.name: {"status": r.status, "message": r.message, "before": r.before, "after": r.after}
            for r in self.records
        }
        prefix = "dry-run: " if self.dry_run else ""
        return HookResult(self.changed, prefix + self.summary(), details)


# --- record sets -----------------------------------------------------------------------


def _name(name: str) -> str:
    return name.rstrip(".").lower() + "."


def _request_name(name: str) -> str:
    # Route53 accepts both; moto only matches DELETEs against names sent without the dot.
    return name.rstrip(".")


def _norm(rr: RecordSet) -> tuple[Any, ...]:
    alias = rr.get("AliasTarget")
    values = tuple(
        sorted(
            v["Value"].rstrip(".").lower() if rr["Type"] == "CNAME" else v["Value"]
            for v in rr.get("ResourceRecords", [])
        )
    )
    alias_key = (
        (
            alias["DNSName"].rstrip(".").lower(),
            alias["HostedZoneId"],
            alias.get("EvaluateTargetHealth", False),
        )
        if alias
        else None
    )
    ttl = None if alias else rr.get("TTL")
    return (_key(rr), rr.get("Weight"), ttl, values, alias_key)


def _key(rr: RecordSet) -> tuple[str, str, str | None]:
    return (_name(rr["Name"]), rr["Type"], rr.get("SetIdentifier"))


def describe_record(rr: ResourceRecordSetUnionTypeDef) -> str:
    """``api.example.com. CNAME old.lb [kubeshift-old w=90]`` — for reports and logs."""
    if alias := rr.get("AliasTarget"):
        value = f"alias {alias['DNSName'].rstrip('.')}"
    else:
        value = ",".join(v["Value"] for v in rr.get("ResourceRecords", []))
    extra = ""
    if rr.get("SetIdentifier") is not None:
        extra = f" [{rr['SetIdentifier']} w={rr.get('Weight')}]"
    return f"{_name(rr['Name'])} {rr['Type']} {value}{extra}"


def _record_set(
    cutover: RecordCutover, *, set_identifier: str | None = None, weight: int | None = None
) -> RecordSet:
    target = cutover.target
    rr: RecordSet = {"Name": _request_name(cutover.name), "Type": cutover.record_type}
    if set_identifier is not None:
        rr["SetIdentifier"] = set_identifier
    if weight is not None:
        rr["Weight"] = weight
    if isinstance(target, AliasTarget):
        rr["AliasTarget"] = {
            "HostedZoneId": target.hosted_zone_id,
            "DNSName": target.dns_name,
            "EvaluateTargetHealth": target.evaluate_target_health,
        }
    elif isinstance(target, CnameTarget):
        rr["TTL"] = target.ttl
        rr["ResourceRecords"] = [{"Value": target.value}]
    else:
        rr["TTL"] = target.ttl
        rr["ResourceRecords"] = [{"Value": a} for a in target.addresses]
    return rr


_ROUTING_FIELDS = (
    "SetIdentifier",
    "Weight",
    "TTL",
    "ResourceRecords",
    "AliasTarget",
    "HealthCheckId",
    "Region",
    "Failover",
    "GeoLocation",
    "MultiValueAnswer",
)


def _clean(rr: ResourceRecordSetOutputTypeDef) -> RecordSet:
    """A record set as read, made fit to send back (name without the trailing dot).

    Keeps the routing fields kubeshift moves and restores; drops the rest
    (traffic-policy ids, CIDR and geoproximity routing).
    """
    kept = {key: rr[key] for key in _ROUTING_FIELDS if key in rr}  # type: ignore[literal-required]
    # One cast instead of a copy per field: every key kept is a field of both shapes.
    return cast("RecordSet", {**kept, "Name": _request_name(rr["Name"]), "Type": rr["Type"]})


def read_records(route53: Route53Client, zone_id: str, name: str) -> tuple[RecordSet, ...]:
    """Every record set named ``name`` in the zone (all types, all set identifiers).

    Uses the paginator, which follows ``NextRecordName``/``Type``/``Identifier`` — the
    last one matters inside large weighted or latency sets.
    """
    wanted = _name(name)
    found: list[RecordSet] = []
    try:
        # The stubs leave the paginator's input tokens (StartRecordName/Type/Identifier)
        # out of paginate(); botocore sends them with the first request.
        pages = route53.get_paginator("list_resource_record_sets").paginate(
            HostedZoneId=zone_id,
            StartRecordName=_request_name(name),  # type: ignore[call-arg]
        )
        for page in pages:
            records = page.get("ResourceRecordSets", [])
            found.extend(_clean(rr) for rr in records if _name(rr["Name"]) == wanted)
            if any(_name(rr["Name"]) != wanted for rr in records):
                break  # records come sorted by name: we are past ours
    except ClientError as exc:
        raise from_client_error(exc, f"read record {wanted}") from exc
    return tuple(found)


def transition(before: Sequence[RecordSet], after: Sequence[RecordSet]) -> list[ChangeTypeDef]:
    """The change batch turning record sets ``before`` into ``after`` (empty if equal).

    A record set ``before`` lacks is CREATEd: Route53 refuses the whole batch when one
    with its name, type and set identifier exists (``InvalidChangeBatch``, "Tried to
    create resource record set [...] but it already exists"; batches are all or
    nothing), so a record someone else made after ``before`` was read is refused, not
    overwritten. UPSERT, which overwrites whatever is there, is kept for the record sets
    ``before`` holds: those kubeshift read and means to replace. See
    https://docs.aws.amazon.com/Route53/latest/APIReference/API_Change.html and
    https://docs.aws.amazon.com/Route53/latest/APIReference/API_ChangeResourceRecordSets.html
    """
    old = {_key(rr): rr for rr in before}
    new = {_key(rr): rr for rr in after}
    changes: list[ChangeTypeDef] = [
        {"Action": "DELETE", "ResourceRecordSet": rr} for k, rr in old.items() if k not in new
    ]
    changes.extend(
        {"Action": "CREATE", "ResourceRecordSet": rr} for k, rr in new.items() if k not in old
    )
    changes.extend(
        {"Action": "UPSERT", "ResourceRecordSet": rr}
        for k, rr in new.items()
        if k in old and _norm(old[k]) != _norm(rr)
    )
    return changes


def _conflicting(current: Sequence[RecordSet], record_type: str) -> tuple[RecordSet, ...]:
    """The current record sets a record of ``record_type`` replaces."""
    if record_type == "CNAME":
        clash = [rr for rr in current if rr["Type"] in {"CNAME", "A", "AAAA"}]
    else:
        clash = [rr for rr in current if rr["Type"] in {record_type, "CNAME"}]
    others = sorted({rr["Type"] for rr in current} - {rr["Type"] for rr in clash})
    if record_type == "CNAME" and others:
        raise PreconditionFailed(
            f"Record {_name(current[0]['Name'])} also has {', '.join(others)} records, which a "
            "CNAME cannot coexist with; move or delete them first."
        )
    return tuple(clash)


# --- the plan: a sequence of states -----------------------------------------------------


@dataclass(frozen=True)
class PlanStep:
    """One state of a record on its way to the target: a label and its record sets."""

    label: str
    records: tuple[RecordSet, ...]


def plan_states(cutover: RecordCutover, current: Sequence[RecordSet]) -> list[PlanStep]:
    """The states the record goes through, from (excluding) its current one.

    Empty when the record is already in its final state. A weighted shift resumes
    after the weight the new record already has.
    """
    base = _conflicting(current, cutover.record_type)
    shift = cutover.weighted
    if shift is None:
        final = (_record_set(cutover),)
        return [] if not transition(base, final) else [PlanStep("switch", final)]

    final_plain = (_record_set(cutover),)
    if not transition(base, final_plain):
        return []
    if not base:  # nothing serves the name yet: no traffic to shift
        return [PlanStep("create", final_plain)]
    by_id = {rr.get("SetIdentifier"): rr for rr in base}
    old = by_id.get(shift.old_set_identifier)
    new_now = by_id.get(shift.new_set_identifier)
    if old is None:
        plain = [rr for rr in base if rr.get("SetIdentifier") is None]
        if len(plain) != 1 or len(base) != 1:
            raise PreconditionFailed(
                f"Record {cutover.fqdn} cannot be shifted by weight: expected one plain record "
                f"or a weighted pair '{shift.old_set_identifier}'/'{shift.new_set_identifier}', "
                f"found {len(base)} record set(s)."
            )
        old = plain[0]
    if old["Type"] != cutover.record_type:
        raise UserError(
            f"A weighted shift of {cutover.fqdn} needs the old and new records to be of one "
            f"type; the old is {old['Type']}, the new {cutover.record_type}. Switch at once."
        )
    done = int(new_now.get("Weight", 0)) if new_now else 0
    steps: list[PlanStep] = []
    for percent in shift.steps:
        if percent < done or (percent == done and not (percent == 100 and shift.collapse)):
            continue
        if percent == 100 and shift.collapse:
            steps.append(PlanStep("100% (plain record)", final_plain))
            continue
        old_weighted = old.copy()
        old_weighted.pop("SetIdentifier", None)
        old_weighted.pop("Weight", None)
        old_weighted["SetIdentifier"] = shift.old_set_identifier
        old_weighted["Weight"] = 100 - percent
        new_weighted = _record_set(cutover, set_identifier=shift.new_set_identifier, weight=percent)
        steps.append(PlanStep(f"{percent}%", (old_weighted, new_weighted)))
    return steps


# --- acting ----------------------------------------------------------------------------


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
    keys = {_key(rr) for rr in (*before, *after)}
    now = [rr for rr in read_records(route53, zone_id, name) if _key(rr) in keys]
    read = {_key(rr) for rr in before}
    wanted = {_key(rr): _norm(rr) for rr in after}
    foreign = [rr for rr in now if _key(rr) not in read and _norm(rr) != wanted.get(_key(rr))]
    if foreign:
        raise PreconditionFailed(
            f"Record {'; '.join(describe_record(rr) for rr in foreign)} appeared after "
            f"kubeshift read {_name(name)} and is not what kubeshift would create, so "
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
    base = _conflicting(current, cutover.record_type)
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
