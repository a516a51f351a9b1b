"""Runtime settings of cni-swap, ``kubeshift:runtime.mirror``: what is copied to the
mirror cluster (namespaces, kinds, registry rewrites, a label selector, stateful
workloads), how its DNS moves, the old and new CNI's DaemonSets, the worker generations
drained and kept (:data:`GENERATION_LABEL`), and the pod-network probe after the roll.
Nested in :class:`~automation.config.settings.RuntimeSettings`; each
``Field(description=...)`` is a row of ``docs/reference.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Self

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from automation.kube.copy.kinds import DEFAULT_KINDS
from automation.kube.copy.options import CopiedKinds, CopiedNamespaces, RegistryRewrites
from automation.kube.pod_network_check import PodNetworkCheck
from automation.kube.selector_text import ABSENT, covers, parse
from automation.kube.selector_text import check as check_selector
from automation.kube.stateful import StatefulChoice

# A label selector as text (``tier=web,track!=canary``), read as the API server reads it.
SelectorText = Annotated[str, AfterValidator(check_selector)]

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
    old_cni_manifest: Path | None = Field(
        default=None,
        description="The old CNI's manifest (e.g. the weave-daemonset-k8s.yaml it was "
        "installed from), applied to the primary with server-side apply to take cni-swap "
        "back; unset: cni-swap cannot be taken back.",
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
