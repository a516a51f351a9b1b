"""vpc-move (seed 001): move a running cluster to a new VPC over peering, live.

Read top to bottom, this is the procedure: build the new network and peer it; add
suffixed shared resources; put ingress on NodePort so old target groups reach pods on
new nodes; start new workers and taint the old ones; move DNS once the new targets
serve; move ingress; drain old workers under their PDBs; retire them (aliases, not
``terraform state mv``); move etcd members one at a time, never below quorum; clean up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from automation.model.phase import (
    CREATES_AND_UPDATES,
    CREATES_ONLY,
    ChangePolicy,
    Gate,
    Hook,
    Phase,
    Scenario,
    Watch,
    retires_what_the_program_retires,
    undoes_what_the_phase_did,
)
from automation.model.way_back import NoReturn, Reverse
from automation.steps import etcd, etcd_managed, ingress, nodes, preflight, traffic
from automation.steps.api_probe import API_PROBE
from components.contract.scenarios import vpc_move as ids

if TYPE_CHECKING:
    from components.contract.models import StackConfig

TAINT_OLD = Hook(
    name="taint-old-nodes",
    summary="taint source-VPC nodes NoSchedule (EC2 vpc-id + cluster tag)",
    run=nodes.taint_retiring_nodes,
)
NEW_WORKERS_READY = Gate(
    name="new-workers-ready",
    summary="every new worker joined and Ready",
    check=nodes.target_workers_ready,
    wakes_on=(Watch("nodes"),),
    timeout=1800,
    interval=15,
)
NEW_TARGETS_HEALTHY = Gate(
    name="new-targets-healthy",
    summary="new ingress target groups report every target healthy",
    check=traffic.new_ingress_targets_healthy,
    timeout=900,
    interval=10,
)
NEW_API_TARGETS_HEALTHY = Gate(
    name="api-targets-healthy",
    summary="the new API load balancer has a healthy API server",
    check=traffic.new_api_targets_healthy,
    timeout=900,
    interval=10,
)
RECORDS_AS_DECLARED = Gate(
    name="records-in-route53",
    summary="Route53 answers every record as the stack now declares it",
    check=traffic.records_as_declared,
    timeout=300,
    interval=5,
)
SOURCE_API_TARGETS_HEALTHY = Gate(
    name="source-api-targets-healthy",
    summary="the source API load balancer has a healthy API server",
    check=traffic.source_api_targets_healthy,
    timeout=900,
    interval=10,
)
API_RECORD_AS_DECLARED = Gate(
    name="api-record-in-route53",
    summary="Route53 answers the API record as this phase declares it",
    check=traffic.api_record_as_declared,
    timeout=300,
    interval=5,
)
PEERING_REACHABLE = Gate(
    name="peering-reachable",
    summary="routes, network ACLs and security groups let both VPCs' nodes and the API "
    "reach each other over the peering",
    check=traffic.peering_reachable,
    timeout=300,
    interval=10,
)
CONTROL_PLANE_QUORUM = Gate(
    name="control-plane-ready",
    summary="every control-plane member Ready (one may go without losing quorum)",
    check=nodes.control_plane_ready,
    wakes_on=(Watch("nodes"),),
    timeout=1800,
    interval=15,
)

ETCD_QUORUM_KEPT = Gate(
    name="etcd-quorum-kept",
    summary="etcd: every member healthy and caught up; quorum kept with this one down",
    check=etcd.quorum_kept,
    timeout=600,
    interval=2,
)
MEMBER_ADDRESS_FREE = Hook(
    name="member-address-free",
    summary="the moving member's fixed address is free in the subnet it goes to",
    run=preflight.member_address_free,
)
RECORD_ETCD_MEMBER = Hook(
    name=etcd.RECORD_STEP,
    summary="record the moving etcd member's ID, its new peer URL and the member count",
    run=etcd.record_member,
)
ETCD_PEER_URL = Hook(
    name="etcd-peer-url",
    summary="point the member's peer URL at its new address (through the others' quorum)",
    run=etcd.move_peer_url,
)
ETCD_MEMBER_BACK = Gate(
    name="etcd-member-back",
    summary="etcd: the member is back under the same ID at its new peer URL, caught up",
    check=etcd.member_is_back,
    timeout=1800,
    interval=2,  # a few reads of etcd's member list and status: cheap to ask often
)

MANAGED_QUORUM_KEPT = Gate(
    name=ETCD_QUORUM_KEPT.name,
    summary="etcd-manager's main and events etcd: every member healthy and caught up; "
    "quorum kept in both with this one down",
    check=etcd_managed.quorum_kept,
    timeout=600,
    interval=2,
)
RECORD_MANAGED_MEMBERS = Hook(
    name=etcd.RECORD_STEP,
    summary="record the moving member's ID, peer URLs (its names) and the member count in "
    "the main and the events etcd",
    run=etcd_managed.record_members,
)
MANAGED_MEMBERS_BACK = Gate(
    name=ETCD_MEMBER_BACK.name,
    summary="the member's volumes on its new instance, and etcd-manager's main and events "
    "member back under the same IDs, caught up (no peer URL written: etcd-manager's)",
    check=etcd_managed.members_back,
    timeout=1800,
    interval=2,
)


def _etcd_steps(membership: str) -> tuple[tuple[Gate | Hook, ...], tuple[Gate | Hook, ...]]:
    """A member move's steps before its update (members and etcd ready to let it go) and
    its etcd steps after it, by who keeps etcd's membership."""
    if membership == "etcd-manager":
        return (
            (CONTROL_PLANE_QUORUM, MANAGED_QUORUM_KEPT, RECORD_MANAGED_MEMBERS),
            (MANAGED_MEMBERS_BACK,),
        )
    return (
        (MEMBER_ADDRESS_FREE, CONTROL_PLANE_QUORUM, ETCD_QUORUM_KEPT, RECORD_ETCD_MEMBER),
        (ETCD_PEER_URL, ETCD_MEMBER_BACK),
    )


