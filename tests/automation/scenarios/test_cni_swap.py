"""cni-swap: the phase plan as data, and its steps run through a HookContext.

The first tests read the scenario like a reviewer would: phase order, which phases are
destructive and how to go back, which hooks and gates each runs, what preview changes
each allows. The last ones run the scenario's own step functions against the two
session clusters and moto (copy, freeze gate, DNS to the mirror, SG grants), the way
the runner calls them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes.client import AppsV1Api, CoreV1Api

from automation.aws.clients import AwsAccess, AwsClients
from automation.config.clients import StaticClients
from automation.config.gate_settings import GateSettings
from automation.config.mirror_settings import GENERATION_LABEL
from automation.config.settings import RuntimeSettings
from automation.core.errors import ConfigError, PreconditionFailed, UserError
from automation.kube.clients import KubeClients
from automation.model.context import HookContext
from automation.model.phase import Gate, Hook, Scenario
from automation.model.way_back import Reverse
from automation.sandbox.controlplane import Cluster
from automation.scenarios import build_scenario
from automation.steps import (
    generations,
    mirror_addresses,
    mirror_cni,
    mirror_copy,
    mirror_cronjobs,
    mirror_dns,
    mirror_grants,
)
from automation.steps.mirror import copy_options, mirror_settings, parse_settings
from automation.steps.service_dns import EXTERNAL_DNS_HOSTNAME
from components.contract.cluster_models import WorkerPoolConfig
from components.contract.loading import load_config, load_stack_file
from components.contract.models import StackConfig
from components.contract.scenarios import cni_swap as ids
from tests.support.kube_fixtures import clients_of
from tests.support.moto_fixtures import MotoServer
from tests.support.moto_world import make_network, make_zone, put_record, records_named
from tests.support.nodes import NodePools, NodePoolSpec
from tests.support.waiting import eventually
from tests.support.workloads import cni_daemonset, deployment, label_selector, service

REPO = Path(__file__).resolve().parents[3]

# --- the plan ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def plan() -> Scenario:
    config = load_config(load_stack_file(REPO / "stacks" / "Pulumi.cni-swap-example.yaml"))
    return build_scenario(config)


def test_phases_are_the_registered_ones_in_order(plan: Scenario) -> None:
    assert plan.id == ids.ID
    assert plan.ids() == ids.SPEC.phase_ids()
    assert plan.ids()[0] == ids.BASELINE and plan.ids()[-1] == ids.TEARDOWN_MIRROR


def test_destructive_phases_say_how_to_go_back(plan: Scenario) -> None:
    destructive = [p.id for p in plan.phases if p.destructive]
    assert destructive == ["dns-to-mirror", "cni-swap", "dns-to-primary", "teardown-mirror"]
    for phase in plan.phases:
        assert phase.summary, phase.id
    assert isinstance(plan.phase("dns-to-mirror").way_back, Reverse)
    assert "dns-to-primary" in plan.phase("dns-to-mirror").way_back.describe()
    assert "dns-to-mirror" in plan.phase("dns-to-primary").way_back.describe()


def _steps(plan: Scenario, phase: str) -> list[tuple[str, str, bool]]:
    p = plan.phase(phase)
    return [
        (s.name, "hook" if isinstance(s, Hook) else "gate", getattr(s, "destructive", False))
        for s in (*p.before, *p.after)
    ]


EXPECTED_STEPS = {
    "baseline": [],
    "certificates": [],
    "mirror-cluster": [("mirror-addresses-free", "hook", False),
                       ("mirror-nodes-ready", "gate", False),
                       ("grant-mirror-access", "hook", False)],
    "copy": [("copy-to-mirror", "hook", False), ("mirror-workloads-available", "gate", False),
             ("deploys-frozen", "gate", False)],
    "dns-to-mirror": [("deploys-frozen", "gate", False),
                      ("services-serve-on-mirror", "gate", False),
                      ("dns-writers", "hook", False),
                      ("dns-to-mirror", "hook", True), ("services-serve-on-mirror", "gate", False)],
    "cni-swap": [("services-serve-on-mirror", "gate", False),
                 ("install-new-cni", "hook", False), ("cronjobs-to-mirror", "hook", False),
                 ("remove-old-cni", "hook", True),
                 ("label-new-generation", "hook", False),
                 ("new-generation-ready", "gate", False), ("drain-old-generation", "hook", True),
                 ("old-cni-gone", "gate", False), ("new-cni-on-every-node", "gate", False),
                 ("pod-network-probe", "hook", False), ("pod-network-across-nodes", "gate", False),
                 ("remove-pod-network-probe", "hook", False),
                 ("primary-workloads-available", "gate", False)],
    "dns-to-primary": [("services-serve-on-primary", "gate", False),
                       ("dns-to-primary", "hook", True),
                       ("services-serve-on-primary", "gate", False),
                       ("cronjobs-to-primary", "hook", False),
                       ("resume-dns-writers", "hook", False)],
    "teardown-mirror": [("no-record-on-mirror", "gate", False),
                        ("dns-drain", "hook", False),
                        ("cronjobs-restored", "hook", False),
                        ("revoke-mirror-access", "hook", False)],
}  # fmt: skip


@pytest.mark.parametrize("phase", list(EXPECTED_STEPS), ids=list(EXPECTED_STEPS))
def test_hooks_and_gates_per_phase(plan: Scenario, phase: str) -> None:
    assert _steps(plan, phase) == EXPECTED_STEPS[phase]
    for step in (*plan.phase(phase).before, *plan.phase(phase).after):
        assert callable(step.run if isinstance(step, Hook) else step.check)
        if isinstance(step, Gate):
            assert 0 < step.interval < step.timeout


def test_hooks_come_from_the_mirror_steps(plan: Scenario) -> None:
    hooks = {h.name: h.run for p in plan.phases for h in p.hooks}
    assert hooks == {
        "mirror-addresses-free": mirror_addresses.mirror_addresses_free,
        "grant-mirror-access": mirror_grants.grant_mirror_access,
        "copy-to-mirror": mirror_copy.copy_to_mirror,
        "dns-to-mirror": mirror_dns.dns_to_mirror,
        "install-new-cni": mirror_cni.install_new_cni,
        "pod-network-probe": mirror_cni.install_pod_network_probe,
        "remove-pod-network-probe": mirror_cni.remove_pod_network_probe,
        "cronjobs-to-mirror": mirror_cronjobs.cronjobs_to_mirror,
        "cronjobs-to-primary": mirror_cronjobs.cronjobs_to_primary,
        "cronjobs-restored": mirror_cronjobs.cronjobs_restored,
        "dns-writers": mirror_dns.dns_writers_guard,
        "resume-dns-writers": mirror_dns.resume_dns_writers,
        "remove-old-cni": mirror_cni.remove_old_cni,
        "drain-old-generation": mirror_cni.drain_old_generation,
        "label-new-generation": generations.label_new_generation,
        "dns-to-primary": mirror_dns.dns_to_primary,
        "revoke-mirror-access": mirror_grants.revoke_mirror_access,
        "dns-drain": mirror_dns.drain_mirror,
    }
    retries = {h.name: h.retries for h in plan.phase("cni-swap").hooks}
    assert retries["remove-old-cni"] == retries["drain-old-generation"] == 0


POLICIES = [
    ("copy", "create", "kubernetes:core/v1:Namespace", "shop", False),
    ("dns-to-mirror", "update", "aws:route53/record:Record", "shop", False),
    ("dns-to-primary", "create", "aws:route53/record:Record", "shop", False),
    ("mirror-cluster", "create", "aws:ec2/securityGroup:SecurityGroup", "shop-mirror-nodes", True),
    ("mirror-cluster", "delete", "aws:ec2/securityGroup:SecurityGroup", "shop-nodes", False),
    ("certificates", "create", "aws:acm/certificate:Certificate", "shop", True),
    ("certificates", "replace", "aws:acm/certificate:Certificate", "shop", False),
    ("cni-swap", "create", "aws:autoscaling/group:Group", "workers-cni", True),
    ("cni-swap", "delete", "aws:autoscaling/group:Group", "workers", False),
    ("cni-swap", "delete", "aws:rds/instance:Instance", "db", False),
    ("teardown-mirror", "delete", "aws:ec2/instance:Instance", "shop-mirror-cp-1", False),
]


@pytest.mark.parametrize(
    ("phase", "op", "type_", "name", "allowed"),
    POLICIES,
    ids=[f"{p}-{op}-{n}" for p, op, _, n, _ in POLICIES],
)
def test_change_policies(
    plan: Scenario, phase: str, op: str, type_: str, name: str, allowed: bool
) -> None:
    violation = plan.phase(phase).changes.violation(op, type_, name)
    assert (violation is None) is allowed, violation


def test_teardown_deletes_exactly_what_the_program_retires(plan: Scenario) -> None:
    """The guard widens teardown's scope with the offline render's removals, nothing else."""
    policy = plan.phase("teardown-mirror").changes
    assert policy.program_scope and policy.scope == ()
    widened = policy.widened(("aws:ec2/instance:Instance::shop-mirror-cp-1",))
    assert widened.violation("delete", "aws:ec2/instance:Instance", "shop-mirror-cp-1") is None
    assert widened.violation("delete", "aws:ec2/instance:Instance", "shop-cp-1") is not None


# --- settings --------------------------------------------------------------------------


def _example(
    *,
    dependency_security_group_ids: list[str] | None = None,
    worker_pools: list[WorkerPoolConfig] | None = None,
    azs: list[str] | None = None,
) -> StackConfig:
    """The cni-swap example stack's real config, with the fields a test sets replaced."""
    config = load_config(load_stack_file(REPO / "stacks" / "Pulumi.cni-swap-example.yaml"))
    cluster, migration = config.cluster, config.migration
    if worker_pools is not None:
        cluster = cluster.model_copy(update={"worker_pools": worker_pools})
    if azs is not None:
        cluster = cluster.model_copy(
            update={"network": cluster.network.model_copy(update={"azs": azs})}
        )
    if dependency_security_group_ids is not None and migration.mirror is not None:
        mirror = migration.mirror.model_copy(
            update={"dependency_security_group_ids": dependency_security_group_ids}
        )
        migration = migration.model_copy(update={"mirror": mirror})
    return config.model_copy(update={"cluster": cluster, "migration": migration})


