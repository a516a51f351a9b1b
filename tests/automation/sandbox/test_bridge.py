"""The node bridge: moto's running instances become kwok Nodes on a real control plane.

Instances are launched the way kubeshift's program launches them (launch templates
whose user data ``components.contract.userdata`` renders, ASGs propagating the cluster tags),
and the Nodes must satisfy what kubeshift's hooks read: the name is the private DNS
name, ``providerID`` names the instance, labels and taints come from the kubelet flags.
Each test bridges its own cluster name, so it only ever sees its own instances.
"""

from __future__ import annotations

import base64
import gzip
import ipaddress
import logging
import threading
import time
from typing import Any

import pytest
from kubernetes.client import CoreV1Api

from automation.aws.nodes import cluster_node_names
from automation.sandbox.boots import Boots
from automation.sandbox.bridge import BRIDGE_LABEL, MANAGED_LABEL, BridgeReport, NodeBridge
from automation.sandbox.controlplane import Cluster
from automation.sandbox.instance_nodes import CONTROL_PLANE_ROLE, capacity
from automation.sandbox.kubelet_flags import (
    api_host,
    kubelet_flags,
    kubelet_refuses,
    registered_flags,
    user_data_text,
)
from automation.sandbox.world.kops import nodeup_script
from components.contract import userdata
from components.contract.tags import cluster_tags
from tests.support.ec2_world import AMI, ZONE, World
from tests.support.nodes import NodePools, NodePoolSpec, unique_name
from tests.support.waiting import eventually

WORKER_LABELS = {"team": "platform", userdata.POOL_LABEL: "general"}


# --- reading kubelet flags (no services) --------------------------------------------------


def test_flags_come_back_from_the_rendered_user_data() -> None:
    labels = {**WORKER_LABELS, userdata.LIFECYCLE_LABEL: "spot", "empty": ""}
    taints = [("dedicated", "batch", "NoSchedule"), ("gpu", "", "NoExecute")]
    script = userdata.node_script(
        cluster_name="c", api_endpoint="https://api", labels=labels, taints=taints
    )

    flags = kubelet_flags(user_data_text(userdata.encode(script)))

    assert flags.labels == labels
    assert sorted(flags.taints) == sorted(taints)


def test_flags_from_eks_style_gzipped_mime_user_data() -> None:
    part = (
        "#!/bin/bash\n/etc/eks/bootstrap.sh demo --kubelet-extra-args "
        "'--node-labels=a=1,b=2 --register-with-taints=k=v:NoSchedule'\n"
    )
    encoded_part = base64.b64encode(part.encode()).decode()
    mime = (
        'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n\n--B\n'
        "Content-Type: text/x-shellscript\nContent-Transfer-Encoding: base64\n\n"
        f"{encoded_part}\n--B--\n"
    )
    encoded = base64.b64encode(gzip.compress(mime.encode())).decode()

    flags = kubelet_flags(user_data_text(encoded))

    assert flags.labels == {"a": "1", "b": "2"}
    assert flags.taints == (("k", "v", "NoSchedule"),)


class _SlowPasses:
    """Stands in for a bridge whose every pass takes ``seconds`` (a large moto world)."""

    cluster = "slow"

    def __init__(self, seconds: float) -> None:
        self.seconds, self.passes = seconds, 0

    def sync(self) -> BridgeReport:
        self.passes += 1
        time.sleep(self.seconds)
        return BridgeReport()


def test_long_passes_space_themselves_out_to_the_duty_cycle() -> None:
    """A pass of 0.2 s every 0.01 s would keep a core busy; at a 25 % duty cycle the
    bridge waits three times the pass between passes (a busy machine only slows it)."""
    bridge, stop = _SlowPasses(0.2), threading.Event()
    runner = threading.Thread(target=NodeBridge.run, args=(bridge, stop, 0.01, 0.25))
    runner.start()
    time.sleep(2.0)
    stop.set()
    runner.join(timeout=5)
    assert not runner.is_alive()
    assert 1 <= bridge.passes <= 3  # each pass and its pause take at least 0.8 s