OPEN_BRIDGE = Hook(
    name="ingress-to-nodeport",
    summary="bridge the ingress Service: NodePort (unless a controller owns its LB), "
    "Cluster traffic policy, node ports kept, what it had saved on it",
    run=ingress.ingress_to_nodeport,
)
CLOSE_BRIDGE = Hook(
    name="ingress-to-loadbalancer",
    summary="close the ingress Service's bridge: type, traffic policy, health-check node "
    "port and LB fields back as they were",
    run=ingress.ingress_to_loadbalancer,
)
OLD_TARGETS_HEALTHY = Gate(
    name="old-targets-healthy",
    summary="the source ingress target groups report every target healthy",
    check=traffic.old_ingress_targets_healthy,
    timeout=900,
    interval=10,
)
RESUME_DNS_WRITERS = Hook(
    name="resume-dns-writers",
    summary="give the DNS controllers kubeshift paused their replicas back",
    run=traffic.resume_dns_writers,
)


def _control_plane_phase(member: int, members: int, membership: str = "static") -> Phase:
    first = member == 1
    etcd_before, etcd_after = _etcd_steps(membership)
    # Member 1 moves with the API record on the source API load balancer, member 2's
    # phase moves the record to the new one; taking that phase back moves it back once
    # the source load balancer serves (the later members' keep it on the new one).
    record_moved = member == 2
    serving_after_back = (
        (SOURCE_API_TARGETS_HEALTHY,)
        if record_moved
        else (() if first else (NEW_API_TARGETS_HEALTHY,))
    )
    dns = (
        "API record stays on the source API load balancer, which its other members serve"
        if first
        else "API record on the new API load balancer, once it serves"
    )
    member_back = Gate(
        name="member-back",
        summary=f"member {member} rejoined; all members Ready",
        check=nodes.control_plane_ready,
        wakes_on=(Watch("nodes"),),
        timeout=1800,
        interval=15,
    )
    return Phase(
        id=ids.control_plane_phase(member),
        summary=f"move control-plane member {member}/{members} to the target VPC; {dns}",
        # From member 2 on the API record names the new API load balancer (member 1 moved
        # behind it): it must serve before the record moves to it.
        before=(*etcd_before, *(() if first else (NEW_API_TARGETS_HEALTHY,))),
        after=(
            *etcd_after,
            member_back,
            *(() if first else (NEW_API_TARGETS_HEALTHY,)),
            API_RECORD_AS_DECLARED,
        ),
        changes=retires_what_the_program_retires(
            summary=f"replaces only member {member}'s resources and the API record"
        ),
        targeted=True,
        destructive=True,
        way_back=Reverse(
            "the member moved back to the source VPC the way it came: its volume follows "
            "it, and the same etcd checks keep quorum"
            + ("; the API record back on the source API load balancer" if record_moved else ""),
            before=(*etcd_before, *serving_after_back),
            after=(*etcd_after, member_back, API_RECORD_AS_DECLARED),
            changes=undoes_what_the_phase_did(
                f"member {member}'s resources and the API record back only"
            ),
            runs=True,
        ),
        probe=API_PROBE,
    )