def _ctx(clients: Any = None, dry_run: bool = False, **settings: Any) -> HookContext:
    return HookContext(
        stack="test",
        scenario=ids.ID,
        phase="copy",
        clients=clients or StaticClients(),
        settings=RuntimeSettings(
            mirror=parse_settings(settings or None), gates=GateSettings(interval=0.01)
        ),
        dry_run=dry_run,
    )


def test_copy_needs_namespaces_and_valid_settings() -> None:
    with pytest.raises(UserError, match=r"kubeshift:runtime.mirror.namespaces is empty"):
        copy_options(_ctx())
    with pytest.raises(ConfigError, match=r"kubeshift:runtime.mirror.registry_rewrites"):
        mirror_settings(_ctx(registry_rewrites=[{"source": "https://x", "target": "y"}]))
    with pytest.raises(ConfigError, match="kube-system"):
        copy_options(_ctx(namespaces=["kube-system"]))
    options = copy_options(_ctx(namespaces=["shop"], kinds=["Deployment"]))
    assert options.namespaces == ("shop",) and options.kinds == ("Deployment",)


# --- the steps against two clusters and moto ---------------------------------------------

REWRITE = {"source": "registry.example.com", "target": "registry-mirror.example.com"}
MIRROR_LB = "mirror-shop.elb.amazonaws.com"


