"""Runtime settings: how the runner reaches clusters and AWS, and how hooks behave.

They live beside the Pulumi configuration in the stack file under the key
``kubeshift:runtime`` (the Pulumi program ignores it). Everything has a safe default,
so a stack without the key runs against the current kubeconfig context and the
default AWS profile. Validation errors name the key, in one sentence.
"""

from __future__ import annotations

import itertools
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)

from automation.aws.clients import AwsAccess
from automation.core.errors import ConfigError
from automation.etcd.client import EtcdClient
from automation.etcd.gateway import DEFAULT_CONNECT_TIMEOUT, DEFAULT_TIMEOUT, check_endpoint
from automation.etcd.health import DEFAULT_MAX_RAFT_LAG
from automation.kube.clients import ClusterAccess
from automation.kube.copy.kinds import DEFAULT_KINDS
from automation.kube.copy.options import CopiedKinds, CopiedNamespaces, RegistryRewrites
from automation.kube.drain.filters import DrainOptions
from automation.kube.drain.run import DrainLimits
from automation.kube.nodes import Taint
from automation.kube.pod_network_check import PodNetworkCheck
from automation.kube.selector_text import ABSENT, covers, parse
from automation.kube.selector_text import check as check_selector
from automation.kube.stateful import StatefulChoice
from components.contract.keys import REGION_KEY, RUNTIME_KEY
from components.contract.validation import join, sentence

# A label selector as text (``tier=web,track!=canary``), read as the API server reads it.
SelectorText = Annotated[str, AfterValidator(check_selector)]

# namespace/name, each a DNS-1123 label (what Kubernetes accepts for both).
_SERVICE_REF = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?/[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"


class IngressSettings(BaseModel):
    """The ingress controller the vpc-move switches to NodePort and moves to new nodes."""

    model_config = ConfigDict(extra="forbid")

    namespace: str = Field(
        default="ingress", description="Namespace of the ingress controller's Service and pods."
    )
    service: str = Field(
        default="ingress-controller",
        description="The ingress Service the old and new load balancers' target groups reach "
        "on its node ports: switched to NodePort (Cluster traffic policy) at "
        "ingress-nodeport, given back at ingress-move.",
    )
    pod_selector: dict[str, str] = Field(
        default_factory=lambda: {"app": "ingress-controller"},
        description="Labels of the ingress controller's pods, which ingress-move evicts onto "
        "the target VPC's workers.",
    )


class CalicoSettings(BaseModel):
    """Where Calico lives (overlay-switch)."""

    model_config = ConfigDict(extra="forbid")

    ip_pool: str = Field(
        default="default-ipv4-ippool",
        description="The Calico IPPool whose IPIP mode native-routing turns off (Never).",
    )
    namespace: str = Field(default="kube-system", description="Namespace of calico-node.")
    daemonset: str = Field(
        default="calico-node",
        description="The calico-node DaemonSet native-routing rolls and verify waits for.",
    )


# Worker generations (components.contract.userdata.GENERATION_LABEL, components.cni_swap).
GENERATION_LABEL = "kubeshift.io/generation"


class DaemonSetRef(BaseModel):
    """A CNI's DaemonSet on the primary."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    namespace: str = Field(default="kube-system", description="Namespace of the DaemonSet.")
    name: str = Field(description="Name of the DaemonSet.")
    pod_selector: SelectorText | None = Field(
        default=None, description="Labels of its pods (default name=<name>)."
    )


class MirrorSettings(BaseModel):
    """``kubeshift:runtime.mirror``: how cni-swap copies, moves DNS and judges the CNI."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    namespaces: CopiedNamespaces = Field(
        default=(),
        description="Namespaces to copy to the mirror, each listed once (the copy refuses none).",
    )
    kinds: CopiedKinds = Field(
        default=DEFAULT_KINDS,
        min_length=1,
        description="Kinds of namespaced resources copied to the mirror, each known and "
        "listed once; default: every kind the copy knows.",
    )
    registry_rewrites: RegistryRewrites = Field(
        default=(),
        description="Anchored registry rewrites applied to the copied image references and "
        "to the registry hosts of image pull Secrets; the first matching rule wins, and a "
        "rule an earlier one shadows is refused.",
    )
    label_selector: SelectorText | None = Field(
        default=None,
        description="Copy only the objects matching this label selector; default: all.",
        examples=["app.kubernetes.io/part-of=shop"],
    )
    stateful: StatefulChoice = Field(
        default="refuse",
        description="Workloads with PersistentVolumeClaims: refuse (stop the copy naming "
        "them), leave-on-primary (not copied; their records stay) or copy-without-data.",
    )
    dns_namespaces: tuple[str, ...] | None = Field(
        default=None, description="Where Services with DNS names live; default: namespaces."
    )
    zones: dict[str, str] = Field(
        default_factory=dict,
        description="Hosted zone name -> id; default: the cluster's dns.zone_id.",
        examples=[{"shop.example.com": "Z05EXAMPLESHOPEUW1"}],
    )
    dns_ttl: int = Field(
        default=60,
        ge=0,
        description="TTL, in seconds, of the records dns-to-mirror and dns-to-primary write; "
        "the DNS drain before teardown-mirror waits it (plus its margin).",
    )
    probe_path: str | None = Field(
        default=None, description="HTTP(S) path probed through each new LB before its move."
    )
    new_cni: DaemonSetRef = Field(
        default=DaemonSetRef(name="calico-node", pod_selector="k8s-app=calico-node"),
        description="The new CNI's DaemonSet: it must exist on the primary before the old "
        "CNI goes, and have a Ready pod on every node after the roll.",
    )
    new_cni_manifest: Path | None = Field(
        default=None,
        description="The new CNI's manifest (e.g. calico.yaml), applied to the primary with "
        "server-side apply before the old CNI goes; unset: it is installed by other means.",
    )
    old_cni: DaemonSetRef = Field(
        default=DaemonSetRef(name="weave-net", pod_selector="name=weave-net"),
        description="The old CNI's DaemonSet, removed from the primary at cni-swap (its pods "
        "must be gone after).",
    )
    new_nodes_selector: SelectorText = Field(
        default=f"{GENERATION_LABEL}=cni", description="The primary's new worker generation."
    )
    old_nodes_selector: SelectorText | None = Field(
        default=None,
        description="The generation that is drained; unset: every worker (no control-plane "
        "role) outside the new generation.",
    )
    pod_network: PodNetworkCheck = Field(
        default=PodNetworkCheck(),
        description="The pod-to-pod probe after the roll: one pod per node dialling the "
        "next node's.",
    )

    @model_validator(mode="after")
    def _old_generation_leaves_the_new_alone(self) -> Self:
        old, new = self.old_nodes_selector, self.new_nodes_selector
        if old is not None and covers(parse(old), parse(new)):
            raise ValueError(
                f"old_nodes_selector {old!r} selects every node new_nodes_selector {new!r} "
                "selects, so the new generation would be drained with the old; give it a "
                f"requirement the new generation fails{_for_instance(new)}"
            )
        return self