def scenario(config: StackConfig) -> Scenario:
    control_plane_members = config.cluster.control_plane.members
    head = (
        Phase(
            id=ids.BASELINE,
            summary="the cluster as it runs today in the source VPC",
            changes=CREATES_AND_UPDATES,
            way_back=Reverse("nothing to undo: the cluster runs as it did, adopted as it is"),
        ),
        Phase(
            id=ids.TARGET_NETWORK,
            summary="new VPC, subnets per AZ (members' addresses reserved), peering and routes "
            "both ways",
            changes=ChangePolicy(
                allowed_ops=frozenset({"create", "update"}),
                summary="creates; in-place updates (peering options)",
            ),
            way_back=Reverse(
                "delete the target network (nothing uses it yet)",
                changes=undoes_what_the_phase_did("deletes of the target network only"),
                runs=True,
            ),
        ),
        Phase(
            id=ids.SHARED_RESOURCES,
            summary="suffixed SGs, LBs and TGs in the new VPC; each side admits the other's nodes",
            changes=CREATES_AND_UPDATES,
            way_back=Reverse(
                "delete the suffixed SGs, LBs and TGs and the rules admitting the other side "
                "(no record points at them yet)",
                changes=undoes_what_the_phase_did("deletes of the shared resources only"),
                runs=True,
            ),
        ),
        Phase(
            id=ids.INGRESS_NODEPORT,
            summary="ingress Service to NodePort so old target groups still reach it",
            before=(OPEN_BRIDGE,),
            changes=CREATES_AND_UPDATES,
            way_back=Reverse(
                "close the bridge: the Service gets back every field it had",
                before=(CLOSE_BRIDGE,),
                runs=True,
            ),
        ),
        Phase(
            id=ids.TARGET_WORKERS,
            summary="suffixed worker ASGs in the new VPC, split as each pool says (group_per)",
            before=(
                Hook(
                    name="aws-preflight",
                    summary="check what AWS would refuse: target-group VPCs, SG references "
                    "across VPCs, peered CIDRs",
                    run=preflight.aws_preflight,
                ),
            ),
            after=(NEW_WORKERS_READY, TAINT_OLD),
            changes=CREATES_ONLY,
            way_back=Reverse(
                "untaint the old nodes; drain the new ones under their budgets, then delete "
                "the new ASGs",
                before=(
                    Hook(
                        name="untaint-old-nodes",
                        summary="source-VPC nodes schedulable again (the retiring taint off)",
                        run=nodes.untaint_retiring_nodes,
                    ),
                    Hook(
                        name="taint-new-nodes",
                        summary="taint the target VPC's workers NoSchedule",
                        run=nodes.taint_target_workers,
                    ),
                    Hook(
                        name="drain-new-nodes",
                        summary="evict every pod from the target VPC's workers, PDB-respecting",
                        run=nodes.drain_target_workers,
                        destructive=True,
                        retries=0,
                    ),
                    Gate(
                        name="new-nodes-empty",
                        summary="no evictable pod left on the target VPC's workers",
                        check=nodes.no_pods_left_on_target_workers,
                        wakes_on=(Watch("pods"),),
                        timeout=600,
                        interval=10,
                    ),
                    Gate(
                        name="workloads-whole",
                        summary="every Deployment and StatefulSet available and every "
                        "budget met again, on the source VPC's nodes",
                        check=nodes.workloads_whole,
                        wakes_on=(Watch("pods"),),
                        timeout=600,
                        interval=10,
                    ),
                ),
                after=(
                    Gate(
                        name="new-nodes-gone",
                        summary="every worker Node runs in the source VPC again",
                        check=nodes.target_workers_gone,
                        wakes_on=(Watch("nodes"),),
                        timeout=900,
                        interval=10,
                    ),
                ),
                changes=undoes_what_the_phase_did("deletes of the new worker groups only"),
                runs=True,
            ),
        ),
        Phase(
            id=ids.DNS_CUTOVER,
            summary="point ingress records at the new load balancers",
            before=(
                NEW_TARGETS_HEALTHY,
                PEERING_REACHABLE,
                Hook(
                    name="dns-writers",
                    summary="no DNS controller (external-dns) writes a record to move, or pause it",
                    run=traffic.dns_writers_guard,
                ),
            ),
            after=(RECORDS_AS_DECLARED, NEW_TARGETS_HEALTHY),
            changes=retires_what_the_program_retires(summary="record changes only"),
            destructive=True,
            way_back=Reverse(
                "records back to the old load balancers, checked in sync; the DNS "
                "controllers kubeshift paused get their replicas back",
                before=(OLD_TARGETS_HEALTHY,),
                after=(RECORDS_AS_DECLARED, RESUME_DNS_WRITERS),
                changes=undoes_what_the_phase_did("record changes back only"),
                runs=True,
            ),
        ),
        Phase(
            id=ids.INGRESS_MOVE,
            summary="evict ingress pods onto new nodes; Service back to LoadBalancer",
            before=(
                Hook(
                    name="move-ingress-pods",
                    summary="evict ingress pods; wait for replacements Ready on new nodes",
                    run=ingress.move_ingress_pods,
                    destructive=True,
                ),
            ),
            after=(CLOSE_BRIDGE,),
            changes=CREATES_AND_UPDATES,
            way_back=Reverse(
                "the ingress Service bridged as NodePort again, node ports kept (its pods go "
                "back to the old nodes when target-workers is taken back)",
                before=(OPEN_BRIDGE,),
                runs=True,
            ),
        ),
        Phase(
            id=ids.DRAIN_WORKERS,
            summary="drain old workers concurrently under their PodDisruptionBudgets",
            before=(
                Hook(
                    name="drain-old-nodes",
                    summary="evict every pod from source-VPC nodes, PDB-respecting",
                    run=nodes.drain_retiring_nodes,
                    destructive=True,
                    retries=0,
                ),
            ),
            after=(
                Gate(
                    name="old-nodes-empty",
                    summary="no evictable pod left on source-VPC nodes",
                    check=nodes.no_pods_left_on_retiring_nodes,
                    wakes_on=(Watch("pods"),),
                    timeout=600,
                    interval=10,
                ),
            ),
            changes=CREATES_AND_UPDATES,
            destructive=True,
            way_back=Reverse(
                "uncordon the old nodes and let their groups launch and rebalance again; they "
                "keep the retiring taint, as before the drain, so the workloads stay on the new "
                "workers until target-workers is taken back",
                before=(
                    Hook(
                        name="uncordon-old-nodes",
                        summary="source-VPC nodes schedulable again (the retiring taint stays)",
                        run=nodes.uncordon_retiring_nodes,
                    ),
                ),
                changes=undoes_what_the_phase_did("the old groups' processes resumed only"),
                runs=True,
            ),
        ),
        Phase(
            id=ids.RETIRE_OLD_WORKERS,
            summary="delete the old ASGs; shared resources move by alias (no state surgery)",
            before=(
                Hook(
                    name="dns-drain",
                    summary="the old ingress LB's clients left: records' TTL + margin since "
                    "dns-cutover, then no traffic in CloudWatch",
                    run=traffic.drain_old_ingress,
                ),
            ),
            changes=retires_what_the_program_retires(
                summary="deletes of the old workers and what only they used"
            ),
            destructive=True,
            way_back=Reverse(
                "the old ASGs created again from drain-workers' configuration: new instances "
                "from the same launch templates (what was on the old nodes' disks is gone)"
            ),
        ),
    )
    membership = config.cluster.control_plane.membership
    moves = tuple(
        _control_plane_phase(m, control_plane_members, membership)
        for m in range(1, control_plane_members + 1)
    )
    tail = (
        Phase(
            id=ids.CLEANUP,
            summary="remove migration-only resources (and the source network when asked)",
            before=(
                Hook(
                    name="dns-drain",
                    summary="the source API LB's clients left: records' TTL + margin since "
                    "the API record moved off it, then no traffic in CloudWatch",
                    run=traffic.drain_source_api,
                ),
                RESUME_DNS_WRITERS,
            ),
            changes=retires_what_the_program_retires(
                summary="deletes of migration-only resources only"
            ),
            destructive=True,
            way_back=NoReturn(
                "it deletes the source API load balancer and the source's shared resources "
                "(and, when configured, the peering and the source VPC); made again they "
                "would be new resources under new IDs"
            ),
            probe=API_PROBE,
        ),
    )
    return Scenario(
        id=ids.ID,
        summary=ids.SPEC.summary,
        phases=head + moves + tail,
    )
