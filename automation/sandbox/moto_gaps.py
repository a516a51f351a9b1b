"""Where the sandbox's moto (run in the supervisor's process) differs from AWS and a
migration would notice, closed by patching its in-process model.

- **An interface's fixed address stays free.** AWS takes a network interface's
  private address out of its subnet: no instance launched later is given it. moto
  keeps instance addresses in a per-subnet table that interfaces made with an explicit
  address never enter, and hands addresses out in order from the bottom of the subnet,
  so with seven instances in a subnet the eighth gets ``.10`` — a control-plane
  member's fixed address — and two interfaces answer for it.
- **A Classic Load Balancer has a health check from birth.** AWS gives a new one
  ``TCP:<first listener's instance port>`` every 30 s (timeout 5, unhealthy 2, healthy
  10); moto gives none and leaves ``HealthCheck`` out of ``DescribeLoadBalancers``,
  where the AWS cloud-controller-manager's service controller reads it unguarded
  (it panics).
"""

from __future__ import annotations

import functools
from typing import Any


def reserve_interface_addresses() -> None:
    """Record an interface's private addresses in its subnet's table, as AWS allocates
    them (an address an instance already holds stays the instance's). Idempotent."""
    from moto.ec2.models.elastic_network_interfaces import NetworkInterface

    if getattr(NetworkInterface.__init__, "_kubeshift_reserves", False):
        return
    original = NetworkInterface.__init__

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        taken = getattr(self.subnet, "_subnet_ips", None)
        if not isinstance(taken, dict):
            return
        addresses = [self.private_ip_address]
        addresses += [a.get("PrivateIpAddress") for a in self.private_ip_addresses or []]
        for address in filter(None, addresses):
            taken.setdefault(str(address), self)

    __init__._kubeshift_reserves = True  # type: ignore[attr-defined]
    NetworkInterface.__init__ = __init__  # type: ignore[method-assign]


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
