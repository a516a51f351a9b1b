"""kwok's stages: pod-ready takes a delay, per cluster (env) or per pod (annotation);
heartbeats at a kubelet's pace; pods a controller marked not Ready turn Ready again."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import yaml
from kubernetes.client import (
    ApiClient,
    AppsV1Api,
    CoreV1Api,
    V1Container,
    V1ObjectMeta,
    V1Pod,
    V1PodSpec,
    V1Toleration,
)

from automation.sandbox.binaries import Binaries
from automation.sandbox.kwok import (
    POD_READY_DELAY_ANNOTATION,
    parse_duration_ms,
    stages,
    write_config,
)
from tests.support.nodes import NodePools, NodePoolSpec
from tests.support.waiting import eventually
from tests.support.workloads import deployment


@pytest.mark.parametrize(
    ("text", "ms"), [("0", 0), ("250ms", 250), ("2s", 2000), ("1.5s", 1500), ("1m", 60000)]
)
def test_parse_duration(text: str, ms: int) -> None:
    assert parse_duration_ms(text) == ms


@pytest.mark.controlplane
def test_pod_ready_stage_carries_the_cluster_delay_and_the_annotation(testbin: Binaries) -> None:
    by_name = {s["metadata"]["name"]: s for s in stages(testbin.kwok_stages, 1500)}

    delay = by_name["pod-ready"]["spec"]["delay"]

    assert delay["durationMilliseconds"] == 1500
    assert POD_READY_DELAY_ANNOTATION in delay["durationFrom"]["expressionFrom"]
    assert {"node-initialize", "node-heartbeat", "pod-delete"} <= set(by_name)


NODE_MONITOR_GRACE_MS = 50_000  # kube-controller-manager's default since 1.32


@pytest.mark.controlplane
def test_heartbeats_fit_several_times_in_the_node_monitor_grace_period(testbin: Binaries) -> None:
    """With leases off, a node whose heartbeat comes once per grace period goes Unknown at
    the first stall of the API server, and its pods stay not Ready (no kubelet reverts
    them); a kubelet beats four times per grace period."""
    by_name = {s["metadata"]["name"]: s for s in stages(testbin.kwok_stages, 0)}
    delay = by_name["node-heartbeat"]["spec"]["delay"]
    longest = max(delay["durationMilliseconds"], delay.get("jitterDurationMilliseconds", 0))
    assert longest * 4 <= NODE_MONITOR_GRACE_MS


def _transition(pod: V1Pod, type_: str) -> dt.datetime | None:
    return next(
        (
            c.last_transition_time
            for c in pod.status.conditions or []
            if c.type == type_ and c.status == "True"
        ),
        None,
    )


@pytest.mark.controlplane
def test_the_config_states_every_option_kwok_defaults_only_without_a_config_file(
    testbin: Binaries, tmp_path: Path
) -> None:
    """kwok skips its defaulting when given a file: a missing option is zero, not default."""
    written = write_config(tmp_path / "kwok.yaml", testbin.kwok_stages, 0)
    options = next(yaml.safe_load_all(written.read_text()))["options"]

    assert options["podsOnNodeSyncParallelism"] >= 1, "no worker would resync a node's pods"
    assert options["enablePodsOnNodeSyncListPager"] is True
    assert options["podPlayStageParallelism"] >= 1
    assert options["nodePlayStageParallelism"] >= 1
    assert options["nodeLeaseParallelism"] >= 1


@pytest.mark.controlplane
def test_annotated_pod_turns_ready_after_its_delay(
    primary_client: ApiClient, namespace: str, node_pools: NodePools
) -> None:
    pool = node_pools.create(NodePoolSpec("delay", count=1))
    AppsV1Api(primary_client).create_namespaced_deployment(
        namespace,
        deployment(
            "slow", 1, node_selector={"kubeshift.io/pool": pool.name},
            annotations={POD_READY_DELAY_ANNOTATION: "4s"},
        ),
    )  # fmt: skip

    (pod,) = eventually(
        "the slow pod Ready",
        lambda: CoreV1Api(primary_client).list_namespaced_pod(namespace).items,
        until=lambda pods: len(pods) == 1 and _transition(pods[0], "Ready") is not None,
        timeout=60,
    )

    scheduled, ready = _transition(pod, "PodScheduled"), _transition(pod, "Ready")
    assert scheduled is not None and ready is not None
    assert (ready - scheduled).total_seconds() >= 3  # 4s delay, 1s timestamp resolution


@pytest.mark.controlplane
def test_pods_bound_the_moment_their_node_joins_all_run(
    primary_client: ApiClient, namespace: str, node_pools: NodePools
) -> None:
    """A DaemonSet's pod lands on a node as it joins; kwok must still play it.

    kwok skips a pod whose event arrives before it knows the pod's node and relies on
    its pods-on-node sync to come back to it; without that sync (zero workers when a
    config file leaves the option out) such pods stayed Pending for good.
    """
    core = CoreV1Api(primary_client)
    names = []
    for index in range(12):
        (node,) = node_pools.create(NodePoolSpec(f"join-{index}", count=1)).node_names
        pod = V1Pod(
            metadata=V1ObjectMeta(name=f"on-join-{index}"),
            spec=V1PodSpec(
                node_name=node,
                tolerations=[V1Toleration(operator="Exists")],
                containers=[V1Container(name="c", image="registry.k8s.io/pause:3.10")],
            ),
        )
        names.append(core.create_namespaced_pod(namespace, pod).metadata.name)

    def phases() -> dict[str, str]:
        return {p.metadata.name: p.status.phase for p in core.list_namespaced_pod(namespace).items}

    eventually(
        "every pod bound on join Running",
        phases,
        until=lambda phases: all(phases.get(n) == "Running" for n in names),
        timeout=60,
    )


def _ready_condition(core: CoreV1Api, namespace: str, name: str) -> tuple[str, str | None]:
    pod = core.read_namespaced_pod(name, namespace)
    ready = next(c for c in pod.status.conditions or [] if c.type == "Ready")
    return ready.status, ready.reason


@pytest.mark.controlplane
def test_a_pod_marked_not_ready_by_a_controller_turns_ready_again(
    primary_client: ApiClient, namespace: str, node_pools: NodePools
) -> None:
    """The node lifecycle controller marks a silent node's pods not Ready (the Ready
    condition False, its reason untouched); a kubelet heard from again reports them
    Ready. Without that, one API server stall left a Deployment a replica short for good
    and every drain behind its budget waiting. A not-Ready condition with a reason (a
    failing probe, as a kubelet reports it) is the kubelet's own word and stands."""
    pool = node_pools.create(NodePoolSpec("resync", count=1))
    core = CoreV1Api(primary_client)
    AppsV1Api(primary_client).create_namespaced_deployment(
        namespace, deployment("marked", 2, node_selector={"kubeshift.io/pool": pool.name})
    )
    marked, probed = (
        p.metadata.name
        for p in eventually(
            "both pods Ready",
            lambda: core.list_namespaced_pod(namespace).items,
            until=lambda pods: len(pods) == 2 and all(_transition(p, "Ready") for p in pods),
            timeout=60,
        )
    )
    for name, reason in ((marked, None), (probed, "ProbeFailed")):
        pod = core.read_namespaced_pod(name, namespace)
        for condition in pod.status.conditions:
            if condition.type == "Ready":
                condition.status, condition.reason = "False", reason
        core.replace_namespaced_pod_status(name, namespace, pod)  # as the controller writes

    eventually(
        "the marked pod Ready again",
        lambda: _ready_condition(core, namespace, marked),
        until=lambda ready: ready[0] == "True",
        timeout=60,
    )
    assert _ready_condition(core, namespace, probed) == ("False", "ProbeFailed")