def _for_instance(new: str) -> str:
    """An old-generation requirement that excludes ``new``'s nodes, when one is plain."""
    for requirement in parse(new):
        if requirement.inside and len(requirement.values) == 1 and ABSENT not in requirement.values:
            return f" (e.g. '{requirement.key}!={next(iter(requirement.values))}')"
    return ""


class GateSettings(BaseModel):
    """Waits that hooks run inside themselves (cni-swap's per-record DNS sync)."""

    model_config = ConfigDict(extra="forbid")

    dns_sync_timeout: float = Field(
        default=300.0,
        gt=0,
        description="Seconds to wait for Route53 to report a record change INSYNC (cni-swap's "
        "per-record DNS moves).",
    )
    interval: float = Field(
        default=10.0, gt=0, description="Seconds between two checks of that wait."
    )


class DnsDrainSettings(BaseModel):
    """``kubeshift:runtime.dns_drain``: how long a load balancer outlives its records.

    Before a phase deletes a load balancer its records moved away from, kubeshift waits
    the records' TTL plus ``margin`` since the move was in sync, then until CloudWatch
    counted no traffic on it for ``quiet_minutes`` (``automation/steps/dns_drain.py``).
    """

    model_config = ConfigDict(extra="forbid")

    margin: float = Field(
        default=60.0,
        ge=0,
        description="Seconds waited beyond the records' TTL (resolvers that hold answers longer).",
    )
    quiet_minutes: int = Field(
        default=3,
        ge=1,
        le=60,
        description="Minutes without new flows or requests (CloudWatch) that count as drained.",
    )
    traffic_timeout: float = Field(
        default=1800.0,
        gt=0,
        description="Seconds, after the TTL wait, to wait for the traffic to stop before "
        "the step fails naming the load balancers that still receive some.",
    )


class ApiProbeSettings(BaseModel):
    """``kubeshift:runtime.api_probe``: the API availability probe across the phases that
    move the control plane (``automation/steps/api_probe.py``).

    Every ``interval`` seconds it asks the API ``/readyz`` on a new connection through
    the kubeconfig's server, so each request resolves the API's name as a client would.
    With ``resolve: route53`` a request also counts only while Route53's answer for the
    API record serves: a running member instance whose etcd member answers, or a load
    balancer with such a member as a healthy target — for an operator's machine that
    cannot resolve the zone, and for the sandbox, which has no DNS.
    """

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(default=True, description="Probe the API across control-plane phases.")
    resolve: Literal["dns", "route53"] = Field(
        default="dns",
        description="How the API's name is followed: the resolver clients use (dns), or "
        "Route53's answer checked against EC2, the load balancers' target health and etcd "
        "(route53).",
    )
    interval: float = Field(default=1.0, gt=0, le=60, description="Seconds between requests.")
    timeout: float = Field(default=5.0, gt=0, le=60, description="Seconds a request may take.")
    max_gap: float = Field(
        default=30.0,
        gt=0,
        description="Longest time in seconds the API may go unanswered in a phase; longer "
        "stops the run after that phase, naming the gap.",
    )


