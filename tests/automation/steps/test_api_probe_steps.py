"""The API probe through the record, as the sandbox judges it: moto says who the API
record reaches, a real etcd member must answer there, and the real API server must
answer ``/readyz``. Stopping the member's instance, or its etcd, opens a gap."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from automation.aws.clients import AwsAccess, AwsClients
from automation.config.etcd_settings import EtcdSettings
from automation.kube.api_probe import ApiProbe, Check, readyz
from automation.kube.clients import KubeClients
from automation.sandbox.binaries import Binaries
from automation.sandbox.etcd import Etcd, start_etcd
from automation.steps.api_probe import through_record
from tests.support.moto_fixtures import MotoServer
from tests.support.moto_world import MOTO_AMI, make_network, make_zone, put_record
from tests.support.waiting import eventually

pytestmark = [pytest.mark.moto, pytest.mark.controlplane]

ZONE = "example.test"
MEMBER = "10.1.1.1"  # reached on 127.0.0.1 through the address map, as the sandbox does


@pytest.fixture
def aws(moto: MotoServer) -> AwsClients:
    return AwsClients(AwsAccess(region=moto.region, endpoint_url=moto.endpoint_url))


@pytest.fixture
def member_etcd(testbin: Binaries, tmp_path: Path) -> Iterator[Etcd]:
    etcd = start_etcd(testbin.etcd, tmp_path)
    yield etcd
    etcd.stop()


def _settings(etcd: Etcd) -> EtcdSettings:
    port = urlsplit(etcd.url).port
    assert port is not None
    return EtcdSettings(
        scheme="http",
        client_port=port,
        peer_port=port + 1 if port < 65535 else port - 1,
        address_map={"10.1.1.0/24": "127.0.0.0/24"},  # type: ignore[dict-item]
    )


def _member(aws: AwsClients, kube: KubeClients, etcd: Etcd) -> tuple[str, Check]:
    """A running member instance the API record names, and the probe's check through it."""
    net = make_network(aws.ec2, "10.1.0.0/16", "10.1.0.0/23")
    made = aws.ec2.run_instances(
        ImageId=MOTO_AMI, MinCount=1, MaxCount=1, SubnetId=net.subnet_id,
        PrivateIpAddress=MEMBER,
    )  # fmt: skip
    zone_id = make_zone(aws.route53, ZONE)
    put_record(
        aws.route53, zone_id,
        {"Name": f"api.{ZONE}", "Type": "A", "TTL": 60, "ResourceRecords": [{"Value": MEMBER}]},
    )  # fmt: skip
    ask = readyz(kube.api_client.configuration, timeout=5)
    check = through_record(aws, zone_id, "api", _settings(etcd), ask)
    return str(made["Instances"][0]["InstanceId"]), check


def test_a_request_counts_only_while_the_record_reaches_a_running_member_with_its_etcd(
    aws: AwsClients, kube: KubeClients, member_etcd: Etcd
) -> None:
    instance, check = _member(aws, kube, member_etcd)
    assert check() is None

    aws.ec2.stop_instances(InstanceIds=[instance])
    stopped = check()
    assert stopped is not None and "no running instance holds it" in stopped
    aws.ec2.start_instances(InstanceIds=[instance])
    assert check() is None

    member_etcd.stop()
    down = check()
    assert down is not None and "no member whose etcd answers" in down and MEMBER in down


def test_stopping_the_member_opens_a_gap_the_report_names(
    aws: AwsClients, kube: KubeClients, member_etcd: Etcd
) -> None:
    instance, check = _member(aws, kube, member_etcd)

    with ApiProbe(check, interval=0.1) as probe:
        eventually("two answers", probe.report, until=lambda r: r.answered >= 2, timeout=30)
        aws.ec2.stop_instances(InstanceIds=[instance])
        eventually("a gap", probe.report, until=lambda r: len(r.gaps) == 1, timeout=30)
        aws.ec2.start_instances(InstanceIds=[instance])
        eventually(
            "the gap closed", probe.report, until=lambda r: r.gaps[0].end is not None, timeout=30
        )
    report = probe.report()
    assert len(report.gaps) == 1
    assert "no running instance holds it" in report.gaps[0].reason
    assert 0 < report.longest_gap < report.seconds
    assert report.answered < report.requests