def test_a_node_kops_boots_carries_its_instance_groups_labels_and_taints() -> None:
    tags = {
        **cluster_tags("c"),
        "k8s.io/cluster-autoscaler/node-template/label/team": "platform",
        "k8s.io/cluster-autoscaler/node-template/taint/dedicated": "batch:NoSchedule",
    }
    script = nodeup_script("general-spot", "c.k8s.local", config_hash="")

    flags = registered_flags(user_data_text(userdata.encode(script)), tags)

    assert flags.labels == {
        "team": "platform",
        "kops.k8s.io/instancegroup": "general-spot",
        "node-role.kubernetes.io/node": "",
    }
    assert flags.taints == (("dedicated", "batch", "NoSchedule"),)
    # a member's role label comes with its member tag, not kops's node role
    master = nodeup_script("master-a-1", "c.k8s.local", role="ControlPlane", config_hash="")
    assert "node-role.kubernetes.io/node" not in registered_flags(master, tags).labels
    # kubeshift's own script: its kubelet flags only, whatever the instance's tags say
    own = userdata.node_script(cluster_name="c", api_endpoint="https://api", labels={"a": "b"},
                               taints=[])  # fmt: skip
    assert registered_flags(own, tags).labels == {"a": "b"}


def test_a_member_seed_001s_join_script_joins_is_marked_as_kubeadm_marks_one() -> None:
    """``kubeadm join --control-plane`` labels the node and taints it NoSchedule (its
    mark-control-plane phase); a worker the same script joins keeps its flags alone."""
    join = '/opt/bootstrap/join --cluster c --role {role} --api-server "$API_ENDPOINT"'
    member = f"#!/bin/bash\n{join.format(role='control-plane')} --node-labels a=b\n"
    flags = registered_flags(member, {})
    assert flags.labels == {"a": "b", "node-role.kubernetes.io/control-plane": ""}
    assert flags.taints == (("node-role.kubernetes.io/control-plane", "", "NoSchedule"),)
    worker = f"#!/bin/bash\n{join.format(role='worker')} --node-labels a=b\n"
    assert registered_flags(worker, {}) == kubelet_flags(worker)
    assert registered_flags(f"# {join.format(role='control-plane')}\n", {}).labels == {}


def test_labels_a_real_kubelet_refuses() -> None:
    assert kubelet_refuses(
        {
            CONTROL_PLANE_ROLE: "",
            "kubernetes.io/role": "master",
            userdata.LIFECYCLE_LABEL: "spot",
            "node.kubernetes.io/instance-type": "m5.large",
            userdata.POOL_LABEL: "general",
        }
    ) == sorted([CONTROL_PLANE_ROLE, "kubernetes.io/role"])


def test_capacity_follows_the_instance_type() -> None:
    assert capacity("m5.large")["cpu"] == "2" and capacity("m5.large")["memory"] == "8Gi"
    assert capacity("r5.2xlarge")["cpu"] == "8" and capacity("r5.2xlarge")["memory"] == "64Gi"
    assert capacity("")["pods"] == "110"


# --- against moto and a real cluster ------------------------------------------------------


def _ready(node: Any) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in node.status.conditions or [])


def _taints(node: Any) -> set[tuple[str, str, str]]:
    """Registered taints (not the node controllers' own ``node.kubernetes.io/*`` ones)."""
    return {
        (t.key, t.value or "", t.effect)
        for t in node.spec.taints or []
        if not t.key.startswith("node.kubernetes.io/")
    }


def _worker_script(world: World, capacity_type: str) -> str:
    labels = {
        **WORKER_LABELS,
        userdata.GENERATION_LABEL: "original",
        userdata.LIFECYCLE_LABEL: capacity_type,
    }
    return userdata.node_script(
        cluster_name=world.cluster,
        api_endpoint="https://api.example.internal",
        labels=labels,
        taints=[("dedicated", "batch", "NoSchedule")],
    )


