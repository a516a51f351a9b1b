"""cni-swap steps (seed 000): copy to the mirror, move DNS per service, swap the CNI.

Thin adapters from a ``HookContext`` to ``automation.kube.copy``,
``automation.steps.service_dns``, ``automation.kube.cni``, ``automation.aws.dns`` and
``automation.aws.grants``. What to copy, how to rewrite images and which DaemonSets
are the old and new CNI are runtime settings (:class:`MirrorSettings`, read from
``kubeshift:runtime.mirror``); the mirror's DNS zone and dependency security groups
come from the stack config (``kubeshift:migration.mirror``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import ValidationError

from automation.config.settings import MirrorSettings
from automation.core.errors import ConfigError, PreconditionFailed, UserError
from automation.core.waiting import Pending, summarize
from automation.kube.copy.options import CopyOptions
from automation.model.context import HookContext
from automation.model.phase import HookResult
from automation.steps import outputs
from automation.steps.availability import watched
from components.scenarios.cni_swap import CniSwapOutputs

PRIMARY = "primary"
MIRROR = "mirror"
SETTINGS_KEY = "kubeshift:runtime.mirror"


def mirror_settings(ctx: HookContext) -> MirrorSettings:
    """The mirror settings of this run (defaults when the stack sets none)."""
    return ctx.settings.mirror


def parse_settings(raw: Mapping[str, Any] | None) -> MirrorSettings:
    """Validate a raw ``kubeshift:runtime.mirror`` mapping; one-sentence ``ConfigError``."""
    try:
        return MirrorSettings.model_validate(raw or {})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"{SETTINGS_KEY}.{where}: {first['msg']}.") from exc


def copy_options(ctx: HookContext) -> CopyOptions:
    settings = mirror_settings(ctx)
    if not settings.namespaces:
        raise UserError(
            f"{SETTINGS_KEY}.namespaces is empty; list the namespaces to copy to the mirror."
        )
    try:
        return CopyOptions(
            namespaces=settings.namespaces,
            kinds=settings.kinds,
            registry_rewrites=settings.registry_rewrites,
            label_selector=settings.label_selector,
            stateful=settings.stateful,
        )
    except ValidationError as exc:
        raise ConfigError(f"{SETTINGS_KEY}: {exc.errors()[0]['msg']}.") from exc


def _dns_namespaces(ctx: HookContext) -> tuple[str, ...]:
    settings = mirror_settings(ctx)
    scope = settings.dns_namespaces if settings.dns_namespaces is not None else settings.namespaces
    if not scope:
        raise UserError(
            f"{SETTINGS_KEY}.namespaces is empty; list the namespaces whose Services move."
        )
    return scope


# --- copy -------------------------------------------------------------------------------


def copy_to_mirror(ctx: HookContext) -> HookResult:
    """Copy the chosen namespaces to the mirror: stripped, images rewritten, idempotent."""
    from automation.kube.copy.copying import copy_namespaces

    report = copy_namespaces(
        ctx.clients.kube(PRIMARY),
        ctx.clients.kube(MIRROR),
        copy_options(ctx),
        dry_run=ctx.dry_run,
        reporter=ctx.progress,
    )
    for line in report.table().splitlines():
        ctx.log.info("%s", line)
    return report.as_hook_result()


def mirror_matches_primary(ctx: HookContext) -> Pending:
    """Freeze gate: nothing copied has changed on the primary since the copy."""
    from automation.kube.copy.drift import drift_since_copy

    return drift_since_copy(ctx.clients.kube(PRIMARY), ctx.clients.kube(MIRROR), copy_options(ctx))


def mirror_workloads_available(ctx: HookContext) -> Pending:
    """Every copied Deployment/StatefulSet is available on the mirror, PDBs satisfied."""
    from automation.kube.gates import workloads_available

    return workloads_available(ctx.clients.kube(MIRROR), copy_options(ctx).namespaces)


def primary_workloads_available(ctx: HookContext) -> Pending:
    """After the swap the primary's workloads are available again (their probes pass)."""
    from automation.kube.gates import workloads_available

    return workloads_available(ctx.clients.kube(PRIMARY), copy_options(ctx).namespaces)


