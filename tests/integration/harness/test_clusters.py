"""The two session clusters are separate control planes that tell the truth about themselves."""

from __future__ import annotations

import pytest
from kubernetes.client import CoreV1Api, V1ConfigMap, V1ObjectMeta, VersionApi
from kubernetes.client.exceptions import ApiException

from automation.sandbox.controlplane import Cluster
from tests.support.nodes import NodePools, NodePoolSpec

pytestmark = pytest.mark.controlplane


def test_clusters_do_not_see_each_others_objects(
    primary_cluster: Cluster, mirror_cluster: Cluster, namespace_factory, node_pools_factory
) -> None:
    assert primary_cluster.base_url != mirror_cluster.base_url
    assert primary_cluster.context != mirror_cluster.context
    ns = namespace_factory(primary_cluster)
    mirror_pools: NodePools = node_pools_factory(mirror_cluster)
    mirror_pool = mirror_pools.create(NodePoolSpec("mirror-only", count=1))
    with primary_cluster.api_client() as p, mirror_cluster.api_client() as m:
        CoreV1Api(p).create_namespaced_config_map(
            ns, V1ConfigMap(metadata=V1ObjectMeta(name="marker"), data={"from": "primary"})
        )

        with pytest.raises(ApiException) as missing_ns:
            CoreV1Api(m).read_namespace(ns)
        assert missing_ns.value.status == 404
        assert not CoreV1Api(p).list_node(label_selector=mirror_pool.selector).items
        assert len(CoreV1Api(m).list_node(label_selector=mirror_pool.selector).items) == 1
        p_uid = CoreV1Api(p).read_namespace("default").metadata.uid
        m_uid = CoreV1Api(m).read_namespace("default").metadata.uid
        assert p_uid != m_uid


def test_version_endpoint_reports_the_built_release(primary_cluster: Cluster) -> None:
    with primary_cluster.api_client() as client:
        info = VersionApi(client).get_code()

    expected = primary_cluster.versions["kubernetes"]
    assert info.git_version == expected
    assert (info.major, info.minor) == tuple(expected.lstrip("v").split(".")[:2])


def test_cluster_factory_starts_a_cluster_with_its_own_knobs(cluster_factory) -> None:
    cluster = cluster_factory("tuned", pod_ready_delay_ms=250, api_qps=800)

    with cluster.api_client() as client:
        names = {ns.metadata.name for ns in CoreV1Api(client).list_namespace().items}

    assert {"default", "kube-system", "kube-node-lease"} <= names
    assert cluster.context == "kubeshift-tuned"
    assert "durationMilliseconds: 250" in (cluster.workdir / "kwok.yaml").read_text()
    with pytest.raises(ValueError):
        cluster_factory("tuned")
