"""DNS cutover against moto's Route53 and ELBv2: switch, flip types, weights, rollback."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from automation.aws.clients import AwsClients
from automation.aws.dns.cutover import cutover_record, cutover_records, is_cut_over, wait_insync
from automation.aws.dns.records import read_records
from automation.aws.dns.requests import (
    AliasTarget,
    ARecordTarget,
    CnameTarget,
    RecordCutover,
    SyncOptions,
    TargetCheck,
    WeightedShift,
)
from automation.aws.probe import HttpProbe
from automation.core.errors import PreconditionFailed, StepFailedError
from automation.core.progress import NullReporter
from automation.core.waiting import Pending
from tests.automation.aws.conftest import Site
from tests.support.moto_patches import override_target_health, route53_change_status
from tests.support.moto_world import (
    make_network,
    make_target_group,
    make_zone,
    put_record,
    records_named,
    run_instances,
)

FAST = SyncOptions(timeout=5, interval=0.01)
NAME = "app.example.com"


def cname(value: str, name: str = NAME, **extra: Any) -> dict[str, Any]:
    return {
        "Name": name,
        "Type": "CNAME",
        "TTL": 60,
        "ResourceRecords": [{"Value": value}],
        **extra,
    }


def values(route53: Any, zone: str, name: str = NAME) -> list[tuple[Any, ...]]:
    """(type, set id, weight, value) of every record set at ``name``, sorted."""
    out = []
    for rr in records_named(route53, zone, name):
        value = (
            rr["AliasTarget"]["DNSName"]
            if "AliasTarget" in rr
            else ",".join(v["Value"] for v in rr["ResourceRecords"])
        )
        out.append((rr["Type"], rr.get("SetIdentifier"), rr.get("Weight"), value))
    return sorted(out, key=str)


@pytest.fixture
def zone(aws: AwsClients) -> str:
    return make_zone(aws.route53)


@pytest.fixture
def new_group(aws: AwsClients) -> tuple[str, list[str]]:
    net = make_network(aws.ec2, "10.1.0.0/16")
    ids = [i["InstanceId"] for i in run_instances(aws.ec2, net, 2)]
    return make_target_group(aws.elbv2, net.vpc_id, "web-new", ids), ids


def run(aws: AwsClients, cutover: RecordCutover, **kwargs: Any) -> Any:
    kwargs.setdefault("sync", FAST)
    kwargs.setdefault("sleep", lambda _: None)
    return cutover_record(aws.route53, aws.elbv2, cutover, **kwargs)


@pytest.mark.moto
def test_cname_switch_is_checked_applied_and_idempotent(
    aws: AwsClients, zone: str, new_group: tuple[str, list[str]]
) -> None:
    put_record(aws.route53, zone, cname("old-lb.elb.amazonaws.com"))
    cutover = RecordCutover(
        zone_id=zone,
        name=NAME,
        target=CnameTarget(value="new-lb.elb.amazonaws.com"),
        check=TargetCheck(target_group_arns=(new_group[0],), timeout=1, interval=0.01),
    )
    report = run(aws, cutover)
    assert report.status == "switched", report.message
    assert report.before == ("app.example.com. CNAME old-lb.elb.amazonaws.com",)
    assert values(aws.route53, zone) == [("CNAME", None, None, "new-lb.elb.amazonaws.com")]

    again = run(aws, cutover)
    assert (again.status, again.change_ids) == ("unchanged", ())


@pytest.mark.moto
@pytest.mark.parametrize(
    ("start", "target", "expected"),
    [
        (
            cname("api-lb.elb.amazonaws.com"),
            ARecordTarget(addresses=("10.1.1.10",)),
            [("A", None, None, "10.1.1.10")],
        ),
        (
            {"Name": NAME, "Type": "A", "TTL": 60, "ResourceRecords": [{"Value": "10.1.1.10"}]},
            CnameTarget(value="api-lb-new.elb.amazonaws.com"),
            [("CNAME", None, None, "api-lb-new.elb.amazonaws.com")],
        ),
        (
            None,
            CnameTarget(value="fresh.elb.amazonaws.com"),
            [("CNAME", None, None, "fresh.elb.amazonaws.com")],
        ),
    ],
    ids=["cname-to-a", "a-to-cname", "new-record"],
)
def test_type_flips_replace_the_old_record_atomically(
    aws: AwsClients,
    zone: str,
    start: dict[str, Any] | None,
    target: Any,
    expected: list[tuple[Any, ...]],
) -> None:
    """moto lets CNAME and A coexist; the cutover must DELETE the old type in the batch."""
    if start:
        put_record(aws.route53, zone, start)
    report = run(aws, RecordCutover(zone_id=zone, name=NAME, target=target))
    assert report.status == "switched", report.message
    assert values(aws.route53, zone) == expected


@pytest.mark.moto
def test_alias_to_a_load_balancer(aws: AwsClients, zone: str) -> None:
    net = make_network(aws.ec2)
    lb = aws.elbv2.create_load_balancer(Name="api", Subnets=[net.subnet_id], Scheme="internal")
    balancer = lb["LoadBalancers"][0]
    put_record(aws.route53, zone, cname("old-lb.elb.amazonaws.com"))
    target = AliasTarget(
        dns_name=balancer["DNSName"], hosted_zone_id=balancer["CanonicalHostedZoneId"]
    )
    cutover = RecordCutover(zone_id=zone, name=NAME, target=target)
    assert run(aws, cutover).status == "switched"
    [record] = records_named(aws.route53, zone, NAME)
    assert record["Type"] == "A"
    assert record["AliasTarget"]["DNSName"].rstrip(".") == balancer["DNSName"]
    assert run(aws, cutover).status == "unchanged"


@pytest.mark.moto
def test_dry_run_checks_and_says_what_it_would_send(aws: AwsClients, zone: str) -> None:
    put_record(aws.route53, zone, cname("old-lb.elb.amazonaws.com"))
    cutover = RecordCutover(
        zone_id=zone, name=NAME, target=ARecordTarget(addresses=("10.1.1.10", "10.1.1.11"))
    )
    report = run(aws, cutover, dry_run=True)
    assert report.status == "would-switch"
    assert "DELETE app.example.com. CNAME old-lb.elb.amazonaws.com" in report.message
    assert "CREATE app.example.com. A 10.1.1.10,10.1.1.11" in report.message
    assert values(aws.route53, zone) == [("CNAME", None, None, "old-lb.elb.amazonaws.com")]


@pytest.mark.moto
def test_unhealthy_new_target_leaves_the_record_alone(
    aws: AwsClients, zone: str, new_group: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unhealthy target injected by patching moto's in-process ELBv2 backend."""
    arn, ids = new_group
    override_target_health(monkeypatch, {ids[0]: ("unhealthy", "Target.Timeout", "")})
    put_record(aws.route53, zone, cname("old-lb.elb.amazonaws.com"))
    cutover = RecordCutover(
        zone_id=zone,
        name=NAME,
        target=CnameTarget(value="new-lb.elb.amazonaws.com"),
        check=TargetCheck(target_group_arns=(arn,), timeout=0.05, interval=0.01),
    )
    report = cutover_record(aws.route53, aws.elbv2, cutover, sync=FAST)
    assert report.status == "failed"
    assert "record left alone" in report.message
    assert f"{ids[0]}:80 unhealthy (Target.Timeout)" in report.message
    assert values(aws.route53, zone) == [("CNAME", None, None, "old-lb.elb.amazonaws.com")]


