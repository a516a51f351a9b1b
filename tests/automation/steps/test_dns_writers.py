"""One writer per DNS name: external-dns found from its Deployment and its TXT records,
the move refused naming each record and owner, or the controller paused and restored."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes.client import AppsV1Api

from automation.aws.clients import AwsAccess, AwsClients
from automation.aws.dns_owners import owned_names, txt_owners
from automation.config.clients import StaticClients
from automation.config.settings import RuntimeSettings
from automation.core.errors import PreconditionFailed
from automation.kube.clients import KubeClients
from automation.kube.dns_writers import PAUSED_REPLICAS, writer_of
from automation.model.context import HookContext
from automation.steps.dns_writers import conflicts, guard_records, resume_writers
from tests.support.moto_fixtures import MotoServer
from tests.support.moto_world import make_zone, put_record

IMAGE = "registry.k8s.io/external-dns/external-dns:v0.15.0"


def _deployment(namespace: str, args: list[str], replicas: int = 1) -> dict[str, Any]:
    labels = {"app": "external-dns"}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "external-dns", "namespace": namespace},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [{"name": "external-dns", "image": IMAGE,
                                                       "args": args}]}}},
    }  # fmt: skip


def _context(kube: KubeClients, aws: AwsClients, policy: str) -> HookContext:
    """cni-swap's dns-to-mirror on the primary, with ``runtime.dns_writers: policy``."""
    return HookContext(
        stack="t", scenario="cni-swap", phase="dns-to-mirror",
        clients=StaticClients(kube={"primary": kube}, aws=aws),
        settings=RuntimeSettings(dns_writers=policy),  # type: ignore[arg-type]
    )  # fmt: skip