class EtcdSettings(BaseModel):
    """``kubeshift:runtime.etcd``: how the control-plane gates reach etcd itself.

    Each control-plane member runs one etcd member at its fixed address (the stack's
    ``member_address`` on either side), so kubeshift knows every member's client and
    peer URL before and after its move; ``endpoints`` adds any other way in (a load
    balancer, a bastion's tunnel).
    """

    model_config = ConfigDict(extra="forbid")

    endpoints: list[str] = Field(
        default_factory=list,
        description="Extra client URLs (http(s)://host:port) for cluster calls, tried "
        "before the members' own addresses.",
    )
    scheme: Literal["https", "http"] = Field(
        default="https", description="Scheme of the members' client and peer URLs."
    )
    client_port: int = Field(default=2379, ge=1, le=65535, description="Members' client port.")
    peer_port: int = Field(default=2380, ge=1, le=65535, description="Members' peer port.")
    address_map: dict[IPv4Network, IPv4Network] = Field(
        default_factory=dict,
        description="Where kubeshift reaches a VPC range, when not at the VPC address "
        "itself (the sandbox plays each VPC on a loopback range); same prefix lengths.",
    )
    ca_file: Path | None = Field(
        default=None, description="CA bundle etcd's serving certificates chain to."
    )
    cert_file: Path | None = Field(default=None, description="Client certificate (with key).")
    key_file: Path | None = Field(default=None, description="Client key (with certificate).")
    max_raft_lag: int = Field(
        default=DEFAULT_MAX_RAFT_LAG,
        ge=0,
        description="Raft entries a member may trail the leader by and count as caught up.",
    )
    timeout: float = Field(
        default=DEFAULT_TIMEOUT,
        gt=0,
        description="Seconds per request; above etcd's own ~7s request deadline.",
    )
    connect_timeout: float = Field(
        default=DEFAULT_CONNECT_TIMEOUT, gt=0, description="Seconds to connect to a member."
    )

    @field_validator("endpoints")
    @classmethod
    def _client_urls(cls, value: list[str]) -> list[str]:
        return [check_endpoint(url) for url in value]

    @field_validator("address_map")
    @classmethod
    def _same_sizes(cls, value: dict[IPv4Network, IPv4Network]) -> dict[IPv4Network, IPv4Network]:
        for vpc, reached in value.items():
            if vpc.prefixlen != reached.prefixlen:
                raise ValueError(f"{vpc} and {reached} differ in size; map equal ranges")
        for (a, a_at), (b, b_at) in itertools.combinations(value.items(), 2):
            if a.overlaps(b):
                raise ValueError(f"{a} and {b} overlap; an address would be mapped twice")
            if a_at.overlaps(b_at):
                raise ValueError(
                    f"{a} and {b} are mapped to overlapping ranges ({a_at}, {b_at}); two "
                    "members could be reached at one address"
                )
        return value

    @model_validator(mode="after")
    def _cert_with_key(self) -> Self:
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("cert_file and key_file go together; give both or neither")
        return self

    @model_validator(mode="after")
    def _two_ports(self) -> Self:
        if self.client_port == self.peer_port:
            raise ValueError(
                f"client_port and peer_port are both {self.client_port}; etcd serves clients "
                "and peers on two ports"
            )
        return self

    def reach(self, address: str) -> str:
        """Where kubeshift reaches the VPC ``address`` (itself unless a range maps it)."""
        ip = IPv4Address(address)
        for vpc, reached in self.address_map.items():
            if ip in vpc:
                return str(reached.network_address + (int(ip) - int(vpc.network_address)))
        return address

    def client_url(self, address: str) -> str:
        return f"{self.scheme}://{self.reach(address)}:{self.client_port}"

    def peer_url(self, address: str) -> str:
        return f"{self.scheme}://{self.reach(address)}:{self.peer_port}"

    def client(self, endpoints: list[str]) -> EtcdClient:
        """A client for ``endpoints`` with these TLS files and timeouts."""
        return EtcdClient(
            endpoints,
            ca_file=self.ca_file,
            cert_file=self.cert_file,
            key_file=self.key_file,
            timeout=self.timeout,
            connect_timeout=self.connect_timeout,
        )


