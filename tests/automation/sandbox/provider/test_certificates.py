"""The stand-in provider's ``aws:acm`` certificate against a real moto server.

Created, checked against what boto3 sees, updated in place (tags), read back (also
from the declared inputs alone, as an import does), deleted twice and then read as
gone. Replacement is judged from ``replace_props()`` the way the servicer judges it.
(The ``moto`` fixture sets MOTO_ACM_VALIDATION_WAIT=0: certificates issue at once.)
"""

from __future__ import annotations

from typing import Any

import boto3
import pytest

from automation.sandbox.provider.model import (
    REGISTRY,
    Aws,
    NotFound,
    Props,
    Request,
    ResourceType,
)
from automation.sandbox.provider.types.certificates import Certificate
from tests.support.moto_fixtures import MotoServer

pytestmark = pytest.mark.moto


def requires_replace(kind: type[ResourceType], olds: Props, news: Props) -> bool:
    """Whether going from ``olds`` to ``news`` replaces a resource of ``kind``."""
    return any(olds.get(prop) != news.get(prop) for prop in kind.replace_props())


def request(kind: type[ResourceType]) -> Request:
    return Request(name="test", token=kind.token)


@pytest.fixture
def aws(moto: MotoServer) -> Aws:
    return Aws(region=moto.region, endpoint_url=moto.endpoint_url)


@pytest.fixture
def acm(moto: MotoServer) -> Any:
    return moto.client("acm")


def test_certificate(aws: Aws, acm: Any) -> None:
    certificates = REGISTRY[Certificate.token]
    # As components/cni_swap.py declares it: the SANs without the domain itself.
    declared = {
        "domainName": "*.apps.example.com",
        "subjectAlternativeNames": ["apps.example.com", "mirror.internal"],
        "validationMethod": "DNS",
        "tags": {"a": "1"},
    }
    inputs = certificates.check(request(Certificate), declared)
    assert inputs["subjectAlternativeNames"] == [
        "*.apps.example.com",
        "apps.example.com",
        "mirror.internal",
    ]
    arn, outputs = certificates.create(aws, request(Certificate), inputs)
    assert certificates.read(aws, request(Certificate), arn, outputs) == outputs
    assert certificates.read(aws, request(Certificate), arn, inputs) == outputs

    live = acm.describe_certificate(CertificateArn=arn)["Certificate"]
    assert live["DomainName"] == "*.apps.example.com"
    assert sorted(live["SubjectAlternativeNames"]) == inputs["subjectAlternativeNames"]
    assert outputs["arn"] == arn and arn.startswith("arn:aws:acm:eu-west-1:")
    assert outputs["status"] == "ISSUED"
    assert outputs["validationMethod"] == "DNS"
    assert outputs["subjectAlternativeNames"] == inputs["subjectAlternativeNames"]
    assert [o["domainName"] for o in outputs["domainValidationOptions"]] == sorted(
        inputs["subjectAlternativeNames"]
    )
    assert all(o["resourceRecordType"] == "CNAME" for o in outputs["domainValidationOptions"])
    assert outputs["tags"] == outputs["tagsAll"] == {"a": "1"}
    assert outputs["region"] == "eu-west-1"

    for change in (
        {"domainName": "other.example.com"},
        {"subjectAlternativeNames": ["*.apps.example.com"]},
        {"validationMethod": "EMAIL"},
        {"keyAlgorithm": "EC_prime256v1"},
        {"region": "us-east-1"},
    ):
        assert requires_replace(Certificate, outputs, {**outputs, **change})
    assert not requires_replace(Certificate, outputs, {**outputs, "tags": {"b": "2"}})

    news = certificates.check(request(Certificate), {**outputs, "tags": {"b": "2"}})
    outputs = certificates.update(aws, request(Certificate), arn, outputs, news)
    assert acm.list_tags_for_certificate(CertificateArn=arn)["Tags"] == [{"Key": "b", "Value": "2"}]
    assert outputs["tagsAll"] == {"b": "2"}
    assert certificates.read(aws, request(Certificate), arn, outputs) == outputs

    certificates.delete(aws, request(Certificate), arn, outputs)
    certificates.delete(aws, request(Certificate), arn, outputs)
    with pytest.raises(NotFound):
        certificates.read(aws, request(Certificate), arn, outputs)
    assert acm.list_certificates()["CertificateSummaryList"] == []


def test_certificate_in_another_region(aws: Aws, moto: MotoServer) -> None:
    certificates = REGISTRY[Certificate.token]
    declared = {"domainName": "example.com", "validationMethod": "DNS", "region": "us-east-1"}
    inputs = certificates.check(request(Certificate), declared)
    arn, outputs = certificates.create(aws, request(Certificate), inputs)
    assert arn.startswith("arn:aws:acm:us-east-1:")
    assert outputs["region"] == "us-east-1"
    assert outputs["subjectAlternativeNames"] == ["example.com"]
    virginia = boto3.client("acm", region_name="us-east-1", endpoint_url=moto.endpoint_url)
    assert virginia.describe_certificate(CertificateArn=arn)["Certificate"]["Status"] == "ISSUED"
    assert moto.client("acm").list_certificates()["CertificateSummaryList"] == []
    certificates.delete(aws, request(Certificate), arn, outputs)
    assert virginia.list_certificates()["CertificateSummaryList"] == []


def test_certificate_check() -> None:
    certificates = REGISTRY[Certificate.token]
    with pytest.raises(ValueError, match="validationMethod"):
        certificates.check(request(Certificate), {"domainName": "example.com"})
    with pytest.raises(ValueError, match="period"):
        certificates.check(
            request(Certificate), {"domainName": "example.com.", "validationMethod": "DNS"}
        )
    with pytest.raises(ValueError, match="imported"):
        certificates.check(request(Certificate), {"certificateBody": "x", "privateKey": "y"})