@pytest.fixture
def clusters(primary_cluster: Cluster, mirror_cluster: Cluster) -> Iterator[dict[str, Any]]:
    made = {"primary": clients_of(primary_cluster), "mirror": clients_of(mirror_cluster)}
    yield made
    for c in made.values():
        c.close()


@pytest.fixture
def shop(
    clusters: dict[str, KubeClients],
    namespace: str,
    mirror_cluster: Cluster,
    node_pools: NodePools,
    node_pools_factory: Callable[[Cluster], NodePools],
) -> Iterator[str]:
    """A namespace on the primary serving shop.example.com; worker nodes on both clusters."""
    node_pools.create(NodePoolSpec("primary-workers", count=2))
    node_pools_factory(mirror_cluster).create(NodePoolSpec("mirror-workers", count=2))
    primary = clusters["primary"]
    dep = deployment("web", 2)
    dep.spec.template.spec.containers[0].image = "registry.example.com/shop/web:1"
    AppsV1Api(primary.api_client).create_namespaced_deployment(namespace, dep)
    svc = service("web", "web")
    svc.metadata.annotations = {EXTERNAL_DNS_HOSTNAME: "shop.example.com"}
    svc.spec.type = "LoadBalancer"
    CoreV1Api(primary.api_client).create_namespaced_service(namespace, svc)
    yield namespace
    CoreV1Api(clusters["mirror"].api_client).delete_namespace(namespace)