@pytest.mark.moto
@pytest.mark.controlplane
def test_asg_workers_become_ready_kwok_nodes(world: World) -> None:
    template = world.launch_template("workers-spot", _worker_script(world, "spot"))
    world.group(
        "workers-spot",
        2,
        {**cluster_tags(world.cluster), "kubeshift.io/pool": "general"},
        MixedInstancesPolicy={
            "LaunchTemplate": {
                "LaunchTemplateSpecification": {"LaunchTemplateId": template, "Version": "1"},
                "Overrides": [{"InstanceType": "m5.large"}],
            },
            "InstancesDistribution": {"OnDemandPercentageAboveBaseCapacity": 0},
        },
    )
    instances = {i["PrivateDnsName"]: i for i in world.instances("running")}
    assert len(instances) == 2

    report = world.bridge.sync()

    assert sorted(report.added) == sorted(instances) and not report.removed, report
    nodes = world.nodes()
    assert sorted(nodes) == sorted(instances)
    cidrs = set()
    for name, node in nodes.items():
        instance = instances[name]
        assert node.spec.provider_id == f"aws:///{ZONE}/{instance['InstanceId']}"
        labels = node.metadata.labels
        assert labels["topology.kubernetes.io/zone"] == ZONE
        assert labels["topology.kubernetes.io/region"] == "eu-west-1"
        assert labels[userdata.LIFECYCLE_LABEL] == "spot"
        assert labels[userdata.GENERATION_LABEL] == "original"
        assert labels["team"] == "platform" and labels[userdata.POOL_LABEL] == "general"
        assert labels[MANAGED_LABEL[0]] == MANAGED_LABEL[1]
        assert labels["kubernetes.io/hostname"] == name
        assert CONTROL_PLANE_ROLE not in labels
        assert _taints(node) == {("dedicated", "batch", "NoSchedule")}
        addresses = {(a.type, a.address) for a in node.status.addresses}
        assert ("InternalIP", instance["PrivateIpAddress"]) in addresses
        assert ("Hostname", name) in addresses
        cidrs.add(node.spec.pod_cidr)
    assert len(cidrs) == 2 and None not in cidrs

    # kubeshift's own lookup (the taint/drain hooks) finds exactly these nodes.
    provider_ids = {n.metadata.name: n.spec.provider_id for n in world.core.list_node().items}
    match = cluster_node_names(
        world.ec2, cluster=world.cluster, vpc_id=world.vpc_id, nodes=provider_ids
    )
    assert match.names == tuple(sorted(instances)) and match.unmatched == ()

    for name in instances:
        eventually(f"node {name} Ready", lambda n=name: _ready(world.core.read_node(n)))
    again = world.bridge.sync()
    assert not again.changed and not again.deferred, again
    assert sorted(world.nodes()) == sorted(instances)
    _pod_runs_in_the_node_cidr(world, next(iter(nodes.values())))


def _pod_runs_in_the_node_cidr(world: World, node: Any) -> None:
    """kwok runs pods on a bridged node, giving them addresses from its pod CIDR."""
    name = unique_name("probe")
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "nodeName": node.metadata.name,
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}],
            "tolerations": [{"operator": "Exists"}],
        },
    }
    world.core.create_namespaced_pod("default", pod)
    try:
        ip = eventually(
            f"pod {name} running with an IP",
            lambda: world.core.read_namespaced_pod(name, "default").status.pod_ip,
        )
        assert ipaddress.ip_address(ip) in ipaddress.ip_network(node.spec.pod_cidr)
    finally:
        world.core.delete_namespaced_pod(name, "default", grace_period_seconds=0)


