"""Runtime settings: how the runner reaches clusters and AWS, and how hooks behave.

They live beside the Pulumi configuration in the stack file under the key
``kubeshift:runtime`` (the Pulumi program ignores it). Everything has a safe default,
so a stack without the key runs against the current kubeconfig context and the
default AWS profile. Validation errors name the key, in one sentence.

:class:`RuntimeSettings` and :func:`load_runtime_settings` live here with the ingress and
Calico settings; the families it nests have their own modules: etcd's
(``automation.config.etcd_settings``), the mirror's (``automation.config.mirror_settings``)
and the waits' and probes' (``automation.config.gate_settings``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from automation.aws.clients import AwsAccess
from automation.config.etcd_settings import EtcdSettings
from automation.config.gate_settings import ApiProbeSettings, DnsDrainSettings, GateSettings
from automation.config.lock_settings import LeaseSettings
from automation.config.mirror_settings import MirrorSettings
from automation.core.errors import ConfigError
from automation.kube.clients import ClusterAccess
from automation.kube.drain.filters import DrainOptions
from automation.kube.drain.run import DrainLimits
from automation.kube.nodes import Taint
from components.contract.keys import REGION_KEY, RUNTIME_KEY
from components.contract.validation import join, sentence

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
    run_lock: LeaseSettings = Field(
        default_factory=LeaseSettings,
        description="The lease of the run lock every run takes in the stack's backend (CI may "
        "use seconds).",
    )
    terraform_state: str | None = Field(
        default=None,
        description="The Terraform state that built the cluster, where the cluster came from "
        "Terraform: a local file or s3://BUCKET/KEY (format version 4). adopt names what it "
        "still manages of what kubeshift adopts, with the `terraform state rm` commands that "
        "release it, and a phase refuses to start while it still manages a resource the "
        "phase would change.",
        examples=["s3://acme-terraform/eu-west-1/k8s-prod.tfstate"],
    )
    kops_state: str | None = Field(
        default=None,
        pattern=r"^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]/[^/\s]\S*$",
        description="kops's ConfigBase for the cluster, where kops built it: "
        "s3://BUCKET/CLUSTER (its cluster spec's configBase; `adopt --write-config` reads it "
        "from the nodes' boot script). adopt names the instance groups kops's state store "
        "still holds of what kubeshift adopts, with the `aws s3 mv` commands (or `kubeshift "
        "release`) that release them, and a phase refuses to start while the store still "
        "holds a group the phase would change.",
        examples=["s3://acme-kops-state/k8s-prod.example.com"],
    )
    preview_scope: Literal["judged", "verify", "full"] = Field(
        default="judged",
        description="What each phase's preview and update reach. judged: what the program "
        "would change, judged offline against the stack's checkpoint (`pulumi stack export`), "
        "what depends on it and the stack resource; for a phase that changes nothing, no "
        "preview and an update of the stack resource alone (the progress record); every "
        "resource when a provider's configuration changed or an update was interrupted. "
        "verify: every resource, and the run stops where the engine changes something the "
        "judgement left out. full: every resource, never judged.",
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
