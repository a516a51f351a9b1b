"""The live cluster's per-Service DNS records, as its operators (or external-dns) left them.

For a cni-swap stack each seeded app Service is a ``LoadBalancer`` declaring its DNS
name; once the cloud controller has given it a load balancer, the sandbox writes the
name as a CNAME to that load balancer in the cluster's zone — the records cni-swap
moves to the mirror and back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kubernetes import client

from automation.core.waiting import Pending, wait_until
from automation.steps.service_dns import dns_names

if TYPE_CHECKING:
    from mypy_boto3_route53 import Route53Client

TTL = 60


@dataclass(frozen=True)
class ServiceRecord:
    name: str
    target: str

    def __str__(self) -> str:
        return f"{self.name} CNAME {self.target}"


def _hostnames(service: client.V1Service) -> list[str]:
    status = service.status.load_balancer if service.status else None
    return [i.hostname for i in (status.ingress if status else None) or [] if i.hostname]


def _load_balanced(core: client.CoreV1Api, namespaces: tuple[str, ...]) -> Pending:
    """Services with DNS names still without a load balancer hostname."""
    waiting = []
    for namespace in namespaces:
        for service in core.list_namespaced_service(namespace).items:
            if not dns_names(service.to_dict()):
                continue
            if not _hostnames(service):
                waiting.append(f"{namespace}/{(service.metadata or client.V1ObjectMeta()).name}")
    return Pending.of(waiting)


def records_for(core: client.CoreV1Api, namespaces: tuple[str, ...]) -> list[ServiceRecord]:
    """One record per declared DNS name, aimed at its Service's load balancer."""
    records = []
    for namespace in namespaces:
        for service in core.list_namespaced_service(namespace).items:
            hostnames = _hostnames(service)
            for name in dns_names(service.to_dict()):
                if hostnames:
                    records.append(ServiceRecord(name, hostnames[0]))
    return sorted(records, key=lambda r: r.name)


def publish(
    core: client.CoreV1Api,
    route53: Route53Client,
    zone_id: str,
    namespaces: tuple[str, ...],
    *,
    timeout: float = 180.0,
) -> list[ServiceRecord]:
    """Wait for every Service's load balancer, then UPSERT its records (idempotent)."""
    wait_until(
        "the cloud controller to give each Service with DNS names a load balancer",
        lambda: _load_balanced(core, namespaces),
        timeout=timeout,
        interval=1.0,
    )
    records = records_for(core, namespaces)
    if records:
        route53.change_resource_record_sets(
            HostedZoneId=zone_id,
            ChangeBatch={
                "Comment": "the live cluster's service records (kubeshift sandbox)",
                "Changes": [
                    {
                        "Action": "UPSERT",
                        "ResourceRecordSet": {
                            "Name": r.name,
                            "Type": "CNAME",
                            "TTL": TTL,
                            "ResourceRecords": [{"Value": r.target}],
                        },
                    }
                    for r in records
                ],
            },
        )
    return records
