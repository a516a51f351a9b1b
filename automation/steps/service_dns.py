"""Per-service DNS moves between the primary and the mirror (seed 000, steps 3 and 5).

Services carry their DNS names in metadata — ``external-dns.alpha.kubernetes.io/hostname``
(comma-separated) and/or ``kubeshift.io/dns-names`` — so the records to move are read
from the cluster, not from a list someone keeps by hand. For each Service on the
destination cluster this module checks that it serves (a load balancer address and at
least one ready endpoint in its EndpointSlices) and builds one
``automation.aws.dns.requests.RecordCutover`` per name, pointing at that Service's own load
balancer. A Service that does not serve, or that exists only on the other cluster, is
reported as not ready — never silently left out — so a cutover cannot strand a site.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from automation.aws.dns.requests import ARecordTarget, CnameTarget, RecordCutover, TargetCheck
from automation.aws.probe import HttpProbe
from automation.core.errors import PreconditionFailed
from automation.core.waiting import Pending, summarize
from automation.kube.clients import KubeClients, list_all

EXTERNAL_DNS_HOSTNAME = "external-dns.alpha.kubernetes.io/hostname"
KUBESHIFT_DNS_NAMES = "kubeshift.io/dns-names"
DNS_ANNOTATIONS = (EXTERNAL_DNS_HOSTNAME, KUBESHIFT_DNS_NAMES)
SERVICE_NAME_LABEL = "kubernetes.io/service-name"


def dns_names(service: Mapping[str, object]) -> tuple[str, ...]:
    """The DNS names a Service declares (both annotations, comma-separated), normalised."""
    meta = service.get("metadata") or {}
    annotations = meta.get("annotations") or {} if isinstance(meta, Mapping) else {}
    names: set[str] = set()
    for key in DNS_ANNOTATIONS:
        for part in str(annotations.get(key, "")).split(","):
            name = part.strip().rstrip(".").lower()
            if name:
                names.add(name)
    return tuple(sorted(names))


@dataclass(frozen=True)
class ServiceEndpoint:
    """One Service with DNS names, as seen on the destination cluster."""

    namespace: str
    name: str
    dns_names: tuple[str, ...]
    hostname: str | None = None
    addresses: tuple[str, ...] = ()
    ready_endpoints: int = 0
    problems: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def ready(self) -> bool:
        return not self.problems


def ready_endpoints(clients: KubeClients, namespace: str, service: str) -> int:
    """Ready, non-terminating endpoints of a Service, counted over its EndpointSlices.

    A missing ``ready`` condition counts as ready, as the EndpointSlice API specifies.
    """
    slices = list_all(
        clients.discovery.list_namespaced_endpoint_slice,
        namespace,
        action=f"list EndpointSlices of {namespace}/{service}",
        label_selector=f"{SERVICE_NAME_LABEL}={service}",
    )["items"]
    count = 0
    for endpoint_slice in slices:
        for endpoint in endpoint_slice.get("endpoints") or []:
            conditions = endpoint.get("conditions") or {}
            if conditions.get("ready", True) and not conditions.get("terminating", False):
                count += 1
    return count


def _list_services(clients: KubeClients, namespaces: Sequence[str] | None) -> list[dict]:
    if namespaces is None:
        return list_all(clients.core.list_service_for_all_namespaces, action="list Services")[
            "items"
        ]
    return [
        svc
        for ns in namespaces
        for svc in list_all(
            clients.core.list_namespaced_service, ns, action=f"list Services in {ns}"
        )["items"]
    ]


def inspect_services(
    destination: KubeClients,
    namespaces: Sequence[str] | None = None,
    *,
    expected: KubeClients | None = None,
    excluded: Collection[str] = (),
) -> list[ServiceEndpoint]:
    """Every Service with DNS names on ``destination``, with what keeps it from serving.

    ``expected`` is the other cluster: a Service with DNS names there but missing on
    ``destination`` is reported too (its records would otherwise be left behind).
    ``namespaces`` None means all namespaces; ``excluded`` (``namespace/name``) are
    Services whose records stay where they are.
    """
    found: dict[str, ServiceEndpoint] = {}
    for svc in _list_services(destination, namespaces):
        names = dns_names(svc)
        if not names or _key(svc) in excluded:
            continue
        meta = svc["metadata"]
        ingress = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
        hostnames = sorted({i["hostname"] for i in ingress if i.get("hostname")})
        addresses = tuple(sorted({i["ip"] for i in ingress if i.get("ip")}))
        endpoints = ready_endpoints(destination, meta["namespace"], meta["name"])
        problems = []
        if not hostnames and not addresses:
            problems.append("no load balancer address yet")
        if endpoints == 0:
            problems.append("0 ready endpoints")
        entry = ServiceEndpoint(
            meta["namespace"],
            meta["name"],
            names,
            hostnames[0] if hostnames else None,
            addresses,
            endpoints,
            tuple(problems),
        )
        found[entry.key] = entry
    if expected is not None:
        for svc in _list_services(expected, namespaces):
            names = dns_names(svc)
            key = _key(svc)
            if names and key not in found and key not in excluded:
                ns, name = key.split("/", 1)
                found[key] = ServiceEndpoint(
                    ns, name, names, problems=(f"missing on {destination.name}",)
                )
    return [found[k] for k in sorted(found)]


def _key(svc: Mapping[str, Any]) -> str:
    return f"{svc['metadata']['namespace']}/{svc['metadata']['name']}"


def zone_for(name: str, zones: Mapping[str, str]) -> tuple[str, str] | None:
    """``(zone name, zone id)`` of the most specific hosted zone containing ``name``."""
    name = name.rstrip(".").lower()
    best: tuple[str, str] | None = None
    for zone_name, zone_id in zones.items():
        zone = zone_name.rstrip(".").lower()
        if (name == zone or name.endswith("." + zone)) and (
            best is None or len(zone) > len(best[0])
        ):
            best = (zone, zone_id)
    return best


@dataclass(frozen=True)
class DnsPlan:
    """The records to move, and every Service that keeps the move from being safe."""

    services: tuple[ServiceEndpoint, ...]
    cutovers: tuple[RecordCutover, ...]
    destination: str

    @property
    def not_ready(self) -> tuple[ServiceEndpoint, ...]:
        return tuple(s for s in self.services if not s.ready)

    def items(self) -> list[str]:
        return [
            f"service {s.key} ({', '.join(s.dns_names)}): {'; '.join(s.problems)}"
            for s in self.not_ready
        ]

    def pending(self) -> Pending:
        """The gate's view: every Service with DNS names serves on the destination."""
        ready = len(self.services) - len(self.not_ready)
        detail = f"{ready}/{len(self.services)} services serve on {self.destination}"
        return Pending.of(self.items(), detail)

    def raise_if_not_ready(self) -> None:
        if self.not_ready:
            raise PreconditionFailed(
                f"{len(self.not_ready)} service(s) do not serve on {self.destination}, so no "
                f"record moves: {summarize(self.items(), 3)}."
            )

    def describe(self) -> list[str]:
        return [f"{c.fqdn} -> {c.endpoint}" for c in self.cutovers]