@pytest.mark.controlplane
@pytest.mark.moto
def test_copy_freeze_and_dns_to_mirror_through_the_steps(
    clusters: dict[str, KubeClients], shop: str, moto: MotoServer
) -> None:
    aws = AwsClients(AwsAccess(region=moto.region))
    zone = make_zone(aws.route53, "example.com")
    put_record(aws.route53, zone, {"Name": "shop.example.com", "Type": "CNAME", "TTL": 60,
                                   "ResourceRecords": [{"Value": "primary-shop.elb"}]})  # fmt: skip
    clients = StaticClients(kube=clusters, aws=aws)
    settings = {
        "namespaces": [shop],
        "registry_rewrites": [REWRITE],
        "zones": {"example.com": zone},
    }

    dry = mirror_copy.copy_to_mirror(_ctx(clients, dry_run=True, **settings))
    assert not dry.changed and dry.message.startswith("dry-run: copy to mirror: 2 would-create")
    result = mirror_copy.copy_to_mirror(_ctx(clients, **settings))
    assert result.changed and result.details["copied"] == [
        f"Service {shop}/web",
        f"Deployment {shop}/web",
    ]
    again = mirror_copy.copy_to_mirror(_ctx(clients, **settings))
    assert not again.changed
    eventually(
        "web available on the mirror",
        lambda: mirror_copy.mirror_workloads_available(_ctx(clients, **settings)),
        until=lambda p: p.done,
        timeout=90,
    )
    assert mirror_copy.mirror_matches_primary(_ctx(clients, **settings)).done

    # the mirror's Service has no load balancer yet: the move is refused, nothing changes
    waiting = mirror_dns.services_serve_on_mirror(_ctx(clients, **settings))
    assert waiting.items == (
        f"service {shop}/web (shop.example.com): no load balancer address yet",
    )
    refused = mirror_dns.dns_to_mirror(_ctx(clients, dry_run=True, **settings))
    assert refused.message.startswith("dry-run: would refuse to move any record")
    with pytest.raises(PreconditionFailed, match="do not serve on"):
        mirror_dns.dns_to_mirror(_ctx(clients, **settings))

    CoreV1Api(clusters["mirror"].api_client).patch_namespaced_service_status(
        "web", shop, {"status": {"loadBalancer": {"ingress": [{"hostname": MIRROR_LB}]}}},
        _content_type="application/merge-patch+json",
    )  # fmt: skip
    assert mirror_dns.services_serve_on_mirror(_ctx(clients, **settings)).done
    would = mirror_dns.dns_to_mirror(_ctx(clients, dry_run=True, **settings))
    assert not would.changed and would.message.startswith("dry-run: would-switch")
    moved = mirror_dns.dns_to_mirror(_ctx(clients, **settings))
    assert moved.changed, moved.message
    values = [
        rr["ResourceRecords"][0]["Value"]
        for rr in records_named(aws.route53, zone, "shop.example.com")
    ]
    assert values == [MIRROR_LB]
    assert not mirror_dns.dns_to_mirror(_ctx(clients, **settings)).changed

    # teardown must wait: the record still points at the mirror
    CoreV1Api(clusters["primary"].api_client).patch_namespaced_service_status(
        "web", shop, {"status": {"loadBalancer": {"ingress": [{"hostname": "primary-shop.elb"}]}}},
        _content_type="application/merge-patch+json",
    )  # fmt: skip
    blocked = mirror_dns.records_on_primary(_ctx(clients, **settings))
    assert blocked.items == ("record shop.example.com.: does not point at primary-shop.elb yet",)