def expected_workers(ctx: HookContext) -> int:
    """Workers one generation of the cluster's pools starts (mirror and new generation alike)."""
    cluster = ctx.stack_config.cluster
    return sum(pool.starting_nodes(cluster.network.azs) for pool in cluster.worker_pools)


def mirror_nodes_ready(ctx: HookContext) -> Pending:
    """The mirror's workers joined and are Ready: as many as the primary's pools start."""
    from automation.kube.gates import nodes_ready

    return nodes_ready(
        ctx.clients.kube(MIRROR),
        "!node-role.kubernetes.io/control-plane",
        expected=expected_workers(ctx),
    )


# --- DNS --------------------------------------------------------------------------------


def hosted_zones(ctx: HookContext) -> dict[str, str]:
    """Zone name -> id: the settings' zones, else the name of the cluster's zone id."""
    settings = mirror_settings(ctx)
    if settings.zones:
        return dict(settings.zones)
    from automation.aws.failures import ClientError
    from automation.core.errors import from_client_error

    zone_id = ctx.stack_config.cluster.dns.zone_id
    try:
        zone = ctx.clients.aws().route53.get_hosted_zone(Id=zone_id)["HostedZone"]
    except ClientError as exc:
        raise from_client_error(exc, f"read hosted zone {zone_id}") from exc
    return {str(zone["Name"]).rstrip("."): zone_id}


def left_on_primary(ctx: HookContext) -> frozenset[str]:
    """``namespace/name`` of the Services whose workloads stay on the primary
    (``stateful: leave-on-primary``): their records never move."""
    if mirror_settings(ctx).stateful != "leave-on-primary":
        return frozenset()
    from automation.kube.clients import list_all
    from automation.kube.copy.plan import stateful_workloads
    from automation.kube.stateful import served_by

    primary = ctx.clients.kube(PRIMARY)
    workloads = stateful_workloads(primary, copy_options(ctx))
    services = [
        svc
        for ns in {w.namespace for w in workloads}
        for svc in list_all(
            primary.core.list_namespaced_service, ns, action=f"list Services in {ns}"
        )["items"]
    ]
    return frozenset(served_by(workloads, services))


def _plan(ctx: HookContext, destination: str, other: str) -> Any:
    from automation.steps.service_dns import plan_service_dns

    settings = mirror_settings(ctx)
    return plan_service_dns(
        ctx.clients.kube(destination),
        hosted_zones(ctx),
        _dns_namespaces(ctx),
        expected=ctx.clients.kube(other),
        ttl=settings.dns_ttl,
        probe_path=settings.probe_path,
        excluded=left_on_primary(ctx),
    )


def _serving(ctx: HookContext, destination: str, other: str) -> Pending:
    from automation.steps.service_dns import services_serving

    return services_serving(
        ctx.clients.kube(destination),
        _dns_namespaces(ctx),
        expected=ctx.clients.kube(other),
        excluded=left_on_primary(ctx),
    )


def services_serve_on_mirror(ctx: HookContext) -> Pending:
    """Every Service with DNS names has a load balancer and ready endpoints on the mirror."""
    return _serving(ctx, MIRROR, PRIMARY)


def services_serve_on_primary(ctx: HookContext) -> Pending:
    """Every Service with DNS names has a load balancer and ready endpoints on the primary."""
    return _serving(ctx, PRIMARY, MIRROR)


def _move_dns(ctx: HookContext, destination: str, other: str) -> HookResult:
    from automation.aws.dns.cutover import cutover_records
    from automation.aws.dns.requests import SyncOptions

    plan = _plan(ctx, destination, other)
    if ctx.dry_run and plan.not_ready:
        return HookResult(
            False,
            f"dry-run: would refuse to move any record; not serving on {destination}: "
            f"{summarize(plan.items(), 3)}",
            {"not_ready": plan.items(), "records": plan.describe()},
        )
    plan.raise_if_not_ready()
    if not plan.cutovers:
        return HookResult(False, "no Service in scope declares a DNS name; nothing to move")
    gates = ctx.settings.gates
    sync = SyncOptions(timeout=gates.dns_sync_timeout, interval=gates.interval)
    report = cutover_records(
        ctx.clients.aws().route53,
        None,  # no target groups: the Kubernetes-side check above proved the service serves
        list(plan.cutovers),
        dry_run=ctx.dry_run,
        sync=sync,
        reporter=ctx.progress,
    )
    return report.as_hook_result()


