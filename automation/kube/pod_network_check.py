"""What the pod-network probe is (a settings model the adapter and the settings share)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

PROBE_LABEL = "app.kubernetes.io/name"


class PodNetworkCheck(BaseModel):
    """``kubeshift:runtime.mirror.pod_network``: the probe that tries pod-to-pod traffic."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = Field(
        default=True,
        description="false: no probe after the roll, for nodes that carry no pod traffic "
        "(the sandbox's kwok nodes); the CNI gate still runs.",
    )
    namespace: str = Field(default="kube-system", description="Namespace the probe's pods run in.")
    name: str = Field(
        default="kubeshift-pod-network-probe",
        description="Name (and app.kubernetes.io/name label) of the probe DaemonSet, one pod "
        "per node.",
    )
    image: str = Field(
        default="registry.k8s.io/e2e-test-images/agnhost:2.53",
        description="An agnhost image (its netexec answers /hostname and /dial).",
    )
    port: int = Field(
        default=8080, ge=1, le=65535, description="Port the probe pods' netexec listens on."
    )
    dial_timeout: float = Field(default=5.0, gt=0, description="Seconds per probe request.")

    @property
    def off(self) -> str:
        """Why nothing is probed (``""`` when the probe runs)."""
        return (
            "" if self.enabled else "skipped: kubeshift:runtime.mirror.pod_network.enabled is false"
        )

    @property
    def selector(self) -> str:
        return f"{PROBE_LABEL}={self.name}"