def _probed(site: Site, **kwargs: Any) -> TargetCheck:
    probe = HttpProbe(url=f"http://{NAME}/healthz", connect_to=site.address, **kwargs)
    return TargetCheck(probe=probe)


@pytest.mark.moto
def test_probe_through_the_new_endpoint_gates_the_switch(
    aws: AwsClients, zone: str, site: Site
) -> None:
    """A real HTTP server on 127.0.0.1 plays the new endpoint."""
    put_record(aws.route53, zone, cname("old-lb.elb.amazonaws.com"))
    cutover = RecordCutover(
        zone_id=zone, name=NAME, target=CnameTarget(value="new-lb"), check=_probed(site)
    )
    site.answer(503)
    refused = run(aws, cutover)
    assert refused.status == "failed"
    assert "answered 503 (expected 200)" in refused.message
    assert site.hosts == [NAME]  # the record's name, sent to the new endpoint

    site.answer(200)
    assert run(aws, cutover).status == "switched"


@pytest.mark.moto
def test_failed_check_after_the_switch_rolls_back(aws: AwsClients, zone: str, site: Site) -> None:
    """The new endpoint serves before the switch and fails after it: the old value returns."""
    put_record(aws.route53, zone, cname("old-lb.elb.amazonaws.com"))
    cutover = RecordCutover(
        zone_id=zone,
        name=NAME,
        target=ARecordTarget(addresses=("10.1.1.10",)),
        check=_probed(site),
    )
    site.answer(200, 502)
    report = run(aws, cutover)
    assert report.status == "rolled-back", report.message
    assert "answered 502" in report.message
    assert len(report.change_ids) == 2
    assert values(aws.route53, zone) == [("CNAME", None, None, "old-lb.elb.amazonaws.com")]
    site.answer(200, 502)
    with pytest.raises(StepFailedError, match=r"app\.example\.com\.: after switch"):
        cutover_records(
            aws.route53, aws.elbv2, [cutover], sync=FAST, sleep=lambda _: None
        ).as_hook_result()


