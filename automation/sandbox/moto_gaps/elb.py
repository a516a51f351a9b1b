"""Elastic Load Balancing's gaps between the sandbox's moto and AWS: a Classic Load
Balancer's default health check and a network load balancer's health checks of a
``Local`` Service's targets, each closed by patching moto's in-process model (applied
by ``moto_gaps.close_every_gap``; each has a line in ``docs/sandbox-fidelity.md``).

- **A Classic Load Balancer has a health check from birth.** AWS gives a new one
  ``TCP:<first listener's instance port>`` every 30 s (timeout 5, unhealthy 2, healthy
  10); moto gives none and leaves ``HealthCheck`` out of ``DescribeLoadBalancers``,
  where the AWS cloud-controller-manager's service controller reads it unguarded
  (it panics).
- **A Local Service's targets fail their health checks where it has no pod.** With
  ``externalTrafficPolicy: Local`` a node forwards node-port traffic only to its own
  Ready pods and answers the health-check node port with 503 without one; moto marks
  every running instance healthy (``automation.sandbox.local_traffic``).
"""

from __future__ import annotations

import functools
from typing import Any


def default_health_checks() -> None:
    """Give a new Classic Load Balancer AWS's default health check. Idempotent."""
    from moto.elb.models import ELBBackend, FakeHealthCheck

    if getattr(ELBBackend.create_load_balancer, "_kubeshift_health_check", False):
        return
    original = ELBBackend.create_load_balancer

    @functools.wraps(original)
    def create_load_balancer(self: Any, *args: Any, **kwargs: Any) -> Any:
        balancer = original(self, *args, **kwargs)
        if balancer.health_check is None and balancer.listeners:
            port = balancer.listeners[0].instance_port
            balancer.health_check = FakeHealthCheck(
                timeout="5",
                healthy_threshold="10",
                unhealthy_threshold="2",
                interval="30",
                target=f"TCP:{port}",
            )
        return balancer

    create_load_balancer._kubeshift_health_check = True  # type: ignore[attr-defined]
    ELBBackend.create_load_balancer = create_load_balancer  # type: ignore[method-assign]


def local_traffic_health_checks() -> None:
    """A target a ``Local`` Service's health check fails on is ``unhealthy``, as a network
    load balancer reports it (``automation.sandbox.local_traffic``). Idempotent."""
    from moto.elbv2.models import FakeHealthStatus, FakeTargetGroup

    from automation.sandbox.local_traffic import UNSERVED

    if getattr(FakeTargetGroup.health_for, "_kubeshift_local", False):
        return
    original = FakeTargetGroup.health_for

    @functools.wraps(original)
    def health_for(self: Any, target: dict[str, Any], ec2_backend: Any) -> Any:
        status = original(self, target, ec2_backend)
        if status.status != "healthy":
            return status
        ports = {int(status.port)}
        if str(self.health_check_port).isdigit():
            ports.add(int(self.health_check_port))
        why = next((w for p in sorted(ports) if (w := UNSERVED.why(status.instance_id, p))), None)
        if why is None:
            return status
        return FakeHealthStatus(
            status.instance_id, status.port, self.health_check_port, "unhealthy",
            "Target.FailedHealthChecks", f"Health checks failed: {why}",
        )  # fmt: skip

    health_for._kubeshift_local = True  # type: ignore[attr-defined]
    FakeTargetGroup.health_for = health_for  # type: ignore[method-assign]
