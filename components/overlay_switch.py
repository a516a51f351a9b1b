"""The overlay-switch scenario (seed 002): from Calico's IPIP overlay to native VPC routes.

Infrastructure per phase (the runner prechecks the route-table quota, waits for every
node's ``NetworkUnavailable=False/RouteCreated`` and switches Calico):

================  ==============================================================
baseline          the cluster on the overlay
routes            nodes turn their source/dest check off at boot (a new launch
                  template version, rolled by the runner); the control plane's
                  role may manage routes (the route controller runs there); one
                  private route table for every node subnet, the only one tagged
                  ``kubernetes.io/cluster/<name>=owned`` (the AWS cloud provider
                  writes pod routes to exactly one table)
route-readiness   (no change: gate on node conditions)
native-routing    (no change: Calico switched by the runner)
verify            (no change)
================  ==============================================================
"""

from __future__ import annotations

from typing import Any

import pulumi

from components import baseline
from components.contract.models import StackConfig
from components.contract.scenarios import overlay_switch as ids

TYPE = "kubeshift:scenario:OverlaySwitch"


class OverlaySwitch(pulumi.ComponentResource):
    """Top component of an overlay-switch stack; ``outputs`` are the stack outputs."""

    outputs: dict[str, Any]

    def __init__(
        self, name: str, config: StackConfig, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE, name, None, opts)
        overlay = config.migration.overlay
        assert overlay is not None  # guaranteed by config validation
        routed = config.cursor.reached(ids.ROUTES)
        net = baseline.network(
            f"{name}-network", config, config.cluster.network, self,
            shared_node_route_table=routed,
        )  # fmt: skip
        primary = baseline.cluster(f"{name}-primary", config, net, self, native_routing=routed)
        outputs = baseline.common_outputs(config, net, primary)
        outputs.update(
            {
                "native_routing": routed,
                "pod_cidr": str(overlay.pod_cidr),
                "node_pod_prefix": overlay.node_pod_prefix,
                "routes_per_table_quota": overlay.routes_per_table_quota,
            }
        )
        self.outputs = outputs
        self.register_outputs(outputs)


def build(config: StackConfig) -> dict[str, Any]:
    """Declare the overlay-switch infrastructure of ``config``'s phase; return outputs."""
    return OverlaySwitch(config.cluster.name, config).outputs