class RuntimeSettings(BaseModel):
    """The ``kubeshift:runtime`` stack key."""

    model_config = ConfigDict(extra="forbid")

    clusters: dict[str, ClusterAccess] = Field(
        default_factory=lambda: {"primary": ClusterAccess()},
        description="Kubernetes access per cluster role: primary (and mirror for cni-swap).",
    )
    aws: AwsAccess = Field(
        default_factory=AwsAccess,
        description="How the hooks and gates reach AWS (profile, region, endpoint, timeouts).",
    )
    retiring_taint: Taint = Field(
        default_factory=lambda: Taint(key="kubeshift.io/migration", value="retiring"),
        description="Taint put on nodes that are about to be drained (seed: migration=migration).",
    )
    ingress: IngressSettings = Field(
        default_factory=IngressSettings,
        description="vpc-move: the ingress controller switched to NodePort and moved to the "
        "new nodes.",
    )
    drain: DrainOptions = Field(
        default_factory=DrainOptions,
        description="Which pods a drain evicts, with kubectl drain's options (its spellings "
        "accepted too).",
    )
    drain_limits: DrainLimits = Field(
        default_factory=DrainLimits,
        description="How much a drain disrupts at once, and its deadline.",
    )
    gates: GateSettings = Field(
        default_factory=GateSettings,
        description="Waits that hooks run inside themselves (cni-swap's per-record DNS sync).",
    )
    dns_drain: DnsDrainSettings = Field(
        default_factory=DnsDrainSettings,
        description="How long a load balancer outlives the records that moved away from it.",
    )
    api_probe: ApiProbeSettings = Field(
        default_factory=ApiProbeSettings,
        description="The API availability probe across the control-plane phases and cleanup.",
    )
    calico: CalicoSettings = Field(
        default_factory=CalicoSettings, description="overlay-switch: where Calico lives."
    )
    mirror: MirrorSettings = Field(
        default_factory=MirrorSettings,
        description="cni-swap: what is copied to the mirror, how DNS moves, the old and new CNI.",
    )
    etcd: EtcdSettings | None = Field(
        default=None,
        description="How the control-plane phases reach etcd itself (each member at its "
        "fixed address; ports, TLS files); unset: those phases refuse to start.",
    )
    dns_writers: Literal["refuse", "pause"] = Field(
        default="refuse",
        description="Records to move that a DNS controller (external-dns) writes: refuse, "
        "naming each, or pause the controllers for the window (restored at the end).",
    )
    probe_services: list[Annotated[str, StringConstraints(pattern=_SERVICE_REF)]] = Field(
        default_factory=list,
        description="namespace/name of Services the availability probe watches while the "
        "drain and the ingress move run: their step reports the minimum ready endpoints per "
        "Service and fails on any zero-endpoint interval.",
        examples=[["shop/web", "payments/ledger"]],
    )


def _secret_path(value: Any, path: str) -> str:
    """The first ``secure:`` value under ``value``, as a dotted path ("" when none)."""
    if isinstance(value, dict):
        if set(value) == {"secure"}:
            return path
        for key, child in value.items():
            if found := _secret_path(child, f"{path}.{key}"):
                return found
    if isinstance(value, list):
        for index, child in enumerate(value):
            if found := _secret_path(child, f"{path}[{index}]"):
                return found
    return ""


def load_runtime_settings(values: dict[str, Any]) -> RuntimeSettings:
    """Validate ``kubeshift:runtime`` from a stack's config values.

    Unknown keys are refused with the nearest valid name. The hooks call AWS in the
    stack's ``aws:region`` unless ``kubeshift:runtime.aws.region`` says otherwise.
    """
    raw = values.get(RUNTIME_KEY)
    raw = {} if raw is None else raw
    if not isinstance(raw, dict):
        raise ConfigError(f"{RUNTIME_KEY} must be a mapping of settings.")
    secret = _secret_path(raw, RUNTIME_KEY)
    if secret:
        raise ConfigError(
            f"{secret} is a secret, but kubeshift reads its runtime settings without the "
            "stack's key; keep them plain and leave credentials to kubeconfigs and AWS profiles."
        )
    try:
        settings = RuntimeSettings.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        message = sentence(RuntimeSettings, RUNTIME_KEY, first)
        if first["loc"] and first["loc"][0] == "probe_services" and first["type"] != "missing":
            message = (
                f"{join(RUNTIME_KEY, first['loc'])} {first['input']!r} is not a Service "
                "reference; write namespace/name."
            )
        raise ConfigError(message) from None
    region = values.get(REGION_KEY)
    if settings.aws.region is None and isinstance(region, str) and region:
        settings = settings.model_copy(
            update={"aws": settings.aws.model_copy(update={"region": region})}
        )
    return settings
