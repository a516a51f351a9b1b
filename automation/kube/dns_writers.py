"""Controllers that write Route53 records from a cluster (external-dns), found and paused.

external-dns owns the records it wrote through TXT ownership records and puts them
back as its sources say: a record kubeshift moves to the mirror (or to the new VPC's
load balancers) would be reverted within one sync interval, or deleted as foreign.
Found by its Deployment (any container image named ``external-dns``) and its
arguments: ``--domain-filter`` (repeatable), ``--txt-owner-id``, ``--policy``.

Pausing scales it to zero and records the replicas it had in :data:`PAUSED_REPLICAS`
on the Deployment itself, so a resume after a crash — from another process, with no
memory — puts back exactly what was there. Both are idempotent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from automation.kube.clients import KubeClients, list_all, raw

PAUSED_REPLICAS = "kubeshift.io/paused-replicas"
"""On a DNS writer kubeshift scaled to zero: how many replicas it had."""


@dataclass(frozen=True)
class DnsWriter:
    """One external-dns Deployment and what its arguments say it writes."""

    cluster: str
    namespace: str
    name: str
    replicas: int
    owner_id: str
    """``--txt-owner-id`` (external-dns' default is ``default``)."""
    domain_filters: tuple[str, ...]
    """``--domain-filter`` values; empty: every zone it can see."""
    policy: str
    paused_replicas: int | None = None

    @property
    def label(self) -> str:
        return (
            f"external-dns {self.namespace}/{self.name} on {self.cluster} (owner {self.owner_id})"
        )

    @property
    def running(self) -> bool:
        return self.replicas > 0

    def covers(self, name: str) -> bool:
        """Whether ``name`` lies in its domain filters (all names when it has none)."""
        fqdn = name.rstrip(".").lower()
        if not self.domain_filters:
            return True
        return any(
            fqdn == d or fqdn.endswith(f".{d}")
            for d in (f.rstrip(".").lower().lstrip(".") for f in self.domain_filters)
        )


def _args(container: Mapping[str, Any]) -> list[str]:
    return [str(a) for a in (*(container.get("command") or []), *(container.get("args") or []))]


def _flag(args: Sequence[str], name: str) -> list[str]:
    """Every value of ``--name=value`` or ``--name value``."""
    values = []
    for index, arg in enumerate(args):
        if arg.startswith(f"--{name}="):
            values.append(arg.split("=", 1)[1])
        elif arg == f"--{name}" and index + 1 < len(args):
            values.append(args[index + 1])
    return values


def writer_of(cluster: str, deployment: Mapping[str, Any]) -> DnsWriter | None:
    """The DNS writer a Deployment runs, or None when it runs none."""
    spec = (deployment.get("spec") or {}).get("template", {}).get("spec") or {}
    container = next(
        (c for c in spec.get("containers") or [] if "external-dns" in str(c.get("image", ""))),
        None,
    )
    if container is None:
        return None
    args = _args(container)
    meta = deployment.get("metadata") or {}
    paused = (meta.get("annotations") or {}).get(PAUSED_REPLICAS)
    replicas = (deployment.get("spec") or {}).get("replicas")
    return DnsWriter(
        cluster=cluster,
        namespace=meta.get("namespace", ""),
        name=meta.get("name", ""),
        replicas=1 if replicas is None else int(replicas),
        owner_id=(_flag(args, "txt-owner-id") or ["default"])[-1],
        domain_filters=tuple(_flag(args, "domain-filter")),
        policy=(_flag(args, "policy") or ["sync"])[-1],
        paused_replicas=int(paused) if paused and paused.isdigit() else None,
    )


def find_writers(clients: KubeClients, cluster: str) -> list[DnsWriter]:
    """Every external-dns Deployment of ``cluster``, running or paused."""
    listed = list_all(
        clients.apps.list_deployment_for_all_namespaces, action=f"list Deployments on {cluster}"
    )["items"]
    return [w for d in listed if (w := writer_of(cluster, d)) is not None]


def pause(clients: KubeClients, writer: DnsWriter, *, dry_run: bool = False) -> bool:
    """Scale a running writer to zero, recording its replicas; whether it changed."""
    if not writer.running:
        return False
    if not dry_run:
        body = {
            "metadata": {"annotations": {PAUSED_REPLICAS: str(writer.replicas)}},
            "spec": {"replicas": 0},
        }
        raw(clients.apps.patch_namespaced_deployment, writer.name, writer.namespace, body,
            action=f"pause {writer.label}")  # fmt: skip
    return True


def resume(clients: KubeClients, writer: DnsWriter, *, dry_run: bool = False) -> bool:
    """Give a writer kubeshift paused its replicas back; whether it changed."""
    if writer.paused_replicas is None:
        return False
    if not dry_run:
        body = {
            "metadata": {"annotations": {PAUSED_REPLICAS: None}},
            "spec": {"replicas": writer.paused_replicas},
        }
        raw(clients.apps.patch_namespaced_deployment, writer.name, writer.namespace, body,
            action=f"resume {writer.label}")  # fmt: skip
    return True


def running(writers: Iterable[DnsWriter]) -> list[DnsWriter]:
    return [w for w in writers if w.running]
