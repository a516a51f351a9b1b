"""Runtime settings of the waits and probes kubeshift's steps run around a phase: the
DNS sync a hook waits for inside itself (``kubeshift:runtime.gates``), how long a load
balancer outlives the records that moved away from it (``dns_drain``), and the API
availability probe across the control-plane phases (``api_probe``). Nested in
:class:`~automation.config.settings.RuntimeSettings`; each ``Field(description=...)`` is
a row of ``docs/reference.md``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


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