@pytest.mark.moto
def test_grants_mirror_the_rules_that_admit_the_primary(moto: MotoServer) -> None:
    aws = AwsClients(AwsAccess(region=moto.region))
    net = make_network(aws.ec2)

    def sg(name: str) -> str:
        made = aws.ec2.create_security_group(GroupName=name, Description=name, VpcId=net.vpc_id)
        return str(made["GroupId"])

    db, cache, primary_nodes, mirror_nodes = sg("db"), sg("cache"), sg("nodes"), sg("mirror")
    aws.ec2.authorize_security_group_ingress(
        GroupId=db,
        IpPermissions=[{"IpProtocol": "tcp", "FromPort": 5432, "ToPort": 5432,
                        "UserIdGroupPairs": [{"GroupId": primary_nodes}]}],
    )  # fmt: skip
    ctx = HookContext(
        stack="test",
        scenario=ids.ID,
        phase="mirror-cluster",
        clients=StaticClients(aws=aws),
        config=_example(dependency_security_group_ids=[db]),
        outputs={
            "node_security_group_ids": [primary_nodes],
            "mirror_node_security_group_ids": [mirror_nodes],
        },
    )
    dry = mirror_grants.grant_mirror_access(dataclasses.replace(ctx, dry_run=True))
    assert not dry.changed and dry.message == f"would-add: {db} <- {mirror_nodes} tcp/5432"
    assert (
        mirror_grants.grant_mirror_access(ctx).message == f"added: {db} <- {mirror_nodes} tcp/5432"
    )
    assert not mirror_grants.grant_mirror_access(ctx).changed
    assert (
        mirror_grants.revoke_mirror_access(ctx).message
        == f"removed: {db} <- {mirror_nodes} tcp/5432"
    )
    assert not mirror_grants.revoke_mirror_access(ctx).changed

    ctx = dataclasses.replace(ctx, config=_example(dependency_security_group_ids=[cache]))
    with pytest.raises(PreconditionFailed, match=f"{cache} admits none of the primary"):
        mirror_grants.grant_mirror_access(ctx)


def _web_nodes(kube: KubeClients, namespace: str) -> set[str]:
    pods = CoreV1Api(kube.api_client).list_namespaced_pod(namespace, label_selector="app=web")
    return {p.spec.node_name for p in pods.items if p.metadata.deletion_timestamp is None}