@pytest.mark.moto
@pytest.mark.controlplane
def test_control_plane_members_get_the_role_label_and_taint(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    member_tags = {
        **cluster_tags(world.cluster),
        "kubeshift.io/member": "1",
        "k8s.io/role/master": "1",
    }
    script = userdata.node_script(
        cluster_name=world.cluster,
        api_endpoint="https://api.example.internal",
        labels={CONTROL_PLANE_ROLE: ""},
        taints=[(CONTROL_PLANE_ROLE, "", "NoSchedule")],
        role="control-plane",
    )
    template = world.launch_template("control-plane-1", script, InstanceType="m5.xlarge")
    world.group(
        "control-plane-1",
        1,
        member_tags,
        LaunchTemplate={"LaunchTemplateId": template, "Version": "1"},
    )

    with caplog.at_level(logging.WARNING, logger="kubeshift.sandbox.bridge"):
        report = world.bridge.sync()

    # kubeshift's control-plane user data asks the kubelet for its own role label,
    # which a real kubelet (>= 1.16) refuses: the bridge says so.
    assert any(CONTROL_PLANE_ROLE in r.getMessage() for r in caplog.records), caplog.text
    [name] = report.added
    node = world.core.read_node(name)
    assert node.metadata.labels[CONTROL_PLANE_ROLE] == ""
    assert node.metadata.labels["node.kubernetes.io/instance-type"] == "m5.xlarge"
    assert node.metadata.labels[userdata.LIFECYCLE_LABEL] == "on-demand"
    assert _taints(node) == {(CONTROL_PLANE_ROLE, "", "NoSchedule")}
    assert node.status.capacity["cpu"] == "4"
    eventually(f"node {name} Ready", lambda: _ready(world.core.read_node(name)))


@pytest.mark.moto
@pytest.mark.controlplane
def test_nodes_follow_instances_that_stop_or_go(world: World, node_pools: NodePools) -> None:
    """Legacy-tagged instances with their own user data; foreign instances and nodes stay."""
    script = _worker_script(world, "on-demand")
    ids = world.run(
        3, {"KubernetesCluster": world.cluster}, UserData=script, InstanceType="c5.large"
    )
    world.run(1, cluster_tags(unique_name("other")))  # another cluster's instance
    world.run(1, {"KubernetesCluster": world.cluster + "-x"})  # a name sharing our prefix
    bystander = node_pools.create(NodePoolSpec("bystander", count=1))
    first = world.bridge.sync()
    assert len(first.added) == 3, first
    by_instance = {n.spec.provider_id.rsplit("/", 1)[-1]: name for name, n in world.nodes().items()}
    assert sorted(by_instance) == sorted(ids)
    node = world.core.read_node(by_instance[ids[0]])
    assert node.metadata.labels[userdata.GENERATION_LABEL] == "original"
    assert node.metadata.labels["node.kubernetes.io/instance-type"] == "c5.large"

    world.ec2.terminate_instances(InstanceIds=[ids[0]])
    world.ec2.stop_instances(InstanceIds=[ids[1]])
    report = world.bridge.sync()

    assert sorted(report.removed) == sorted([by_instance[ids[0]], by_instance[ids[1]]])
    assert not report.added, report
    assert sorted(world.nodes()) == [by_instance[ids[2]]]
    assert world.core.read_node(bystander.node_names[0]).metadata.name  # never touched

    world.ec2.start_instances(InstanceIds=[ids[1]])
    back = world.bridge.sync()
    assert back.added == (by_instance[ids[1]],) and not back.removed


class _FlakyEc2:
    """An EC2 client whose first ``describe_instances`` pass fails like a dropped link."""

    def __init__(self, ec2: Any) -> None:
        self._ec2 = ec2
        self.failures = 1

    def get_paginator(self, name: str) -> Any:
        if self.failures:
            self.failures -= 1
            from botocore.exceptions import EndpointConnectionError

            raise EndpointConnectionError(endpoint_url="http://127.0.0.1:1")
        return self._ec2.get_paginator(name)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ec2, name)