@pytest.mark.moto
def test_waits_for_insync_and_reports_pending(
    aws: AwsClients, zone: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """moto answers INSYNC at once; its in-process GetChange is patched to PENDING twice."""
    answers = iter(["PENDING", "PENDING", "INSYNC"])
    polled = route53_change_status(monkeypatch, lambda _id: next(answers))
    seen: list[Pending] = []

    class Recorder(NullReporter):
        def on_wait(self, what: str, status: Pending, remaining: float) -> None:
            seen.append(status)

    cutover = RecordCutover(zone_id=zone, name=NAME, target=CnameTarget(value="new-lb"))
    report = run(aws, cutover, reporter=Recorder())
    assert report.status == "switched"
    assert len(polled) == 3
    assert [s.done for s in seen] == [False, False, True]
    assert seen[0].items[0].endswith("PENDING")


@pytest.mark.moto
def test_change_never_insync_rolls_back(
    aws: AwsClients, zone: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GetChange patched in moto's backend to stay PENDING: deadline, then rollback."""
    route53_change_status(monkeypatch, lambda _id: "PENDING")
    put_record(aws.route53, zone, cname("old-lb.elb.amazonaws.com"))
    cutover = RecordCutover(zone_id=zone, name=NAME, target=CnameTarget(value="new-lb"))
    report = run(aws, cutover, sync=SyncOptions(timeout=0.05, interval=0.01))
    assert report.status == "rolled-back"
    assert "Timed out" in report.message and "not yet in sync" in report.message
    assert values(aws.route53, zone) == [("CNAME", None, None, "old-lb.elb.amazonaws.com")]


@pytest.mark.moto
def test_refused_change_leaves_the_record_unchanged(aws: AwsClients, zone: str) -> None:
    """moto refuses a name outside the zone, as Route53 does: nothing to roll back."""
    cutover = RecordCutover(zone_id=zone, name="app.other.org", target=CnameTarget(value="x"))
    report = run(aws, cutover)
    assert report.status == "failed"
    assert "AWS refused to change records" in report.message
    assert report.message.endswith("record unchanged")


@pytest.mark.moto
def test_cname_cannot_join_other_record_types(aws: AwsClients, zone: str) -> None:
    put_record(
        aws.route53,
        zone,
        {"Name": NAME, "Type": "A", "TTL": 60, "ResourceRecords": [{"Value": "10.0.0.1"}]},
    )
    put_record(
        aws.route53,
        zone,
        {"Name": NAME, "Type": "TXT", "TTL": 60, "ResourceRecords": [{"Value": '"v=1"'}]},
    )
    cutover = RecordCutover(zone_id=zone, name=NAME, target=CnameTarget(value="new-lb"))
    with pytest.raises(PreconditionFailed, match="also has TXT records"):
        run(aws, cutover)


# --- weighted shifts ------------------------------------------------------------------


def _weighted(zone: str, site: Site | None = None, **shift: Any) -> RecordCutover:
    return RecordCutover(
        zone_id=zone,
        name=NAME,
        target=CnameTarget(value="new-lb"),
        weighted=WeightedShift(old_set_identifier="old", new_set_identifier="new", **shift),
        check=_probed(site) if site else TargetCheck(),
    )


@pytest.mark.moto
def test_weighted_shift_walks_the_steps_then_collapses(aws: AwsClients, zone: str) -> None:
    put_record(aws.route53, zone, cname("old-lb"))
    states: list[list[tuple[Any, ...]]] = []

    def prober(probe: HttpProbe, endpoint: str | None) -> Any:
        from automation.aws.probe import ProbeResult

        states.append(values(aws.route53, zone))
        return ProbeResult(True, 200, "ok")

    cutover = _weighted(zone, steps=(10, 50, 100)).model_copy(
        update={"check": TargetCheck(probe=HttpProbe(url=f"http://{NAME}/"))}
    )
    report = run(aws, cutover, prober=prober)
    assert report.status == "switched", report.message
    assert states == [
        [("CNAME", None, None, "old-lb")],  # before
        [("CNAME", "new", 10, "new-lb"), ("CNAME", "old", 90, "old-lb")],
        [("CNAME", "new", 50, "new-lb"), ("CNAME", "old", 50, "old-lb")],
        [("CNAME", None, None, "new-lb")],
    ]
    assert len(report.change_ids) == 3
    assert run(aws, cutover, prober=prober).status == "unchanged"


@pytest.mark.moto
def test_weighted_shift_resumes_after_the_weight_already_reached(
    aws: AwsClients, zone: str
) -> None:
    put_record(aws.route53, zone, cname("old-lb", SetIdentifier="old", Weight=50))
    put_record(aws.route53, zone, cname("new-lb", SetIdentifier="new", Weight=50))
    report = run(aws, _weighted(zone, steps=(10, 50, 100), collapse=False))
    assert report.status == "switched"
    assert len(report.change_ids) == 1
    assert values(aws.route53, zone) == [
        ("CNAME", "new", 100, "new-lb"),
        ("CNAME", "old", 0, "old-lb"),
    ]
    assert run(aws, _weighted(zone, steps=(10, 50, 100), collapse=False)).status == "unchanged"


@pytest.mark.moto
def test_weighted_shift_rolls_back_to_the_plain_record(
    aws: AwsClients, zone: str, site: Site
) -> None:
    """Probe fails after the 50% step (real HTTP server): both weighted sets go, old returns."""
    put_record(aws.route53, zone, cname("old-lb"))
    site.answer(200, 200, 500)  # before, after 10%, after 50%
    report = run(aws, _weighted(zone, site, steps=(10, 50, 100)))
    assert report.status == "rolled-back"
    assert "after 50%" in report.message
    assert values(aws.route53, zone) == [("CNAME", None, None, "old-lb")]


@pytest.mark.moto
def test_weighted_shift_needs_one_record_type(aws: AwsClients, zone: str) -> None:
    put_record(aws.route53, zone, cname("old-lb"))
    cutover = RecordCutover(
        zone_id=zone,
        name=NAME,
        target=ARecordTarget(addresses=("10.0.0.1",)),
        weighted=WeightedShift(),
    )
    with pytest.raises(Exception, match="needs the old and new records to be of one type"):
        run(aws, cutover)


# --- several records --------------------------------------------------------------------


@pytest.mark.moto
@pytest.mark.parametrize(
    ("continue_on_failure", "third"),
    [(False, "skipped"), (True, "switched")],
    ids=["stop-after-failure", "continue-after-failure"],
)
def test_several_records_report_each(
    aws: AwsClients, zone: str, site: Site, continue_on_failure: bool, third: str
) -> None:
    site.answer(503)
    cutovers = [
        RecordCutover(zone_id=zone, name="a.example.com", target=CnameTarget(value="new-a")),
        RecordCutover(
            zone_id=zone,
            name="b.example.com",
            target=CnameTarget(value="new-b"),
            check=_probed(site),
        ),
        RecordCutover(zone_id=zone, name="c.example.com", target=CnameTarget(value="new-c")),
    ]
    report = cutover_records(
        aws.route53,
        aws.elbv2,
        cutovers,
        sync=FAST,
        continue_on_failure=continue_on_failure,
        sleep=lambda _: None,
    )
    assert [r.status for r in report.records] == ["switched", "failed", third]
    assert not report.ok and report.changed
    skipped = r" Not attempted: c\.example\.com\.\.$" if third == "skipped" else r"\)\.$"
    with pytest.raises(
        StepFailedError, match=r"1 record\(s\)\. b\.example\.com\.: new t.*" + skipped
    ):
        report.raise_for_failure()


@pytest.mark.moto
def test_dry_run_of_several_records_is_a_hook_result(aws: AwsClients, zone: str) -> None:
    cutovers = [
        RecordCutover(zone_id=zone, name=f"{n}.example.com", target=CnameTarget(value="lb"))
        for n in ("a", "b")
    ]
    result = cutover_records(aws.route53, aws.elbv2, cutovers, dry_run=True).as_hook_result()
    assert result.changed is False
    assert result.message == "dry-run: would-switch: a.example.com., b.example.com."
    assert aws.route53.list_resource_record_sets(HostedZoneId=zone)["ResourceRecordSets"][0][
        "Type"
    ] in {"NS", "SOA"}


# --- paging ------------------------------------------------------------------------------


def test_reading_a_weighted_set_follows_next_record_identifier() -> None:
    """moto never returns ``NextRecordIdentifier``: botocore's Stubber plays Route53."""
    route53 = boto3.client(
        "route53", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    page1 = [cname(f"lb-{i}", name=f"{NAME}.", SetIdentifier=f"s{i}", Weight=1) for i in (1, 2)]
    page2 = [
        cname("lb-3", name=f"{NAME}.", SetIdentifier="s3", Weight=1),
        cname("z", name="zz.example.com."),
    ]
    with Stubber(route53) as stub:
        stub.add_response(
            "list_resource_record_sets",
            {
                "ResourceRecordSets": page1,
                "IsTruncated": True,
                "MaxItems": "2",
                "NextRecordName": f"{NAME}.",
                "NextRecordType": "CNAME",
                "NextRecordIdentifier": "s3",
            },
            {"HostedZoneId": "Z1", "StartRecordName": NAME},
        )
        stub.add_response(
            "list_resource_record_sets",
            {
                "ResourceRecordSets": page2,
                "IsTruncated": True,
                "MaxItems": "2",
                "NextRecordName": "zz.example.com.",
                "NextRecordType": "CNAME",
            },
            {
                "HostedZoneId": "Z1",
                "StartRecordName": f"{NAME}.",
                "StartRecordType": "CNAME",
                "StartRecordIdentifier": "s3",
            },
        )
        found = read_records(route53, "Z1", NAME)
        stub.assert_no_pending_responses()
    assert [rr["SetIdentifier"] for rr in found] == ["s1", "s2", "s3"]
    assert all(rr["Name"] == NAME for rr in found)


def test_a_failing_get_change_is_an_error_not_a_wait() -> None:
    """moto's GetChange never fails: Stubber plays Route53's ``NoSuchChange``."""
    route53 = boto3.client(
        "route53", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    with Stubber(route53) as stub:
        stub.add_client_error("get_change", service_error_code="NoSuchChange", http_status_code=404)
        with pytest.raises(StepFailedError, match="AWS refused to read change C1: NoSuchChange"):
            wait_insync(route53, "C1", what="app", options=FAST, sleep=lambda _: None)


@pytest.mark.moto
def test_dry_run_reports_a_target_that_does_not_serve_yet(
    aws: AwsClients, zone: str, site: Site
) -> None:
    """In a scenario dry run the new target is not up yet: reported, not fatal, no wait."""
    put_record(aws.route53, zone, cname("old-lb"))
    site.answer(503)
    cutover = RecordCutover(
        zone_id=zone,
        name=NAME,
        target=CnameTarget(value="new-lb"),
        check=TargetCheck(
            target_group_arns=("arn:aws:elasticloadbalancing:eu-west-1:1:targetgroup/gone/1",),
            probe=HttpProbe(url=f"http://{NAME}/", connect_to=site.address),
        ),
    )
    report = run(aws, cutover, dry_run=True)
    assert report.status == "would-switch"
    assert "once the new target serves; now: AWS refused to describe targets" in report.message
    assert values(aws.route53, zone) == [("CNAME", None, None, "old-lb")]
    assert not is_cut_over(aws.route53, cutover)


@pytest.mark.moto
def test_weighted_shift_of_a_new_name_just_creates_it(aws: AwsClients, zone: str) -> None:
    cutover = _weighted(zone)
    report = run(aws, cutover)
    assert report.status == "switched" and len(report.change_ids) == 1
    assert values(aws.route53, zone) == [("CNAME", None, None, "new-lb")]
    assert is_cut_over(aws.route53, cutover)
