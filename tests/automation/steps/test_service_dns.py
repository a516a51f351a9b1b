"""Per-service DNS: names from annotations, zones, readiness, and a real cutover.

The control-plane test reads Services on the mirror cluster (load balancer status posted
through the status subresource, endpoints from kwok-run pods via the EndpointSlice
controller) and moves the records in moto's Route53 with ``cutover_records``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes.client import (
    AppsV1Api,
    CoreV1Api,
    V1Namespace,
    V1ObjectMeta,
    V1Service,
    V1ServicePort,
    V1ServiceSpec,
)
from kubernetes.client.exceptions import ApiException

from automation.aws.clients import AwsAccess, AwsClients
from automation.aws.dns.cutover import cutover_records
from automation.aws.dns.requests import ARecordTarget, CnameTarget, SyncOptions
from automation.core.errors import PreconditionFailed
from automation.kube.clients import KubeClients
from automation.sandbox.controlplane import Cluster
from automation.steps.service_dns import (
    EXTERNAL_DNS_HOSTNAME,
    KUBESHIFT_DNS_NAMES,
    DnsPlan,
    ServiceEndpoint,
    dns_names,
    plan_service_dns,
    ready_endpoints,
    services_serving,
    zone_for,
)
from tests.support.moto_fixtures import MotoServer
from tests.support.moto_world import make_zone, put_record, records_named
from tests.support.nodes import NodePools, NodePoolSpec
from tests.support.waiting import eventually
from tests.support.workloads import deployment

# --- names and zones -----------------------------------------------------------------


def _svc(annotations: dict[str, str]) -> dict[str, Any]:
    return {"metadata": {"name": "web", "namespace": "shop", "annotations": annotations}}


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        ({EXTERNAL_DNS_HOSTNAME: "shop.example.com"}, ("shop.example.com",)),
        (
            {
                EXTERNAL_DNS_HOSTNAME: "b.example.com, A.Example.com.,",
                KUBESHIFT_DNS_NAMES: "a.example.com",
            },
            ("a.example.com", "b.example.com"),
        ),
        ({KUBESHIFT_DNS_NAMES: " api.example.com "}, ("api.example.com",)),
        ({"other": "x.example.com"}, ()),
        ({EXTERNAL_DNS_HOSTNAME: " , "}, ()),
    ],
    ids=["external-dns", "both-merged-normalised", "kubeshift-only", "unrelated", "blank"],
)
def test_dns_names(annotations: dict[str, str], expected: tuple[str, ...]) -> None:
    assert dns_names(_svc(annotations)) == expected


ZONES = {"example.com": "ZPARENT", "shop.example.com.": "ZCHILD"}


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("www.example.com", ("example.com", "ZPARENT")),
        ("web.shop.example.com", ("shop.example.com", "ZCHILD")),
        ("shop.example.com", ("shop.example.com", "ZCHILD")),
        ("notexample.com", None),
        ("example.org", None),
    ],
    ids=["parent", "most-specific", "apex", "suffix-trap", "outside"],
)
def test_zone_for(name: str, expected: tuple[str, str] | None) -> None:
    assert zone_for(name, ZONES) == expected


def test_plan_reports_not_ready_services_and_refuses() -> None:
    plan = DnsPlan(
        (
            ServiceEndpoint("shop", "web", ("shop.example.com",), "lb-1.elb", (), 2),
            ServiceEndpoint(
                "shop", "idle", ("idle.example.com",), "lb-2.elb", (), 0, ("0 ready endpoints",)
            ),
        ),
        (),
        "mirror",
    )
    pending = plan.pending()
    assert pending.items == ("service shop/idle (idle.example.com): 0 ready endpoints",)
    assert pending.detail == "1/2 services serve on mirror"
    with pytest.raises(PreconditionFailed, match="1 service\\(s\\) do not serve on mirror"):
        plan.raise_if_not_ready()


# --- against the mirror cluster and moto's Route53 ------------------------------------------

MIRROR_LB = "mirror-web-123.us-east-1.elb.amazonaws.com"
PRIMARY_LB = "primary-web-456.us-east-1.elb.amazonaws.com"


@pytest.fixture
def primary(kube: KubeClients) -> KubeClients:
    """The primary's clients, named for the side they play here."""
    return kube


def _service(name: str, app: str, annotation: str, key: str = EXTERNAL_DNS_HOSTNAME) -> V1Service:
    return V1Service(
        metadata=V1ObjectMeta(name=name, annotations={key: annotation}),
        spec=V1ServiceSpec(
            type="LoadBalancer", selector={"app": app}, ports=[V1ServicePort(port=80)]
        ),
    )


def _set_lb(core: CoreV1Api, namespace: str, name: str, **ingress: str) -> None:
    core.patch_namespaced_service_status(
        name,
        namespace,
        {"status": {"loadBalancer": {"ingress": [ingress]}}},
        _content_type="application/merge-patch+json",
    )


