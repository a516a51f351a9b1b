"""overlay-switch (seed 002): Calico from IPIP to native routing, only when routes exist.

baseline (IPIP) → routes (capacity precheck; source/dest check off) → route-readiness
(every node NetworkUnavailable=False/RouteCreated, every route table complete) →
native-routing (IPIP off, calico-node rolled) → verify.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from automation.model.phase import (
    CREATES_AND_UPDATES,
    CREATES_ONLY,
    Gate,
    Hook,
    Phase,
    Scenario,
    Watch,
    undoes_what_the_phase_did,
)
from automation.model.way_back import Reverse
from automation.steps import nodes, overlay, routes
from components.contract.scenarios import overlay_switch as ids

if TYPE_CHECKING:
    from components.contract.models import StackConfig

ROUTES_CREATED = Gate(
    name="routes-created",
    summary="every node NetworkUnavailable=False with reason RouteCreated",
    check=nodes.routes_created,
    wakes_on=(Watch("nodes"),),
    timeout=1800,
    interval=15,
)
SOURCE_DEST_CHECKS_OFF = Gate(
    name="source-dest-checks-off",
    summary="every instance of the cluster has its source/destination check off",
    check=routes.source_dest_checks_off,
    timeout=600,
    interval=10,
)
SOURCE_DEST_CHECKS_ON = Gate(
    name="source-dest-checks-on",
    summary="every instance of the cluster has its source/destination check on again",
    check=routes.source_dest_checks_on,
    timeout=600,
    interval=10,
)
ROUTE_TABLES_COMPLETE = Gate(
    name="route-tables-complete",
    summary="the route table tagged for the cluster has an active route to every node's pod CIDR",
    check=routes.route_tables_complete,
    timeout=1800,
    interval=15,
)


CALICO_ROLLED = Gate(
    name="calico-rolled",
    summary="calico-node updated and available on every node",
    check=overlay.calico_rolled,
    wakes_on=(Watch("daemonsets"), Watch("pods")),
    timeout=1800,
    interval=10,
)


def scenario(config: StackConfig) -> Scenario:
    """The phases with their steps (the same for every stack of this scenario)."""
    return Scenario(
        id=ids.ID,
        summary=ids.SPEC.summary,
        phases=(
            Phase(
                id=ids.BASELINE,
                summary="the cluster on Calico IPIP",
                changes=CREATES_AND_UPDATES,
                way_back=Reverse("nothing to undo: the cluster runs as it did, adopted as it is"),
            ),
            Phase(
                id=ids.ROUTES,
                summary="route-table capacity precheck; source/dest check off on nodes",
                before=(
                    Hook(
                        name="route-capacity",
                        summary="refuse when a route table cannot hold a route per node",
                        run=routes.check_route_capacity,
                    ),
                ),
                after=(
                    Hook(
                        name="source-dest-check-off",
                        summary="switch the source/destination check off on running instances",
                        run=routes.source_dest_check_off,
                    ),
                    SOURCE_DEST_CHECKS_OFF,
                ),
                changes=CREATES_AND_UPDATES,
                way_back=Reverse(
                    "the update takes back the shared node route table (the pod routes in it go "
                    "with it), the nodes' boot-time switch and the control plane's route "
                    "permissions; then the source/destination check on again on the running "
                    "instances (harmless while IPIP carries the traffic)",
                    after=(
                        Hook(
                            name="source-dest-check-on",
                            summary="switch the source/destination check on again on running "
                            "instances",
                            run=routes.source_dest_check_on,
                        ),
                        SOURCE_DEST_CHECKS_ON,
                    ),
                    changes=undoes_what_the_phase_did("only what routes changed"),
                    runs=True,
                ),
            ),
            Phase(
                id=ids.ROUTE_READINESS,
                summary="wait until every node's route exists; stay on the overlay until then",
                after=(ROUTES_CREATED, ROUTE_TABLES_COMPLETE),
                changes=CREATES_ONLY,
                way_back=Reverse(
                    "nothing to undo: it only waited for every node's route; the routes go "
                    "when routes is taken back (IPIP still carries the traffic)",
                    runs=True,
                ),
            ),
            Phase(
                id=ids.NATIVE_ROUTING,
                summary="IPIP off in the IP pool; roll calico-node",
                before=(ROUTES_CREATED, ROUTE_TABLES_COMPLETE),
                after=(
                    Hook(
                        name="disable-ipip",
                        summary="set the Calico IP pool's ipipMode to Never",
                        run=overlay.disable_ipip,
                        destructive=True,
                    ),
                    Hook(
                        name="roll-calico",
                        summary="restart calico-node on every node",
                        run=overlay.roll_calico,
                        destructive=True,
                    ),
                ),
                changes=CREATES_AND_UPDATES,
                destructive=True,
                way_back=Reverse(
                    "ipipMode back to Always and roll calico-node again; the routes stay until "
                    "IPIP carries the traffic",
                    before=(
                        Hook(
                            name="enable-ipip",
                            summary="set the Calico IP pool's ipipMode back to Always",
                            run=overlay.enable_ipip,
                            destructive=True,
                        ),
                        Hook(
                            name="roll-calico",
                            summary="restart calico-node on every node, on IPIP again",
                            run=overlay.roll_calico_back,
                            destructive=True,
                        ),
                        CALICO_ROLLED,
                    ),
                    runs=True,
                ),
            ),
            Phase(
                id=ids.VERIFY,
                summary="calico-node rolled everywhere; routes still complete",
                after=(
                    CALICO_ROLLED,
                    ROUTES_CREATED,
                    ROUTE_TABLES_COMPLETE,
                    SOURCE_DEST_CHECKS_OFF,
                ),
                changes=CREATES_ONLY,
                way_back=Reverse(
                    "nothing to undo: it only checks what native-routing did", runs=True
                ),
            ),
        ),
    )
