"""DNS component: CNAMEs (or aliases) to LBs, A records to addresses, create-before-replace."""

from __future__ import annotations

import pytest

from automation.review.render import record
from components.dns import Dns, DnsArgs, RecordSpec
from tests.components.conftest import by_type


def test_records() -> None:
    def program() -> None:
        Dns(
            "dns",
            DnsArgs(
                zone_id="Z1",
                records={
                    "api": RecordSpec("api.example.com", "A", ["10.1.0.10"]),
                    "ingress-0": RecordSpec("*.apps.example.com", "CNAME", ["lb.elb.aws"]),
                },
                ttl=30,
            ),
        )

    records = {r.name: r for r in by_type(record(program).resources, "aws:route53/record:Record")}
    assert records["dns-api"].inputs == {
        "zoneId": "Z1",
        "name": "api.example.com",
        "type": "A",
        "ttl": 30,
        "records": ["10.1.0.10"],
    }
    assert records["dns-ingress-0"].inputs["records"] == ["lb.elb.aws"]
    # a replacement (new name or zone) creates first: no moment without an answer
    assert not any(r.options.get("deleteBeforeReplace") for r in records.values())


def test_cname_needs_one_target() -> None:
    with pytest.raises(ValueError, match="exactly one target"):
        record(lambda: Dns("d", DnsArgs("Z1", {"x": RecordSpec("x.example.com", "CNAME", [])})))


def test_an_alias_record_points_at_its_load_balancer_without_a_ttl() -> None:
    """kops's API record: an A record aliased to the NLB, which Route53 answers for."""

    def program() -> None:
        Dns(
            "dns",
            DnsArgs(
                zone_id="Z1",
                records={"api": RecordSpec("api.example.com", "A", ["api.elb.aws"], "Z2LB")},
                ttl=30,
            ),
        )

    (api,) = by_type(record(program).resources, "aws:route53/record:Record")
    assert api.inputs == {
        "zoneId": "Z1",
        "name": "api.example.com",
        "type": "A",
        "aliases": [{"name": "api.elb.aws", "zoneId": "Z2LB", "evaluateTargetHealth": False}],
    }


def test_an_alias_needs_one_target() -> None:
    two = RecordSpec("x.example.com", "A", ["a.elb.aws", "b.elb.aws"], "Z2LB")
    with pytest.raises(ValueError, match="exactly one target"):
        record(lambda: Dns("d", DnsArgs("Z1", {"x": two})))