@pytest.fixture
def site(
    mirror: KubeClients,
    mirror_cluster: Cluster,
    primary: KubeClients,
    namespace_factory: Callable[[Cluster], str],
    node_pools_factory: Callable[[Cluster], NodePools],
) -> Iterator[str]:
    """Mirror: web (serves), idle (no endpoints), nolb (no LB). Primary only: legacy."""
    ns = namespace_factory(mirror_cluster)
    node_pools_factory(mirror_cluster).create(NodePoolSpec("dns-workers", count=2))
    AppsV1Api(mirror.api_client).create_namespaced_deployment(ns, deployment("web", 2))
    core = CoreV1Api(mirror.api_client)
    core.create_namespaced_service(ns, _service("web", "web", "shop.example.com,www.example.com"))
    core.create_namespaced_service(
        ns, _service("idle", "nothing", "idle.example.com", KUBESHIFT_DNS_NAMES)
    )
    core.create_namespaced_service(ns, _service("nolb", "web", "nolb.example.com"))
    _set_lb(core, ns, "web", hostname=MIRROR_LB)
    _set_lb(core, ns, "idle", hostname="mirror-idle.elb.amazonaws.com")
    primary_core = CoreV1Api(primary.api_client)
    primary_core.create_namespace(V1Namespace(metadata=V1ObjectMeta(name=ns)))
    primary_core.create_namespaced_service(ns, _service("legacy", "legacy", "legacy.example.com"))
    eventually(
        "2 ready endpoints of web",
        lambda: ready_endpoints(mirror, ns, "web"),
        until=lambda n: n == 2,
        timeout=90,
    )
    yield ns
    with contextlib.suppress(ApiException):
        primary_core.delete_namespace(ns)


@pytest.mark.controlplane
@pytest.mark.moto
def test_plan_checks_each_service_then_cutover_moves_its_records(
    mirror: KubeClients, primary: KubeClients, site: str, moto: MotoServer
) -> None:
    ns = site
    aws = AwsClients(AwsAccess(region=moto.region))
    zone = make_zone(aws.route53, "example.com")
    for name in ("shop.example.com", "www.example.com"):
        put_record(aws.route53, zone, {"Name": name, "Type": "CNAME", "TTL": 60,
                                       "ResourceRecords": [{"Value": PRIMARY_LB}]})  # fmt: skip

    plan = plan_service_dns(mirror, {"example.com": zone}, [ns], expected=primary)
    assert plan.pending().items == (
        f"service {ns}/idle (idle.example.com): 0 ready endpoints",
        f"service {ns}/legacy (legacy.example.com): missing on {mirror.name}",
        f"service {ns}/nolb (nolb.example.com): no load balancer address yet",
    )
    assert [c.fqdn for c in plan.cutovers] == ["shop.example.com.", "www.example.com."]
    assert all(c.target == CnameTarget(value=MIRROR_LB, ttl=60) for c in plan.cutovers)
    with pytest.raises(PreconditionFailed, match="3 service\\(s\\) do not serve"):
        plan.raise_if_not_ready()
    assert services_serving(mirror, [ns], expected=primary).items == plan.pending().items
    # Services whose workloads stay on the primary (stateful: leave-on-primary) are out
    # of the plan and the gate: their records never move.
    left = {f"{ns}/idle", f"{ns}/legacy"}
    kept = plan_service_dns(mirror, {"example.com": zone}, [ns], expected=primary, excluded=left)
    assert kept.pending().items == (f"service {ns}/nolb (nolb.example.com): no load balancer "
                                    "address yet",)  # fmt: skip
    assert services_serving(mirror, [ns], expected=primary, excluded=left).items == (
        kept.pending().items
    )

    core = CoreV1Api(mirror.api_client)
    core.delete_namespaced_service("idle", ns)
    CoreV1Api(primary.api_client).delete_namespaced_service("legacy", ns)
    _set_lb(core, ns, "nolb", ip="203.0.113.7")
    ready = plan_service_dns(mirror, {"example.com": zone}, [ns], expected=primary)
    ready.raise_if_not_ready()
    by_name = {c.fqdn: c.target for c in ready.cutovers}
    assert by_name["nolb.example.com."] == ARecordTarget(addresses=("203.0.113.7",), ttl=60)

    fast = SyncOptions(timeout=5, interval=0.01)
    report = cutover_records(aws.route53, None, list(ready.cutovers), sync=fast)
    assert report.ok, report.summary()
    assert [r.status for r in report.records] == ["switched", "switched", "switched"]
    shop = records_named(aws.route53, zone, "shop.example.com")
    assert [rr["ResourceRecords"][0]["Value"] for rr in shop] == [MIRROR_LB]
    again = cutover_records(aws.route53, None, list(ready.cutovers), sync=fast)
    assert [r.status for r in again.records] == ["unchanged"] * 3


@pytest.mark.controlplane
def test_plan_refuses_names_outside_zones_apex_and_duplicates(
    mirror: KubeClients, site: str
) -> None:
    ns = site
    core = CoreV1Api(mirror.api_client)
    core.create_namespaced_service(ns, _service("twin", "web", "shop.example.com"))
    core.create_namespaced_service(ns, _service("apex", "web", "example.com,x.other.org"))
    for name in ("twin", "apex"):
        _set_lb(core, ns, name, hostname=f"{name}.elb.amazonaws.com")
    eventually(
        "endpoints of twin and apex",
        lambda: [ready_endpoints(mirror, ns, n) for n in ("twin", "apex")],
        until=lambda counts: all(c == 2 for c in counts),
        timeout=60,
    )
    plan = plan_service_dns(mirror, {"example.com": "Z1"}, [ns])
    items = {s.name: s.problems for s in plan.not_ready}
    assert items["apex"] == (
        "example.com is a zone apex and needs an alias record",
        "x.other.org is in none of the hosted zones ['example.com']",
    )
    assert items["twin"] == (f"shop.example.com is also claimed by {ns}/twin, {ns}/web",)
    assert any("also claimed" in p for p in items["web"])
    assert "shop.example.com." not in {c.fqdn for c in plan.cutovers}
    assert "www.example.com." not in {c.fqdn for c in plan.cutovers}