def drain_mirror(ctx: HookContext) -> HookResult:
    """Before the mirror goes: the clients of its Services' load balancers left (the
    records' TTL plus the margin since dns-to-primary, then no traffic in CloudWatch)."""
    from automation.steps.dns_drain import Drain, drain_dns
    from automation.steps.service_dns import inspect_services
    from components.scenarios.cni_swap import DNS_TO_PRIMARY

    services = inspect_services(
        ctx.clients.kube(MIRROR), _dns_namespaces(ctx), excluded=left_on_primary(ctx)
    )
    hostnames = sorted({s.hostname for s in services if s.hostname})
    return drain_dns(ctx, Drain(DNS_TO_PRIMARY, mirror_settings(ctx).dns_ttl, hostnames))


def dns_writers_guard(ctx: HookContext) -> HookResult:
    """No DNS controller on either cluster writes a record about to move (or pause them)."""
    from automation.steps.dns_writers import guard_records

    plan = _plan(ctx, MIRROR, PRIMARY)
    names = [c.name for c in plan.cutovers]
    return guard_records(ctx, names, [c.zone_id for c in plan.cutovers], [PRIMARY, MIRROR])


def resume_dns_writers(ctx: HookContext) -> HookResult:
    """Give back the replicas of the DNS controllers kubeshift paused, on both clusters."""
    from automation.steps.dns_writers import resume_writers

    return resume_writers(ctx, [PRIMARY, MIRROR])


def dns_to_mirror(ctx: HookContext) -> HookResult:
    """Point each service's records at its load balancer on the mirror, validated."""
    return _move_dns(ctx, MIRROR, PRIMARY)


def dns_to_primary(ctx: HookContext) -> HookResult:
    """Point each service's records back at its load balancer on the primary, validated."""
    return _move_dns(ctx, PRIMARY, MIRROR)


def records_on_primary(ctx: HookContext) -> Pending:
    """Teardown gate: no record still points at the mirror (each is at the primary's LB)."""
    from automation.aws.dns.plan import plan_states
    from automation.aws.dns.records import read_records

    plan = _plan(ctx, PRIMARY, MIRROR)
    route53 = ctx.clients.aws().route53
    items = list(plan.items())
    for cutover in plan.cutovers:
        if plan_states(cutover, read_records(route53, cutover.zone_id, cutover.name)):
            items.append(f"record {cutover.fqdn}: does not point at {cutover.endpoint} yet")
    return Pending.of(items, f"{len(plan.cutovers)} record(s) checked")


# --- CronJobs: one runner each ---------------------------------------------------------


def _hand_over(ctx: HookContext, to: Literal["primary", "mirror"]) -> HookResult:
    from automation.kube.cronjobs import hand_over

    primary, mirror = ctx.clients.kube(PRIMARY), ctx.clients.kube(MIRROR)
    namespaces = copy_options(ctx).namespaces
    return hand_over(to, primary, mirror, namespaces, dry_run=ctx.dry_run).as_hook_result()


def cronjobs_to_mirror(ctx: HookContext) -> HookResult:
    """Suspend the primary's CronJobs and resume their copies on the mirror."""
    return _hand_over(ctx, "mirror")


def cronjobs_to_primary(ctx: HookContext) -> HookResult:
    """Suspend the mirror's copies and resume the primary's CronJobs kubeshift suspended."""
    return _hand_over(ctx, "primary")


def cronjobs_restored(ctx: HookContext) -> HookResult:
    """Before the mirror goes: the primary's CronJobs as they were before the scenario."""
    from automation.kube.cronjobs import restore

    report = restore(ctx.clients.kube(PRIMARY), copy_options(ctx).namespaces, dry_run=ctx.dry_run)
    return report.as_hook_result()


# --- the CNI ----------------------------------------------------------------------------