@pytest.mark.moto
@pytest.mark.controlplane
def test_run_survives_errors_and_keeps_bridging(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    bridge = NodeBridge(_FlakyEc2(world.ec2), world.api, world.cluster)  # type: ignore[arg-type]
    stop = threading.Event()
    thread = threading.Thread(target=bridge.run, args=(stop, 0.2), daemon=True)
    with caplog.at_level(logging.INFO, logger="kubeshift.sandbox.bridge"):
        thread.start()
        try:
            [iid] = world.run(
                1, cluster_tags(world.cluster), UserData=_worker_script(world, "spot")
            )
            nodes = eventually("the bridged node", world.nodes, until=lambda n: len(n) == 1)
            [node] = nodes.values()
            assert node.spec.provider_id.endswith("/" + iid)
            world.ec2.terminate_instances(InstanceIds=[iid])
            eventually("the node gone", world.nodes, until=lambda n: not n)
        finally:
            stop.set()
            thread.join(timeout=10)
    assert not thread.is_alive()
    messages = [r.getMessage() for r in caplog.records]
    assert any("pass failed, will retry" in m for m in messages), messages
    assert any("recovered" in m for m in messages), messages


def test_the_api_host_a_boot_script_names() -> None:
    script = userdata.node_script(
        cluster_name="c", api_endpoint="https://api.mirror.example.com:443", labels={}, taints=[]
    )

    assert api_host(user_data_text(userdata.encode(script))) == "api.mirror.example.com"
    assert api_host("#!/bin/bash\n/etc/eks/bootstrap.sh demo\n") == ""


@pytest.mark.moto
@pytest.mark.controlplane
def test_each_instance_joins_the_cluster_its_user_data_names(
    world: World, mirror_cluster: Cluster
) -> None:
    """cni-swap's mirror carries the primary's cluster tag: the API endpoint decides."""
    mirror_host = "api.mirror.example.com"
    mirror_script = userdata.node_script(
        cluster_name=world.cluster, api_endpoint=f"https://{mirror_host}", labels={}, taints=[]
    )
    primary_ids = world.run(2, cluster_tags(world.cluster), UserData=_worker_script(world, "spot"))
    [mirror_id] = world.run(1, cluster_tags(world.cluster), UserData=mirror_script)
    hosts = frozenset({mirror_host})
    primary = NodeBridge(world.ec2, world.api, world.cluster, foreign_api_hosts=hosts)
    with mirror_cluster.api_client() as mirror_api:
        mirror = NodeBridge(world.ec2, mirror_api, world.cluster, api_hosts=hosts)
        mirror_core = CoreV1Api(mirror_api)
        try:
            assert len(primary.sync().added) == 2 and len(mirror.sync().added) == 1
            joined = {n.spec.provider_id.rsplit("/", 1)[-1] for n in world.nodes().values()}
            assert joined == set(primary_ids)
            selector = f"{BRIDGE_LABEL}={world.cluster}"
            [node] = mirror_core.list_node(label_selector=selector).items
            assert node.spec.provider_id.endswith("/" + mirror_id)
            assert not primary.sync().changed and not mirror.sync().changed
        finally:
            mirror_core.delete_collection_node(label_selector=f"{BRIDGE_LABEL}={world.cluster}")


@pytest.mark.moto
@pytest.mark.controlplane
def test_a_kubelet_starts_only_where_the_image_reads_the_boot_script(world: World) -> None:
    """kubeshift's node.env on a stock image (kops's, say) starts no kubelet on an
    account: the strict bridge leaves the instance out and says why; one built for
    node.env joins. The bridge without images (what the sandbox ran before) joined it."""
    [iid] = world.run(1, cluster_tags(world.cluster), UserData=_worker_script(world, "spot"))
    [name] = [i["PrivateDnsName"] for i in world.instances("running")]
    stock = NodeBridge(world.ec2, world.api, world.cluster, boots=Boots({AMI: "cloud-init"}))
    built = NodeBridge(world.ec2, world.api, world.cluster, boots=Boots({AMI: "node-env"}))

    refused = stock.sync()

    assert refused.added == ()
    assert refused.deferred == (
        f"{iid}: no kubelet starts: image {AMI} is a stock image: the boot script leaves "
        "/etc/kubeshift/node.env, which nothing on it reads",
    )
    assert built.sync().added == (name,)
    world.core.delete_node(name)
    assert world.bridge.sync().added == (name,)  # lenient: any script's kubelet started