def plan_service_dns(
    destination: KubeClients,
    zones: Mapping[str, str],
    namespaces: Sequence[str] | None = None,
    *,
    expected: KubeClients | None = None,
    ttl: int = 60,
    probe_path: str | None = None,
    probe_scheme: str = "https",
    excluded: Collection[str] = (),
) -> DnsPlan:
    """Check every Service with DNS names on ``destination``; build its cutovers.

    ``zones`` maps hosted-zone names to zone ids (``{"example.com": "Z123"}``); a name
    outside every zone, or a zone apex (a CNAME cannot live there), makes its Service
    not ready. ``probe_path`` adds an HTTP(S) probe of each name through the new load
    balancer before and after its record moves.
    """
    services = inspect_services(destination, namespaces, expected=expected, excluded=excluded)
    owners: dict[str, list[str]] = {}
    for svc in services:
        for name in svc.dns_names:
            owners.setdefault(name, []).append(svc.key)
    checked: list[ServiceEndpoint] = []
    cutovers: list[RecordCutover] = []
    for svc in services:
        problems = list(svc.problems)
        planned: list[RecordCutover] = []
        for name in svc.dns_names:
            if len(owners[name]) > 1:
                problems.append(f"{name} is also claimed by {', '.join(sorted(owners[name]))}")
                continue
            zone = zone_for(name, zones)
            if zone is None:
                problems.append(f"{name} is in none of the hosted zones {sorted(zones)}")
                continue
            if zone[0] == name:
                problems.append(f"{name} is a zone apex and needs an alias record")
                continue
            if svc.problems:
                continue
            planned.append(_cutover(svc, name, zone[1], ttl, probe_path, probe_scheme))
        if problems == list(svc.problems):
            cutovers.extend(planned)
        checked.append(
            ServiceEndpoint(
                svc.namespace,
                svc.name,
                svc.dns_names,
                svc.hostname,
                svc.addresses,
                svc.ready_endpoints,
                tuple(problems),
            )
        )
    return DnsPlan(tuple(checked), tuple(cutovers), destination.name)


def _cutover(
    svc: ServiceEndpoint,
    name: str,
    zone_id: str,
    ttl: int,
    probe_path: str | None,
    probe_scheme: str,
) -> RecordCutover:
    target: CnameTarget | ARecordTarget
    if svc.hostname:
        target = CnameTarget(value=svc.hostname, ttl=ttl)
    else:
        target = ARecordTarget(addresses=svc.addresses, ttl=ttl)
    check = TargetCheck()
    if probe_path is not None:
        path = probe_path if probe_path.startswith("/") else f"/{probe_path}"
        check = TargetCheck(probe=HttpProbe(url=f"{probe_scheme}://{name}{path}"))
    return RecordCutover(zone_id=zone_id, name=name, target=target, check=check)


def services_serving(
    destination: KubeClients,
    namespaces: Iterable[str] | None = None,
    *,
    expected: KubeClients | None = None,
    excluded: Collection[str] = (),
) -> Pending:
    """Gate: every Service with DNS names has a load balancer and ready endpoints."""
    scope = list(namespaces) if namespaces is not None else None
    services = inspect_services(destination, scope, expected=expected, excluded=excluded)
    plan = DnsPlan(tuple(services), (), destination.name)
    return plan.pending()