def install_new_cni(ctx: HookContext) -> HookResult:
    """Apply the new CNI's manifest on the primary while the old CNI still runs (seed 000:
    Calico's pods crash-loop until Weave is deleted, then settle)."""
    from automation.kube.cni import require_daemonset
    from automation.kube.manifests import apply_manifest, load_manifest

    settings = mirror_settings(ctx)
    new = settings.new_cni
    primary = ctx.clients.kube(PRIMARY)
    if settings.new_cni_manifest is None:
        require_daemonset(
            primary,
            new.namespace,
            new.name,
            f"name its manifest in {SETTINGS_KEY}.new_cni_manifest, or install it on the "
            "primary before this phase.",
        )
        return HookResult(False, f"DaemonSet {new.namespace}/{new.name} already installed")
    documents = load_manifest(settings.new_cni_manifest, f"{SETTINGS_KEY}.new_cni_manifest")
    report = apply_manifest(primary, documents, dry_run=ctx.dry_run)
    if not ctx.dry_run:
        require_daemonset(
            primary,
            new.namespace,
            new.name,
            f"the manifest {settings.new_cni_manifest} does not create it; check "
            f"{SETTINGS_KEY}.new_cni against the manifest.",
        )
    return HookResult(
        bool(report.changed) and not ctx.dry_run,
        report.message,
        {"applied": list(report.changed), "unchanged": len(report.unchanged)},
    )


def remove_old_cni(ctx: HookContext) -> HookResult:
    """Delete the old CNI's DaemonSet on the primary (seed: delete Weave before rolling),
    only once the new CNI's DaemonSet is installed: without it no node would have a
    network after the roll."""
    from automation.kube.cni import remove_daemonset, require_daemonset

    settings = mirror_settings(ctx)
    old, new = settings.old_cni, settings.new_cni
    primary = ctx.clients.kube(PRIMARY)
    require_daemonset(
        primary,
        new.namespace,
        new.name,
        f"install the new CNI on the primary before {old.namespace}/{old.name} is removed "
        "(kubeshift:runtime.mirror.new_cni names it).",
    )
    removal = remove_daemonset(primary, old.namespace, old.name, dry_run=ctx.dry_run)
    return HookResult(removal.changed, removal.message)


def old_cni_gone(ctx: HookContext) -> Pending:
    from automation.kube.cni import cni_gone

    old = mirror_settings(ctx).old_cni
    return cni_gone(ctx.clients.kube(PRIMARY), old.namespace, old.name, old.pod_selector)


def new_cni_on_every_node(ctx: HookContext) -> Pending:
    """The new CNI has a Ready pod on every node of the new generation."""
    from automation.kube.cni import cni_ready_on_all_nodes

    settings = mirror_settings(ctx)
    new = settings.new_cni
    return cni_ready_on_all_nodes(
        ctx.clients.kube(PRIMARY), new.namespace, new.name, settings.new_nodes_selector
    )


def install_pod_network_probe(ctx: HookContext) -> HookResult:
    """One netexec pod per node of the primary, to try pod-to-pod traffic after the roll."""
    from automation.kube.pod_network import install_probe

    check = mirror_settings(ctx).pod_network
    if check.off:
        return HookResult(False, check.off)
    report = install_probe(ctx.clients.kube(PRIMARY), check, dry_run=ctx.dry_run)
    return HookResult(bool(report.changed) and not ctx.dry_run, report.message)


def pod_network_across_nodes(ctx: HookContext) -> Pending:
    """Pods on the new generation reach each other node to node (names the broken nodes)."""
    from automation.kube.pod_network import pod_network_reaches_every_node

    settings = mirror_settings(ctx)
    if settings.pod_network.off:
        return Pending.of([], settings.pod_network.off)
    advice = (
        f"replace them with `kubeshift --stack {ctx.stack} replace-nodes --phase {ctx.phase} "
        "NODE...`, then run again"
    )
    return pod_network_reaches_every_node(
        ctx.clients.kube(PRIMARY), settings.pod_network, settings.new_nodes_selector,
        advice=advice,
    )  # fmt: skip


def remove_pod_network_probe(ctx: HookContext) -> HookResult:
    """The probe DaemonSet goes once the network is proven."""
    from automation.kube.cni import remove_daemonset

    check = mirror_settings(ctx).pod_network
    if check.off:
        return HookResult(False, check.off)
    removal = remove_daemonset(
        ctx.clients.kube(PRIMARY), check.namespace, check.name, dry_run=ctx.dry_run
    )
    return HookResult(removal.changed, removal.message)


def new_generation_ready(ctx: HookContext) -> Pending:
    """The primary's doubled nodes (the new generation) joined and are Ready."""
    from automation.kube.gates import nodes_ready

    return nodes_ready(
        ctx.clients.kube(PRIMARY),
        mirror_settings(ctx).new_nodes_selector,
        expected=expected_workers(ctx),
    )


