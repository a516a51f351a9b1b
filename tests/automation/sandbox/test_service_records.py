"""The live cluster's per-Service records: written once each Service has its balancer."""

from __future__ import annotations

import pytest

from automation.core.errors import GateTimeoutError
from automation.kube.clients import KubeClients
from automation.sandbox.service_records import TTL, publish
from automation.steps.service_dns import KUBESHIFT_DNS_NAMES
from tests.support.moto_fixtures import MotoServer
from tests.support.moto_world import make_zone


def _service(kube: KubeClients, namespace: str, name: str, dns: str | None) -> None:
    annotations = {KUBESHIFT_DNS_NAMES: dns} if dns else {}
    kube.core.create_namespaced_service(
        namespace,
        {
            "metadata": {"name": name, "annotations": annotations},
            "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]},
        },
    )


def _balanced(kube: KubeClients, namespace: str, name: str, hostname: str) -> None:
    """What the cloud controller writes once the balancer exists (the test plays it)."""
    kube.core.patch_namespaced_service_status(
        name, namespace, {"status": {"loadBalancer": {"ingress": [{"hostname": hostname}]}}}
    )


@pytest.mark.moto
@pytest.mark.controlplane
def test_records_wait_for_the_balancers_then_point_at_them(
    moto: MotoServer, kube: KubeClients, namespace: str
) -> None:
    route53 = moto.client("route53")
    zone = make_zone(route53, "shop.example.com")
    _service(kube, namespace, "web", "web.shop.example.com")
    _service(kube, namespace, "plain", None)  # no DNS name: not waited for, no record

    with pytest.raises(GateTimeoutError, match=f"{namespace}/web"):
        publish(kube.core, route53, zone, (namespace,), timeout=1.0)

    _balanced(kube, namespace, "web", "web-1.elb.example")
    records = publish(kube.core, route53, zone, (namespace,), timeout=5.0)
    assert [str(r) for r in records] == ["web.shop.example.com CNAME web-1.elb.example"]
    again = publish(kube.core, route53, zone, (namespace,), timeout=5.0)
    assert again == records
    sets = route53.list_resource_record_sets(HostedZoneId=zone)["ResourceRecordSets"]
    [record] = [s for s in sets if s["Type"] == "CNAME"]
    assert record["Name"] == "web.shop.example.com." and record["TTL"] == TTL
    assert record["ResourceRecords"] == [{"Value": "web-1.elb.example"}]