@pytest.mark.controlplane
def test_cni_swap_phase_steps_on_the_primary(
    primary_cluster: Cluster, namespace: str, node_pools: NodePools
) -> None:
    """Weave out, new generation Ready, old generation drained, Calico on every new node."""
    from automation.kube.drain.filters import DrainOptions
    from automation.kube.drain.run import DrainLimits

    kube = clients_of(primary_cluster)
    group = {"kubeshift.io/test-group": namespace}
    old_labels = {**group, GENERATION_LABEL: "original"}
    new_labels = {**group, GENERATION_LABEL: "cni"}
    old = node_pools.create(NodePoolSpec("gen-original", count=2, labels=old_labels))
    apps = AppsV1Api(kube.api_client)
    apps.create_namespaced_daemon_set(
        namespace, cni_daemonset("weave-net", {"name": "weave-net"}, old_labels)
    )
    apps.create_namespaced_daemon_set(
        namespace, cni_daemonset("calico-node", {"k8s-app": "calico-node"}, group)
    )
    web = deployment("web", 2, node_selector=group)
    prefer_old = {"key": GENERATION_LABEL, "operator": "In", "values": ["original"]}
    web.spec.template.spec.affinity = {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "preference": {"matchExpressions": [prefer_old]}}
            ]
        }
    }
    apps.create_namespaced_deployment(namespace, web)

    pool = WorkerPoolConfig(
        name="gen", desired_size=2, instance_types=["m5.large"], azs=["a"],
        capacity_types=["on-demand"],
    )  # fmt: skip
    config = _example(worker_pools=[pool], azs=["a"])
    settings = RuntimeSettings(
        mirror=parse_settings(
            {
                "namespaces": [namespace],
                "old_cni": {"namespace": namespace, "name": "weave-net"},
                "new_cni": {"namespace": namespace, "name": "calico-node"},
                "new_nodes_selector": label_selector(new_labels),
                "old_nodes_selector": label_selector(old_labels),
            }
        ),
        drain=DrainOptions(),
        drain_limits=DrainLimits(timeout=120),
    )

    def ctx(dry_run: bool = False, run: RuntimeSettings = settings) -> HookContext:
        return HookContext(
            stack="test",
            scenario=ids.ID,
            phase="cni-swap",
            clients=StaticClients(kube={"primary": kube}),
            config=config,
            settings=run,
            dry_run=dry_run,
        )

    eventually(
        "web available",
        lambda: mirror_copy.primary_workloads_available(ctx()),
        until=lambda p: p.done,
        timeout=90,
    )
    # The new generation joins only now (as the doubled node count does in the seed), so
    # the running pods are all on the old generation when the drain starts.
    new = node_pools.create(NodePoolSpec("gen-cni", count=2, labels=new_labels))
    assert not mirror_cni.old_cni_gone(ctx()).done

    assert not mirror_cni.remove_old_cni(ctx(dry_run=True)).changed
    assert mirror_cni.remove_old_cni(ctx()).changed
    assert not mirror_cni.remove_old_cni(ctx()).changed
    eventually(
        "weave gone", lambda: mirror_cni.old_cni_gone(ctx()), until=lambda p: p.done, timeout=90
    )
    eventually(
        "new generation Ready",
        lambda: mirror_cni.new_generation_ready(ctx()),
        until=lambda p: p.done,
        timeout=90,
    )

    assert _web_nodes(kube, namespace) <= set(old.node_names)
    # a selector that misses the old generation (kops labels nodes by instance group)
    # is refused while its nodes run, not taken for a finished drain
    missing = "kops.k8s.io/instancegroup=nodes"
    mirror = settings.mirror.model_copy(update={"old_nodes_selector": missing})
    with pytest.raises(PreconditionFailed, match=f"old_nodes_selector '{missing}' matches no node"):
        mirror_cni.drain_old_generation(ctx(run=settings.model_copy(update={"mirror": mirror})))
    assert _web_nodes(kube, namespace) <= set(old.node_names)
    # a selector that also picks new nodes (the group label both share) is refused
    # naming them, before anything is cordoned
    shared = label_selector(group)
    mirror = settings.mirror.model_copy(update={"old_nodes_selector": shared})
    with pytest.raises(PreconditionFailed, match=r"also selects 2 node\(s\) of the new"):
        mirror_cni.drain_old_generation(ctx(run=settings.model_copy(update={"mirror": mirror})))
    assert not any(
        CoreV1Api(kube.api_client).read_node(n).spec.unschedulable for n in new.node_names
    )
    # unset, the old generation is every worker outside the new generation, whatever
    # labels its tool gave it (kops: its instance group's), and never a member
    kops = node_pools.create(
        NodePoolSpec("gen-kops", count=1, labels={"kops.k8s.io/instancegroup": "nodes-a"})
    )
    member = node_pools.create(
        NodePoolSpec("gen-member", count=1, labels={"node-role.kubernetes.io/control-plane": ""})
    )
    unset = settings.mirror.model_copy(update={"old_nodes_selector": None})
    chosen, _ = mirror_cni.old_generation(ctx(run=settings.model_copy(update={"mirror": unset})))
    assert set(old.node_names) | set(kops.node_names) <= set(chosen)
    assert not set(chosen) & (set(new.node_names) | set(member.node_names))
    # ... but while no node is of the new generation, that would be every worker
    nowhere = unset.model_copy(update={"new_nodes_selector": f"{GENERATION_LABEL}=nowhere"})
    with pytest.raises(PreconditionFailed, match=f"'{GENERATION_LABEL}=nowhere' matches no node"):
        mirror_cni.drain_old_generation(ctx(run=settings.model_copy(update={"mirror": nowhere})))
    core = CoreV1Api(kube.api_client)
    assert not any(core.read_node(n).spec.unschedulable for n in old.node_names)
    assert not mirror_cni.drain_old_generation(ctx(dry_run=True)).changed
    drained = mirror_cni.drain_old_generation(ctx())
    assert drained.changed and "evicted 2 pod(s)" in drained.message, drained.message
    eventually(
        "Calico Ready on the new generation",
        lambda: mirror_cni.new_cni_on_every_node(ctx()),
        until=lambda p: p.done,
        timeout=90,
    )
    eventually(
        "web available again",
        lambda: mirror_copy.primary_workloads_available(ctx()),
        until=lambda p: p.done,
        timeout=90,
    )
    nodes = _web_nodes(kube, namespace)
    assert nodes and nodes <= set(new.node_names), (nodes, old.node_names)
    assert all(
        n.spec.unschedulable
        for n in CoreV1Api(kube.api_client)
        .list_node(label_selector=label_selector(old_labels))
        .items
    )
    kube.close()


def test_the_pod_network_probe_switched_off_touches_nothing_and_says_so() -> None:
    """For nodes that carry no pod traffic (the sandbox's kwok nodes): no client is used."""
    ctx = _ctx(namespaces=["shop"], pod_network={"enabled": False})

    installed = mirror_cni.install_pod_network_probe(ctx)
    reached = mirror_cni.pod_network_across_nodes(ctx)
    removed = mirror_cni.remove_pod_network_probe(ctx)

    assert not installed.changed and not removed.changed
    assert reached.done and "pod_network.enabled is false" in reached.detail
    assert installed.message == removed.message == reached.detail
