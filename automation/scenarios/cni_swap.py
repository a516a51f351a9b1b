"""cni-swap (seed 000): swap the primary's CNI while a mirror cluster serves its traffic.

Read top to bottom, this is the procedure: add the mirror's domains to the primary's
certificates; build the mirror (own names, own zone, mirrored roles and SGs) and let it
reach the primary's dependencies; copy the workloads with images pointing at the mirror
registry, then keep deploys frozen; move each service's records to the mirror once it
serves there; delete Weave, install Calico and roll the primary's nodes; move the
records back once each service serves on the primary again; revoke the grants and
tear the mirror down — only when no record still points at it.
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
    deletes_in,
    retires_what_the_program_retires,
    undoes_what_the_phase_did,
)
from automation.model.way_back import NoReturn, Reverse
from automation.steps import (
    generations,
    mirror_addresses,
    mirror_cni,
    mirror_cni_back,
    mirror_copy,
    mirror_cronjobs,
    mirror_dns,
    mirror_grants,
)
from components.contract.scenarios import cni_swap as ids

if TYPE_CHECKING:
    from components.contract.models import StackConfig

NO_INFRASTRUCTURE_CHANGES = ChangePolicy(
    allowed_ops=frozenset(), summary="no infrastructure changes (hooks only)"
)

MIRROR_NODES_READY = Gate(
    name="mirror-nodes-ready",
    summary="the mirror's workers joined and are Ready",
    check=mirror_copy.mirror_nodes_ready,
    wakes_on=(Watch("nodes", "mirror"),),
    timeout=1800,
    interval=15,
)
MIRROR_ADDRESSES_FREE = Hook(
    name="mirror-addresses-free",
    summary="every fixed address of the mirror's members is free in the primary's subnets",
    run=mirror_addresses.mirror_addresses_free,
)
GRANT_MIRROR = Hook(
    name="grant-mirror-access",
    summary="dependency SGs (RDS, caches) admit the mirror's nodes as they admit the primary's",
    run=mirror_grants.grant_mirror_access,
)
COPY = Hook(
    name="copy-to-mirror",
    summary="copy namespaces to the mirror: server fields stripped, image registry rewritten",
    run=mirror_copy.copy_to_mirror,
)
MIRROR_WORKLOADS = Gate(
    name="mirror-workloads-available",
    summary="every copied Deployment/StatefulSet available on the mirror, PDBs satisfied",
    check=mirror_copy.mirror_workloads_available,
    wakes_on=(Watch("deployments", "mirror"),),
    timeout=1200,
    interval=10,
)
FROZEN = Gate(
    name="deploys-frozen",
    summary="nothing copied changed on the primary since the copy (re-run the copy if so)",
    check=mirror_copy.mirror_matches_primary,
    timeout=60,
    interval=10,
)
SERVE_ON_MIRROR = Gate(
    name="services-serve-on-mirror",
    summary="each Service with DNS names has a load balancer and ready endpoints on the mirror",
    check=mirror_dns.services_serve_on_mirror,
    wakes_on=(Watch("endpointslices", "mirror"),),
    timeout=900,
    interval=10,
)
SERVE_ON_PRIMARY = Gate(
    name="services-serve-on-primary",
    summary="each Service with DNS names has a load balancer and ready endpoints on the primary",
    check=mirror_dns.services_serve_on_primary,
    wakes_on=(Watch("endpointslices"),),
    timeout=900,
    interval=10,
)
NO_RECORD_ON_MIRROR = Gate(
    name="no-record-on-mirror",
    summary="every service's records point at the primary",
    check=mirror_dns.records_on_primary,
    timeout=300,
    interval=10,
)
DNS_WRITERS = Hook(
    name="dns-writers",
    summary="no DNS controller (external-dns) writes a record to move, or pause it",
    run=mirror_dns.dns_writers_guard,
)
RECORDS_TO_MIRROR = Hook(
    name="dns-to-mirror",
    summary="point each service's records at its load balancer on the mirror",
    run=mirror_dns.dns_to_mirror,
    destructive=True,
)
RECORDS_TO_PRIMARY = Hook(
    name="dns-to-primary",
    summary="point each service's records back at the primary's load balancers",
    run=mirror_dns.dns_to_primary,
    destructive=True,
)
RESUME_DNS_WRITERS = Hook(
    name="resume-dns-writers",
    summary="give the DNS controllers kubeshift paused their replicas back",
    run=mirror_dns.resume_dns_writers,
)
CRONJOBS_TO_MIRROR = Hook(
    name="cronjobs-to-mirror",
    summary="suspend the primary's CronJobs; resume their copies on the mirror",
    run=mirror_cronjobs.cronjobs_to_mirror,
)
REVOKE_MIRROR = Hook(
    name="revoke-mirror-access",
    summary="remove the mirror's ingress rules from dependency SGs",
    run=mirror_grants.revoke_mirror_access,
)
REMOVE_COPIES = Hook(
    name="remove-copies",
    summary="delete what the copy wrote on the mirror: the namespaces it created whole, "
    "its copies in the others",
    run=mirror_copy.remove_copies_from_mirror,
    destructive=True,
)
COPIES_GONE = Gate(
    name="copies-gone",
    summary="nothing the copy wrote is left on the mirror (its namespaces finished terminating)",
    check=mirror_copy.copies_gone_from_mirror,
    timeout=600,
    interval=5,
)
NEW_CNI_EVERYWHERE = Gate(
    name="new-cni-on-every-node",
    summary="the new CNI DaemonSet has a Ready pod on every node (names the nodes missing)",
    check=mirror_cni.new_cni_on_every_node,
    wakes_on=(
        Watch("pods"),
        Watch("nodes"),
    ),
    timeout=1800,
    interval=15,
)
OLD_CNI_GONE = Gate(
    name="old-cni-gone",
    summary="the old CNI's DaemonSet and pods are gone",
    check=mirror_cni.old_cni_gone,
    wakes_on=(Watch("pods"),),
    timeout=600,
    interval=10,
)
POD_NETWORK_PROBE = Hook(
    name="pod-network-probe",
    summary="run one probe pod per primary node (agnhost netexec) to try pod-to-pod traffic",
    run=mirror_cni.install_pod_network_probe,
)
POD_NETWORK = Gate(
    name="pod-network-across-nodes",
    summary="each new node's probe pod reaches the next node's (names the broken nodes)",
    check=mirror_cni.pod_network_across_nodes,
    timeout=600,
    interval=15,
)
REMOVE_POD_NETWORK_PROBE = Hook(
    name="remove-pod-network-probe",
    summary="delete the probe DaemonSet once the network is proven",
    run=mirror_cni.remove_pod_network_probe,
)
LABEL_NEW_GENERATION = Hook(
    name="label-new-generation",
    summary="label the nodes of the new generation's groups kubeshift.io/generation=cni "
    "(an adopted cluster's nodes boot their own tool's script, which does not)",
    run=generations.label_new_generation,
)
NEW_GENERATION_READY = Gate(
    name="new-generation-ready",
    summary="the primary's doubled nodes (new worker generation) joined and are Ready",
    check=mirror_cni.new_generation_ready,
    wakes_on=(Watch("nodes"),),
    timeout=1800,
    interval=15,
)
DRAIN_OLD_GENERATION = Hook(
    name="drain-old-generation",
    summary="drain the primary's old worker generation (scaled in at teardown-mirror)",
    run=mirror_cni.drain_old_generation,
    destructive=True,
    retries=0,
)
REINSTALL_OLD_CNI = Hook(
    name="reinstall-old-cni",
    summary="apply the old CNI's manifest the operator kept (runtime.mirror.old_cni_manifest) "
    "on the primary; refused without one",
    run=mirror_cni_back.reinstall_old_cni,
)
REMOVE_NEW_CNI = Hook(
    name="remove-new-cni",
    summary="delete the new CNI's DaemonSet once the old one is back (breaks the primary's "
    "network until the old CNI settles)",
    run=mirror_cni_back.remove_new_cni,
    destructive=True,
    retries=0,
)
NEW_CNI_GONE = Gate(
    name="new-cni-gone",
    summary="the new CNI's DaemonSet and pods are gone",
    check=mirror_cni_back.new_cni_gone,
    wakes_on=(Watch("pods"),),
    timeout=600,
    interval=10,
)
OLD_CNI_EVERYWHERE = Gate(
    name="old-cni-on-every-node",
    summary="the old CNI DaemonSet has a Ready pod on every node (names the nodes missing)",
    check=mirror_cni_back.old_cni_on_every_node,
    wakes_on=(Watch("pods"), Watch("nodes")),
    timeout=1800,
    interval=15,
)
UNCORDON_OLD_GENERATION = Hook(
    name="uncordon-old-generation",
    summary="the primary's old worker generation schedulable again",
    run=mirror_cni_back.uncordon_old_generation,
)
DRAIN_NEW_GENERATION = Hook(
    name="drain-new-generation",
    summary="cordon and drain the primary's new worker generation (its groups go next)",
    run=mirror_cni_back.drain_new_generation,
    destructive=True,
    retries=0,
)
PRIMARY_WORKLOADS = Gate(
    name="primary-workloads-available",
    summary="the primary's workloads are available again on the new network",
    check=mirror_copy.primary_workloads_available,
    wakes_on=(Watch("deployments"),),
    timeout=1800,
    interval=15,
)


def scenario(config: StackConfig) -> Scenario:
    """The phases with their steps (the same for every stack of this scenario)."""
    plan = (
        Phase(
            id=ids.BASELINE,
            summary="the primary as it runs today, on its old CNI",
            changes=CREATES_AND_UPDATES,
            way_back=Reverse("nothing to undo: the primary runs as it did, adopted as it is"),
        ),
        Phase(
            id=ids.CERTIFICATES,
            summary="the mirror's domains added as SANs to the primary's certificates",
            changes=CREATES_ONLY,
            way_back=Reverse(
                "delete the new certificates (nothing serves the mirror domains yet)",
                changes=deletes_in(
                    "aws:acm/certificate:Certificate::*",
                    summary="deletes of the certificates it requested",
                ),
                runs=True,
            ),
        ),
        Phase(
            id=ids.MIRROR_CLUSTER,
            summary="the mirror: own names and zone, its members' addresses reserved, mirrored IAM "
            "roles and SGs, grants",
            before=(MIRROR_ADDRESSES_FREE,),
            after=(MIRROR_NODES_READY, GRANT_MIRROR),
            changes=CREATES_ONLY,
            way_back=Reverse(
                "revoke the grants, delete the mirror's resources (nothing was copied to it "
                "yet, or the copy was taken back)",
                before=(REVOKE_MIRROR,),
                changes=undoes_what_the_phase_did("deletes of the mirror's resources only"),
                runs=True,
            ),
        ),
        Phase(
            id=ids.COPY,
            summary="freeze deploys; copy namespaced resources to the mirror",
            before=(COPY,),
            after=(MIRROR_WORKLOADS, FROZEN),
            changes=NO_INFRASTRUCTURE_CHANGES,
            way_back=Reverse(
                "delete what the copy wrote on the mirror, once no record points at it: the "
                "namespaces it created whole, its copies in the others; deploys may resume",
                before=(NO_RECORD_ON_MIRROR, REMOVE_COPIES, COPIES_GONE),
                runs=True,
            ),
        ),
        Phase(
            id=ids.DNS_TO_MIRROR,
            summary="per service: validate it serves on the mirror, then switch its records",
            before=(
                FROZEN,
                SERVE_ON_MIRROR,
                DNS_WRITERS,
                RECORDS_TO_MIRROR,
            ),
            after=(SERVE_ON_MIRROR,),
            changes=NO_INFRASTRUCTURE_CHANGES,
            destructive=True,
            way_back=Reverse(
                "every record back to the primary's load balancers once each service serves "
                "there, as dns-to-primary; the DNS controllers kubeshift paused get their "
                "replicas back",
                before=(SERVE_ON_PRIMARY, RECORDS_TO_PRIMARY),
                after=(RESUME_DNS_WRITERS,),
                runs=True,
            ),
        ),
        Phase(
            id=ids.CNI_SWAP,
            summary="on the primary: old CNI out, new CNI in, nodes doubled, old ones drained",
            before=(
                SERVE_ON_MIRROR,
                Hook(
                    name="install-new-cni",
                    summary="apply the new CNI's manifest on the primary (the old one still runs)",
                    run=mirror_cni.install_new_cni,
                ),
                CRONJOBS_TO_MIRROR,
                Hook(
                    name="remove-old-cni",
                    summary="delete the old CNI's DaemonSet (breaks the primary's network)",
                    run=mirror_cni.remove_old_cni,
                    destructive=True,
                    retries=0,
                ),
            ),
            after=(
                LABEL_NEW_GENERATION,
                NEW_GENERATION_READY,
                DRAIN_OLD_GENERATION,
                OLD_CNI_GONE,
                NEW_CNI_EVERYWHERE,
                POD_NETWORK_PROBE,
                POD_NETWORK,
                REMOVE_POD_NETWORK_PROBE,
                PRIMARY_WORKLOADS,
            ),
            changes=CREATES_AND_UPDATES,
            destructive=True,
            way_back=Reverse(
                "the old CNI reinstalled from the manifest the operator kept "
                "(runtime.mirror.old_cni_manifest; without one there is no way back), the new "
                "CNI removed, the old generation schedulable again and the new one drained "
                "before its groups go; traffic stays on the mirror meanwhile",
                before=(
                    SERVE_ON_MIRROR,
                    REINSTALL_OLD_CNI,
                    REMOVE_NEW_CNI,
                    NEW_CNI_GONE,
                    OLD_CNI_EVERYWHERE,
                    UNCORDON_OLD_GENERATION,
                    DRAIN_NEW_GENERATION,
                ),
                after=(PRIMARY_WORKLOADS,),
                changes=undoes_what_the_phase_did("deletes of the new worker generation only"),
                runs=True,
            ),
        ),
        Phase(
            id=ids.DNS_TO_PRIMARY,
            summary="per service: validate it serves on the primary, then switch its records back",
            before=(
                SERVE_ON_PRIMARY,
                RECORDS_TO_PRIMARY,
            ),
            after=(
                SERVE_ON_PRIMARY,
                Hook(
                    name="cronjobs-to-primary",
                    summary="suspend the mirror's CronJobs; resume those kubeshift suspended",
                    run=mirror_cronjobs.cronjobs_to_primary,
                ),
                RESUME_DNS_WRITERS,
            ),
            changes=NO_INFRASTRUCTURE_CHANGES,
            destructive=True,
            way_back=Reverse(
                "every record back to the mirror's load balancers once each service serves "
                "there, as dns-to-mirror; the CronJobs back on the mirror",
                before=(SERVE_ON_MIRROR, DNS_WRITERS, RECORDS_TO_MIRROR),
                after=(CRONJOBS_TO_MIRROR,),
                runs=True,
            ),
        ),
        Phase(
            id=ids.TEARDOWN_MIRROR,
            summary="revoke the grants; delete the mirror and the primary's old workers",
            before=(
                NO_RECORD_ON_MIRROR,
                Hook(
                    name="dns-drain",
                    summary="the mirror's load balancers' clients left: records' TTL + margin "
                    "since dns-to-primary, then no traffic in CloudWatch",
                    run=mirror_dns.drain_mirror,
                ),
                Hook(
                    name="cronjobs-restored",
                    summary="the primary's CronJobs as before the scenario (mirror copies go)",
                    run=mirror_cronjobs.cronjobs_restored,
                ),
                REVOKE_MIRROR,
            ),
            changes=retires_what_the_program_retires(
                summary="deletes of the mirror and of the primary's old worker generation only"
            ),
            destructive=True,
            way_back=NoReturn(
                "the mirror and the primary's old worker generation are deleted; a mirror is "
                "built anew only by mirror-cluster"
            ),
        ),
    )
    return Scenario(
        id=ids.ID,
        summary=ids.SPEC.summary,
        phases=plan,
    )
