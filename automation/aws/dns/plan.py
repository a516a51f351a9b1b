"""The plan of a DNS cutover: the states a record goes through to reach its target.

A plain switch is one state; a weighted shift is one state per step (old and new record
sets weighted), resumed after the weight the new one already has, and collapsed to a
plain record at 100 %. A record already in its final state has no plan, so a resumed
run changes nothing twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from automation.aws.dns.records import RecordSet, conflicting, request_name, transition
from automation.aws.dns.requests import AliasTarget, CnameTarget, RecordCutover
from automation.core.errors import PreconditionFailed, UserError


def _record_set(
    cutover: RecordCutover, *, set_identifier: str | None = None, weight: int | None = None
) -> RecordSet:
    target = cutover.target
    rr: RecordSet = {"Name": request_name(cutover.name), "Type": cutover.record_type}
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
    base = conflicting(current, cutover.record_type)
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