def drain_old_generation(ctx: HookContext) -> HookResult:
    """Seed: "double the nodes, then scale in the old ones" — drain the old generation."""
    from automation.kube.nodes import NodeSelection, cordon_nodes
    from automation.steps.nodes import drain

    kube = ctx.clients.kube(PRIMARY)
    names, described = _old_generation(ctx)
    if not names:
        return HookResult(False, f"no node is {described}; nothing to drain")
    # Cordon the whole generation first: a pod evicted from one old node must not land
    # on another old node and be evicted twice.
    cordon_nodes(kube.core, NodeSelection(names=names), dry_run=ctx.dry_run)

    # The moved Services are served by the mirror meanwhile: none may lose every endpoint.
    copied = set(copy_options(ctx).namespaces)
    stayed = left_on_primary(ctx)
    return watched(
        ctx,
        lambda: drain(ctx, kube, names),
        serving=MIRROR,
        only=lambda ref: ref.split("/", 1)[0] in copied and ref not in stayed,
    )


def _old_generation(ctx: HookContext) -> tuple[list[str], str]:
    """The old generation's node names, and how they were chosen (for messages).

    Unset, ``old_nodes_selector`` means every worker outside the new generation: the old
    CNI leaves every node, so no worker may stay behind on it, whatever labels the tool
    that built the cluster gave its nodes (kops labels them by instance group); while no
    node is of the new generation, that would be every worker, and it is refused. Set,
    it is taken as given, and a selector that matches no node while workers outside the
    new generation run is refused: those workers would be left on the old CNI.
    """
    from automation.kube.clients import list_all

    settings = mirror_settings(ctx)
    selector, new = settings.old_nodes_selector, settings.new_nodes_selector
    newer, outside = _generations(ctx, new)
    if selector is not None:
        kube = ctx.clients.kube(PRIMARY)
        listed = list_all(kube.core.list_node, action="list nodes", label_selector=selector)
        names = [n["metadata"]["name"] for n in listed["items"]]
        if both := sorted(set(names) & set(newer)):
            raise PreconditionFailed(
                f"{SETTINGS_KEY}.old_nodes_selector '{selector}' also selects "
                f"{len(both)} node(s) of the new generation ('{new}'): "
                f"{', '.join(both[:3])}{', …' if len(both) > 3 else ''}; those would be "
                "drained with the old, so narrow it to the old generation."
            )
        if names:
            return names, f"matched by '{selector}'"
    if selector is None:
        if outside and not newer:
            raise PreconditionFailed(
                f"{SETTINGS_KEY}.new_nodes_selector '{new}' matches no node, so every worker "
                f"({len(outside)}) would be drained as the old generation; check it against "
                "the new generation's labels."
            )
        return outside, f"a worker outside the new generation ('{new}')"
    if outside:
        raise PreconditionFailed(
            f"{SETTINGS_KEY}.old_nodes_selector '{selector}' matches no node, yet "
            f"{len(outside)} worker(s) outside the new generation ('{new}') still run "
            f"({', '.join(outside[:3])}{', …' if len(outside) > 3 else ''}); set it to select "
            "them, or unset it to drain every worker outside the new generation."
        )
    return [], f"matched by '{selector}'"


def _generations(ctx: HookContext, new_selector: str) -> tuple[list[str], list[str]]:
    """The primary's workers (no control-plane role) that ``new_selector`` selects, and
    those it does not, each sorted by name."""
    from automation.kube.clients import list_all
    from automation.steps.nodes import is_control_plane

    kube = ctx.clients.kube(PRIMARY)
    listed = list_all(kube.core.list_node, action="list nodes")["items"]
    newer = list_all(kube.core.list_node, action="list nodes", label_selector=new_selector)
    selected = {n["metadata"]["name"] for n in newer["items"]}
    workers = sorted(n["metadata"]["name"] for n in listed if not is_control_plane(n))
    return (
        [name for name in workers if name in selected],
        [name for name in workers if name not in selected],
    )


# --- grants on dependencies ---------------------------------------------------------------