def test_the_controller_is_read_from_its_arguments() -> None:
    args = ["--source=service", "--domain-filter=shop.example.com", "--domain-filter",
            "api.example.com", "--txt-owner-id=shop", "--policy", "upsert-only"]  # fmt: skip
    writer = writer_of("primary", _deployment("dns", args, replicas=2))
    assert writer is not None
    assert (writer.owner_id, writer.policy, writer.replicas) == ("shop", "upsert-only", 2)
    assert writer.domain_filters == ("shop.example.com", "api.example.com")
    assert writer.covers("www.shop.example.com.") and writer.covers("api.example.com")
    assert not writer.covers("myshop.example.com")
    defaults = writer_of("mirror", _deployment("dns", ["--source=ingress"]))
    assert defaults is not None and defaults.owner_id == "default" and defaults.covers("any.io")
    other = _deployment("dns", [])
    other["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.27"
    assert writer_of("primary", other) is None


def test_ownership_records_name_what_they_own() -> None:
    assert owned_names("cname-www.example.com.") == {"cname-www.example.com", "www.example.com"}
    assert owned_names("\\052.shop.example.com.") == {"*.shop.example.com"}
    paused = writer_of("primary", _deployment("dns", ["--txt-owner-id=shop"], replicas=0))
    assert paused is not None
    owners = {"www.example.com": "shop", "old.example.com": "gone"}
    assert conflicts(["www.example.com."], [paused], owners) == []  # scaled to zero
    assert conflicts(["old.example.com"], [paused], owners) == [
        "old.example.com: owned by external-dns owner gone (TXT record), whose controller "
        "runs on no cluster kubeshift sees"
    ]


@pytest.mark.controlplane
@pytest.mark.moto
def test_a_move_is_refused_naming_record_and_owner_or_the_controller_paused_and_restored(
    kube: KubeClients, namespace: str, moto: MotoServer
) -> None:
    apps = AppsV1Api(kube.api_client)
    apps.create_namespaced_deployment(
        namespace, _deployment(namespace, ["--txt-owner-id=shop", "--domain-filter=shop.io"], 2)
    )
    aws = AwsClients(AwsAccess(region=moto.region))
    zone = make_zone(aws.route53, "example.com")
    ownership = '"heritage=external-dns,external-dns/owner=shop,external-dns/resource=svc/web"'
    put_record(aws.route53, zone, {"Name": "cname-www.example.com", "Type": "TXT", "TTL": 300,
                                   "ResourceRecords": [{"Value": ownership}]})  # fmt: skip
    assert txt_owners(aws.route53, zone) == {"cname-www.example.com": "shop",
                                             "www.example.com": "shop"}  # fmt: skip

    def ctx(policy: str) -> HookContext:
        return _context(kube, aws, policy)

    names = ["www.example.com", "api.example.com"]
    with pytest.raises(PreconditionFailed) as caught:
        guard_records(ctx("refuse"), names, [zone], ["primary"])
    message = str(caught.value)
    assert message.startswith("1 record(s) to move have another writer")
    writer = f"external-dns {namespace}/external-dns on primary (owner shop)"
    assert f"www.example.com: written by {writer}" in message
    assert "dns_writers: pause" in message

    paused = guard_records(ctx("pause"), names, [zone], ["primary"])
    assert paused.changed and "paused external-dns" in paused.message
    live = apps.read_namespaced_deployment("external-dns", namespace)
    assert live.spec.replicas == 0 and live.metadata.annotations[PAUSED_REPLICAS] == "2"
    assert not guard_records(ctx("refuse"), names, [zone], ["primary"]).changed  # nobody writes

    # A later run, with no memory of the pause (a crash in between), restores it.
    resumed = resume_writers(ctx("pause"), ["primary"])
    assert resumed.changed
    live = apps.read_namespaced_deployment("external-dns", namespace)
    assert live.spec.replicas == 2 and PAUSED_REPLICAS not in (live.metadata.annotations or {})
    assert not resume_writers(ctx("pause"), ["primary"]).changed


@pytest.mark.controlplane
@pytest.mark.moto
@pytest.mark.externaldns
def test_the_real_external_dns_puts_a_moved_record_back_unless_paused(
    primary_cluster: Any, kube: KubeClients, namespace: str, moto: MotoServer
) -> None:
    """external-dns v0.21, run for real: the record kubeshift moves to the mirror is
    written back at its next sync — the fight this check prevents. kubeshift reads the
    controller's own TXT ownership records and refuses; paused, the move holds."""
    from kubernetes.client import CoreV1Api

    from automation.aws.dns.cutover import cutover_record
    from automation.aws.dns.requests import CnameTarget, RecordCutover, SyncOptions
    from tests.support.external_dns import ExternalDns
    from tests.support.moto_world import records_named

    aws = AwsClients(AwsAccess(region=moto.region))
    zone = make_zone(aws.route53, "shop.test")
    name, primary_lb, mirror_lb = "www.shop.test", "primary-lb.elb.test", "mirror-lb.elb.test"
    annotations = {"external-dns.alpha.kubernetes.io/hostname": name,
                   "external-dns.alpha.kubernetes.io/target": primary_lb}  # fmt: skip
    CoreV1Api(kube.api_client).create_namespaced_service(namespace, {
        "metadata": {"name": "web", "annotations": annotations},
        "spec": {"ports": [{"port": 80}], "selector": {"app": "web"}},
    })  # fmt: skip
    args = ["--source=service", "--provider=aws", "--registry=txt", "--txt-owner-id=storefront",
            "--domain-filter=shop.test", "--policy=sync"]  # fmt: skip
    AppsV1Api(kube.api_client).create_namespaced_deployment(namespace, _deployment(namespace, args))
    controller = ExternalDns(kube.api_client, primary_cluster.kubeconfig_path, namespace, moto)

    def target() -> str:
        (record,) = [r for r in records_named(aws.route53, zone, name) if r["Type"] == "CNAME"]
        return str(record["ResourceRecords"][0]["Value"]).rstrip(".")

    def move_to(host: str) -> str:
        cutover = RecordCutover(zone_id=zone, name=name, target=CnameTarget(value=host))
        return cutover_record(
            aws.route53, None, cutover, sync=SyncOptions(timeout=30, interval=0.2)
        ).status

    def ctx(policy: str) -> HookContext:
        return _context(kube, aws, policy)

    assert controller.sync().ran
    assert target() == primary_lb
    assert txt_owners(aws.route53, zone).get(name) == "storefront"  # its own TXT format, read

    # Unpaused, a move does not hold: the controller's next sync puts the record back.
    assert move_to(mirror_lb) == "switched" and target() == mirror_lb
    controller.sync()
    assert target() == primary_lb

    with pytest.raises(PreconditionFailed) as caught:
        guard_records(ctx("refuse"), [name], [zone], ["primary"])
    writer = f"external-dns {namespace}/external-dns on primary (owner storefront)"
    assert f"{name}: written by {writer}" in str(caught.value)

    # Paused for the window: the move holds through a sync, and after traffic is back
    # and the controller resumed, it finds nothing to change.
    assert guard_records(ctx("pause"), [name], [zone], ["primary"]).changed
    assert move_to(mirror_lb) == "switched"
    assert not controller.sync().ran
    assert target() == mirror_lb
    assert move_to(primary_lb) == "switched"
    assert resume_writers(ctx("pause"), ["primary"]).changed
    assert controller.sync().ran and target() == primary_lb
