"""DNS cutover racing other writers and its own earlier attempts, on moto's Route53
patched to refuse a CREATE of a record set that exists, as AWS does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from automation.aws.clients import AwsClients
from automation.aws.dns.cutover import apply_transition, cutover_record
from automation.aws.dns.requests import ARecordTarget, CnameTarget, RecordCutover, SyncOptions
from tests.automation.aws.test_dns import cname, values
from tests.support.moto_fixtures import MotoServer
from tests.support.moto_world import make_zone, put_record

NAME = "app.example.com"
CHANGE = "provide-client-params.route53.ChangeResourceRecordSets"


def _batches(aws: AwsClients, first: Callable[[], None] = lambda: None) -> list[list[str]]:
    """The batches kubeshift's client sends, as ``ACTION type set-id`` lines; ``first``
    runs just before the first one goes out (someone else writing in between)."""
    sent: list[list[str]] = []

    def spy(params: dict[str, Any], **_: Any) -> None:
        if not sent:
            first()
        sent.append(
            [
                f"{c['Action']} {c['ResourceRecordSet']['Type']} "
                f"{c['ResourceRecordSet'].get('SetIdentifier')}"
                for c in params["ChangeBatch"]["Changes"]
            ]
        )

    aws.route53.meta.events.register(CHANGE, spy)
    return sent


def _weighted(set_id: str, weight: int, value: str) -> dict[str, Any]:
    return cname(value, SetIdentifier=set_id, Weight=weight)


@pytest.fixture
def zone(aws: AwsClients) -> str:
    return make_zone(aws.route53)


@pytest.mark.moto
def test_a_record_someone_else_created_after_the_read_is_refused_not_overwritten(
    aws: AwsClients, zone: str, moto: MotoServer
) -> None:
    theirs = cname("theirs.example.net")
    sent = _batches(aws, lambda: put_record(moto.client("route53"), zone, theirs))
    cutover = RecordCutover(zone_id=zone, name=NAME, target=CnameTarget(value="new-lb.elb"))
    report = cutover_record(aws.route53, None, cutover, sync=SyncOptions(timeout=5, interval=0.01))
    assert report.status == "failed", report.message
    assert "app.example.com. CNAME theirs.example.net appeared after kubeshift read" in (
        report.message
    )
    assert sent == [["CREATE CNAME None"]]  # refused, and not sent again
    assert values(aws.route53, zone) == [("CNAME", None, None, "theirs.example.net")]


@pytest.mark.moto
def test_a_retry_after_a_partial_attempt_creates_only_the_missing_record_sets(
    aws: AwsClients, zone: str
) -> None:
    old, new = _weighted("kubeshift-old", 90, "old-lb.elb"), _weighted("kubeshift-new", 10, "new")
    put_record(aws.route53, zone, new)  # an earlier attempt's, as kubeshift would write it
    sent = _batches(aws)
    change_id = apply_transition(aws.route53, zone, NAME, (), (old, new), "kubeshift test")
    assert change_id is not None
    assert sent == [
        ["CREATE CNAME kubeshift-old", "CREATE CNAME kubeshift-new"],  # refused: new exists
        ["CREATE CNAME kubeshift-old"],
    ]
    assert values(aws.route53, zone) == [
        ("CNAME", "kubeshift-new", 10, "new"),
        ("CNAME", "kubeshift-old", 90, "old-lb.elb"),
    ]


@pytest.mark.moto
def test_a_batch_whose_earlier_attempt_landed_is_not_sent_again(
    aws: AwsClients, zone: str, moto: MotoServer
) -> None:
    """As when botocore resends a request whose answer was lost: the switch stands."""
    put_record(aws.route53, zone, cname("old-lb.elb"))
    landed = [
        {"Action": "DELETE", "ResourceRecordSet": cname("old-lb.elb")},
        {"Action": "CREATE", "ResourceRecordSet": {
            "Name": NAME, "Type": "A", "TTL": 60, "ResourceRecords": [{"Value": "10.1.1.10"}]}},
    ]  # fmt: skip

    def first_attempt() -> None:
        moto.client("route53").change_resource_record_sets(
            HostedZoneId=zone, ChangeBatch={"Changes": landed}
        )

    sent = _batches(aws, first_attempt)
    cutover = RecordCutover(zone_id=zone, name=NAME, target=ARecordTarget(addresses=("10.1.1.10",)))
    report = cutover_record(aws.route53, None, cutover, sync=SyncOptions(timeout=5, interval=0.01))
    assert (report.status, report.change_ids) == ("switched", ()), report.message
    assert sent == [["DELETE CNAME None", "CREATE A None"]]
    assert values(aws.route53, zone) == [("A", None, None, "10.1.1.10")]