def mirror_grants(ctx: HookContext) -> list[Any]:
    """The ingress rules the mirror's nodes need: each rule that admits the primary's nodes.

    For every dependency SG (``kubeshift:migration.mirror.dependency_security_group_ids``)
    each rule referencing one of the primary's node SGs is mirrored for each of the
    mirror's node SGs, same protocol and ports.
    """
    from automation.aws.failures import ClientError
    from automation.aws.grants import SgGrant
    from automation.core.errors import from_client_error

    mirror_cfg = ctx.stack_config.migration.mirror
    dependencies = list(mirror_cfg.dependency_security_group_ids) if mirror_cfg else []
    if not dependencies:
        return []
    out = ctx.read_outputs(CniSwapOutputs)
    primary_sgs = set(
        outputs.need(out.node_security_group_ids, "node_security_group_ids", ctx.phase)
    )
    mirror_sgs = outputs.need(
        out.mirror_node_security_group_ids, "mirror_node_security_group_ids", ctx.phase
    )
    try:
        groups = ctx.clients.aws().ec2.describe_security_groups(GroupIds=dependencies)
    except ClientError as exc:
        raise from_client_error(exc, f"read security groups {', '.join(dependencies)}") from exc
    grants: list[Any] = []
    for group in groups["SecurityGroups"]:
        admitted = [
            perm
            for perm in group.get("IpPermissions", [])
            if any(p.get("GroupId") in primary_sgs for p in perm.get("UserIdGroupPairs", []))
        ]
        if not admitted:
            raise PreconditionFailed(
                f"Security group {group['GroupId']} admits none of the primary's node groups "
                f"({', '.join(sorted(primary_sgs))}), so there is nothing to mirror; remove it "
                "from kubeshift:migration.mirror.dependency_security_group_ids."
            )
        for perm in admitted:
            for source in mirror_sgs:
                grants.append(
                    SgGrant(
                        group_id=group["GroupId"],
                        source_group_id=source,
                        protocol=str(perm["IpProtocol"]),
                        from_port=perm.get("FromPort"),
                        to_port=perm.get("ToPort"),
                        description="kubeshift cni-swap mirror",
                    )
                )
    return grants


def _grant_result(results: Any, verb: str) -> HookResult:
    changed = any(r.changed for r in results)
    if not results:
        return HookResult(False, f"no dependency security groups to {verb}")
    return HookResult(
        changed,
        "; ".join(r.message for r in results),
        {"grants": [r.message for r in results]},
    )


def grant_mirror_access(ctx: HookContext) -> HookResult:
    """Let the mirror's nodes reach the dependencies (RDS, caches) the primary's reach."""
    from automation.aws.grants import add_grants

    grants = mirror_grants(ctx)
    return _grant_result(
        add_grants(ctx.clients.aws().ec2, grants, dry_run=ctx.dry_run) if grants else (), "grant"
    )


def revoke_mirror_access(ctx: HookContext) -> HookResult:
    """Remove the mirror's grants on the dependencies before the mirror is torn down."""
    from automation.aws.grants import remove_grants

    grants = mirror_grants(ctx)
    return _grant_result(
        remove_grants(ctx.clients.aws().ec2, grants, dry_run=ctx.dry_run) if grants else (),
        "revoke",
    )


# --- the mirror's fixed addresses --------------------------------------------------------


def mirror_addresses_free(ctx: HookContext) -> HookResult:
    """Every fixed address the mirror's members will take is free in the primary's VPC:
    the primary's nodes hold addresses anywhere in the subnets the mirror shares, and
    AWS refuses an interface at a taken one half-way through the phase. Read-only, so a
    dry run runs it too; a taken address names ``migration.mirror.host_index``."""
    from automation.steps.preflight import require_free
    from components.baseline import members
    from components.config import mirror_host_offset

    config = ctx.stack_config
    out = ctx.read_outputs(CniSwapOutputs)
    vpc = outputs.need(out.source_vpc_id, "source_vpc_id", ctx.phase)
    planned = {
        m.address: f"etcd member {m.index} of {config.cluster.name}"
        for m in members(config, mirror_host_offset(config))
    }
    require_free(
        ctx,
        vpc,
        planned,
        "set kubeshift:migration.mirror.host_index to a free range of the private subnets "
        "(the mirror's members take it from there)",
    )
    free = sorted(planned)
    message = f"{len(free)} mirror member address(es) free: {', '.join(free)}"
    return HookResult(False, message, {"addresses": free})
