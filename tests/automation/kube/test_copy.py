"""Copy to the mirror: stripping, anchored registry rewrite, skips, report, and a real copy.

The pure transforms are table-driven on literal API JSON. The control-plane tests copy a
namespace between the two session clusters (``primary_cluster`` → ``mirror_cluster``)
and check what the mirror then runs: pods with the rewritten image, nothing written on
a second copy, drift reported after a Deployment changes on the primary.
"""

from __future__ import annotations

import base64
import contextlib
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes.client import AppsV1Api, CoreV1Api, V1ConfigMap, V1ObjectMeta, V1Secret
from kubernetes.client.exceptions import ApiException
from pydantic import ValidationError

from automation.core.errors import PreconditionFailed, StepFailedError
from automation.kube.clients import KubeClients
from automation.kube.copy.copying import copy_namespaces
from automation.kube.copy.drift import drift_since_copy
from automation.kube.copy.kinds import KIND_BY_NAME
from automation.kube.copy.options import CopyOptions, RegistryRewrite, rewrite_image
from automation.kube.copy.removal import copies_gone, remove_copies
from automation.kube.copy.report import CopyItem, CopyReport
from automation.kube.copy.transforms import (
    SOURCE_DIGEST,
    SOURCE_GENERATION,
    digest,
    prepare,
    skip_reason,
    stamped,
)
from automation.sandbox.controlplane import Cluster
from tests.support.nodes import NodePools, NodePoolSpec
from tests.support.waiting import eventually
from tests.support.workloads import deployment, service

MIRROR = RegistryRewrite(source="registry.example.com", target="registry-mirror.example.com")

# --- registry rewrite ----------------------------------------------------------------

REWRITES = [
    ("registry.example.com/app:1.2", "registry-mirror.example.com/app:1.2"),
    ("registry.example.com/team/app@sha256:abc", "registry-mirror.example.com/team/app@sha256:abc"),
    # Velero's unanchored substring replace would rewrite each of these:
    ("myregistry.example.com/app:1", "myregistry.example.com/app:1"),
    ("registry.example.com.evil.io/app:1", "registry.example.com.evil.io/app:1"),
    ("other.io/registry.example.com/app:1", "other.io/registry.example.com/app:1"),
    ("registry.example.com:5000/app:1", "registry.example.com:5000/app:1"),
    ("registry.example.community/app", "registry.example.community/app"),
    ("nginx:1.27", "nginx:1.27"),
]


@pytest.mark.parametrize(
    ("image", "expected"),
    REWRITES,
    ids=[
        "host-prefix",
        "nested-path-digest",
        "substring-trap-myregistry",
        "suffix-trap",
        "path-contains-registry",
        "other-port",
        "longer-host",
        "docker-hub-untouched",
    ],
)
def test_registry_rewrite_is_anchored(image: str, expected: str) -> None:
    assert rewrite_image(image, [MIRROR]) == expected


@pytest.mark.parametrize(
    ("rule", "image", "expected"),
    [
        (
            RegistryRewrite(source="registry.example.com/", target="mirror.io/"),
            "registry.example.com/app",
            "mirror.io/app",
        ),
        (
            RegistryRewrite(source="registry.example.com/team/app", target="mirror.io/app"),
            "registry.example.com/team/app:v3",
            "mirror.io/app:v3",
        ),
        (
            RegistryRewrite(source="registry.example.com/team/app", target="mirror.io/app"),
            "registry.example.com/team/application:v3",
            "registry.example.com/team/application:v3",
        ),
        (RegistryRewrite(source="docker.io", target="hub.mirror.io"), "nginx:1.27", None),
        (
            RegistryRewrite(source="docker.io", target="hub.mirror.io"),
            "bitnami/redis:7",
            "hub.mirror.io/bitnami/redis:7",
        ),
        (
            RegistryRewrite(source="docker.io", target="hub.mirror.io"),
            "quay.io/prom/node-exporter",
            "quay.io/prom/node-exporter",
        ),
    ],
    ids=[
        "trailing-slash",
        "repo-then-tag",
        "repo-prefix-trap",
        "docker-short",
        "docker-user",
        "docker-rule-other-registry",
    ],
)
def test_registry_rewrite_rules(rule: RegistryRewrite, image: str, expected: str | None) -> None:
    want = expected if expected is not None else "hub.mirror.io/library/nginx:1.27"
    assert rewrite_image(image, [rule]) == want


def test_first_matching_rewrite_wins() -> None:
    rules = [
        RegistryRewrite(source="registry.example.com/special", target="special.mirror.io"),
        MIRROR,
    ]
    assert rewrite_image("registry.example.com/special/x:1", rules) == "special.mirror.io/x:1"
    assert rewrite_image("registry.example.com/x:1", rules) == "registry-mirror.example.com/x:1"


@pytest.mark.parametrize(
    "bad", ["", "https://registry.example.com", "registry example.com"], ids=str
)
def test_registry_rewrite_rejects_non_prefixes(bad: str) -> None:
    with pytest.raises(ValidationError):
        RegistryRewrite(source=bad, target="x.io")


# --- stripping -----------------------------------------------------------------------

SERVER_META = {
    "uid": "1111",
    "resourceVersion": "42",
    "generation": 3,
    "creationTimestamp": "2024-01-01T00:00:00Z",
    "managedFields": [{"manager": "kubectl"}],
    "ownerReferences": [{"kind": "Thing", "name": "x", "uid": "9"}],
    "finalizers": ["example.com/keep"],
    "selfLink": "/x",
}


def _obj(kind: str, name: str = "web", **body: Any) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": "shop",
            "labels": {"app": name},
            "annotations": {"deployment.kubernetes.io/revision": "7", "team": "a"},
            **SERVER_META,
        },
        "status": {"anything": True},
        **body,
    }


def _pod_spec(*images: str, init: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": f"c{i}", "image": im} for i, im in enumerate(images)]
    }
    if init:
        spec["initContainers"] = [{"name": "init", "image": init}]
    return spec


def test_prepare_strips_server_fields_and_keeps_identity() -> None:
    source = _obj("ConfigMap", data={"k": "v"})
    manifest, images = prepare(KIND_BY_NAME["ConfigMap"], source)
    assert manifest == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "web",
            "namespace": "shop",
            "labels": {"app": "web"},
            "annotations": {"team": "a"},
        },
        "data": {"k": "v"},
    }
    assert images == []
    assert source["metadata"]["uid"] == "1111", "prepare must not modify its input"


def test_prepare_service_drops_allocations() -> None:
    source = _obj(
        "Service",
        spec={
            "type": "LoadBalancer",
            "clusterIP": "10.96.3.4",
            "clusterIPs": ["10.96.3.4"],
            "healthCheckNodePort": 31000,
            "selector": {"app": "web"},
            "ports": [{"port": 80, "targetPort": 8080, "nodePort": 30080}],
        },
    )
    manifest, _ = prepare(KIND_BY_NAME["Service"], source)
    assert manifest["spec"] == {
        "type": "LoadBalancer",
        "selector": {"app": "web"},
        "ports": [{"port": 80, "targetPort": 8080}],
    }
    assert "status" not in manifest


def test_prepare_keeps_headless_cluster_ip() -> None:
    source = _obj(
        "Service",
        spec={"clusterIP": "None", "clusterIPs": ["None"], "ports": [{"port": 5432}]},
    )
    manifest, _ = prepare(KIND_BY_NAME["Service"], source)
    assert manifest["spec"] == {
        "clusterIP": "None",
        "clusterIPs": ["None"],
        "ports": [{"port": 5432}],
    }


def test_prepare_pod_drops_node_name() -> None:
    source = _obj("Pod", spec={"nodeName": "ip-10-0-0-1", **_pod_spec("registry.example.com/a")})
    manifest, images = prepare(KIND_BY_NAME["Pod"], source, [MIRROR])
    assert "nodeName" not in manifest["spec"]
    assert manifest["spec"]["containers"][0]["image"] == "registry-mirror.example.com/a"
    assert images == ["registry.example.com/a -> registry-mirror.example.com/a"]


def test_prepare_job_drops_generated_selector_and_labels() -> None:
    labels = {"controller-uid": "u1", "batch.kubernetes.io/controller-uid": "u1", "job-name": "j"}
    source = _obj(
        "Job",
        spec={
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u1"}},
            "template": {"metadata": {"labels": labels}, "spec": _pod_spec("busybox")},
        },
    )
    manifest, _ = prepare(KIND_BY_NAME["Job"], source)
    assert "selector" not in manifest["spec"]
    assert manifest["spec"]["template"]["metadata"]["labels"] == {"job-name": "j"}


def test_prepare_service_account_drops_token_secrets() -> None:
    source = _obj(
        "ServiceAccount", secrets=[{"name": "web-token-abc"}], imagePullSecrets=[{"name": "r"}]
    )
    manifest, _ = prepare(KIND_BY_NAME["ServiceAccount"], source)
    assert "secrets" not in manifest
    assert manifest["imagePullSecrets"] == [{"name": "r"}]


def _pull_secret(kind: str, key: str, hosts: dict[str, Any]) -> dict[str, Any]:
    document = {"auths": hosts} if key == ".dockerconfigjson" else hosts
    encoded = base64.b64encode(json.dumps(document).encode()).decode()
    return _obj("Secret", type=kind, data={key: encoded})


def _hosts(manifest: dict[str, Any], key: str) -> list[str]:
    document = json.loads(base64.b64decode(manifest["data"][key]))
    return sorted(document["auths"] if key == ".dockerconfigjson" else document)


@pytest.mark.parametrize(
    ("kind", "key"),
    [("kubernetes.io/dockerconfigjson", ".dockerconfigjson"),
     ("kubernetes.io/dockercfg", ".dockercfg")],
)  # fmt: skip
def test_pull_secrets_registry_hosts_go_through_the_anchored_rewrite(kind: str, key: str) -> None:
    creds = {"auth": "dXNlcjpwYXNz"}
    source = _pull_secret(kind, key, {
        "registry.example.com": creds,
        "registry.example.com.evil.io": creds,  # not the same host: kept
        "https://index.docker.io/v1/": creds,
    })  # fmt: skip
    hub = RegistryRewrite(source="docker.io", target="hub-mirror.example.com")
    manifest, changes = prepare(KIND_BY_NAME["Secret"], source, [MIRROR, hub])
    assert _hosts(manifest, key) == [
        "hub-mirror.example.com", "registry-mirror.example.com", "registry.example.com.evil.io"
    ]  # fmt: skip
    assert changes == [
        "pull secret registry.example.com -> registry-mirror.example.com",
        "pull secret https://index.docker.io/v1/ -> hub-mirror.example.com",
    ]
    assert _hosts(source, key) != _hosts(manifest, key)  # the source is not modified
    untouched, none = prepare(KIND_BY_NAME["Secret"], _obj("Secret", data={"x": "eQ=="}), [MIRROR])
    assert none == [] and untouched["data"] == {"x": "eQ=="}


def test_a_path_rule_leaves_the_hosts_credentials_alone() -> None:
    rule = RegistryRewrite(source="registry.example.com/team", target="mirror.example.com/team")
    source = _pull_secret("kubernetes.io/dockerconfigjson", ".dockerconfigjson",
                          {"registry.example.com": {"auth": "x"}})  # fmt: skip
    manifest, changes = prepare(KIND_BY_NAME["Secret"], source, [rule])
    assert changes == [] and _hosts(manifest, ".dockerconfigjson") == ["registry.example.com"]


A = "registry.example.com/a:1"
WORKLOADS = [
    ("Deployment", {"spec": {"template": {"spec": _pod_spec(A)}}}, ("spec", "template", "spec")),
    ("StatefulSet", {"spec": {"template": {"spec": _pod_spec(A)}}}, ("spec", "template", "spec")),
    ("DaemonSet", {"spec": {"template": {"spec": _pod_spec(A)}}}, ("spec", "template", "spec")),
    ("ReplicaSet", {"spec": {"template": {"spec": _pod_spec(A)}}}, ("spec", "template", "spec")),
    ("Job", {"spec": {"template": {"spec": _pod_spec(A)}}}, ("spec", "template", "spec")),
    (
        "CronJob",
        {"spec": {"jobTemplate": {"spec": {"template": {"spec": _pod_spec(A)}}}}},
        ("spec", "jobTemplate", "spec", "template", "spec"),
    ),
    ("Pod", {"spec": _pod_spec(A)}, ("spec",)),
]


@pytest.mark.parametrize(("kind", "body", "path"), WORKLOADS, ids=[w[0] for w in WORKLOADS])
def test_every_workload_kind_gets_images_rewritten(
    kind: str, body: dict[str, Any], path: tuple[str, ...]
) -> None:
    source = _obj(kind, **body)
    pod = source
    for key in path:
        pod = pod[key]
    pod["initContainers"] = [
        {"name": "init", "image": "myregistry.example.com/init:1"},
        {"name": "init2", "image": "registry.example.com/migrate:1"},
    ]
    manifest, images = prepare(KIND_BY_NAME[kind], source, [MIRROR])
    rewritten = manifest
    for key in path:
        rewritten = rewritten[key]
    assert rewritten["containers"][0]["image"] == "registry-mirror.example.com/a:1"
    assert [c["image"] for c in rewritten["initContainers"]] == [
        "myregistry.example.com/init:1",
        "registry-mirror.example.com/migrate:1",
    ]
    assert len(images) == 2


# --- skips ---------------------------------------------------------------------------

SKIPS = [
    ("Secret", {"type": "kubernetes.io/service-account-token"}, "service-account token"),
    ("Secret", {"type": "Opaque"}, ""),
    ("ConfigMap", {"metadata": {"name": "kube-root-ca.crt"}}, "cluster CA bundle"),
    ("ServiceAccount", {"metadata": {"name": "default"}}, "default service account"),
    ("ServiceAccount", {"metadata": {"name": "web"}}, ""),
    (
        "ReplicaSet",
        {"metadata": {"ownerReferences": [{"uid": "d1", "kind": "Deployment"}]}},
        "made by Deployment/web",
    ),
    (
        "Pod",
        {
            "metadata": {
                "ownerReferences": [
                    {"uid": "zz", "kind": "ReplicaSet", "name": "r", "controller": True}
                ]
            }
        },
        "made by ReplicaSet/r",
    ),
    ("Secret", {"metadata": {"ownerReferences": [{"uid": "crd", "kind": "Certificate"}]}}, ""),
    ("Job", {"status": {"completionTime": "2024-01-01T00:00:00Z"}}, "finished job"),
    ("Job", {"status": {"conditions": [{"type": "Failed", "status": "True"}]}}, "finished job"),
    ("Job", {"status": {"active": 1}}, ""),
    (
        "Deployment",
        {"metadata": {"deletionTimestamp": "2024-01-01T00:00:00Z"}},
        "being deleted on the primary",
    ),
]


@pytest.mark.parametrize(
    ("kind", "patch", "reason"),
    SKIPS,
    ids=[
        "sa-token",
        "opaque-secret",
        "root-ca",
        "default-sa",
        "named-sa",
        "rs-of-deployment",
        "pod-of-controller",
        "secret-owned-by-uncopied-crd",
        "job-complete",
        "job-failed",
        "job-running",
        "terminating",
    ],
)
def test_skip_reason(kind: str, patch: dict[str, Any], reason: str) -> None:
    obj: dict[str, Any] = {"metadata": {"name": "x", "namespace": "shop"}}
    obj["metadata"].update(patch.pop("metadata", {}) if "metadata" in patch else {})
    obj.update(patch)
    got = skip_reason(KIND_BY_NAME[kind], obj, {"d1": "Deployment/web"})
    assert got.startswith(reason) if reason else got == ""


def test_options_refuse_system_namespaces_and_unknown_kinds() -> None:
    with pytest.raises(ValidationError, match="kube-system"):
        CopyOptions(namespaces=("shop", "kube-system"))
    with pytest.raises(ValidationError, match="Widget"):
        CopyOptions(namespaces=("shop",), kinds=("Deployment", "Widget"))
    assert CopyOptions(namespaces=("a",), kinds=("deployment", "ConfigMap")).kinds == (
        "ConfigMap",
        "Deployment",
    )


def test_digest_ignores_key_order_and_stamp_records_source() -> None:
    a = {"kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "1", "b": "2"}}
    b = {"data": {"b": "2", "a": "1"}, "metadata": {"name": "x"}, "kind": "ConfigMap"}
    assert digest(a) == digest(b)
    out = stamped(a, {"metadata": {"resourceVersion": "9", "uid": "u", "generation": 2}}, "d")
    assert out["metadata"]["annotations"][SOURCE_DIGEST] == "d"
    assert out["metadata"]["annotations"][SOURCE_GENERATION] == "2"
    assert "annotations" not in a["metadata"]


# --- report --------------------------------------------------------------------------


def test_report_counts_table_and_summary() -> None:
    report = CopyReport(
        (
            CopyItem("Secret", "shop", "db", "created"),
            CopyItem("Secret", "shop", "tok", "skipped", "service-account token"),
            CopyItem("Deployment", "shop", "web", "created", images=("a -> b",)),
            CopyItem("Deployment", "shop", "api", "unchanged"),
        ),
        namespaces=("shop",),
        namespaces_created=("shop",),
    )
    assert report.counts() == {
        "Secret": {"created": 1, "skipped": 1},
        "Deployment": {"created": 1, "unchanged": 1},
    }
    lines = report.table().splitlines()
    assert lines[0].split() == ["kind", "created", "unchanged", "skipped"]
    assert lines[1].split() == ["Secret", "1", "0", "1"]
    assert lines[2].split() == ["Deployment", "1", "1", "0"]
    assert report.summary() == (
        "copy to mirror: 2 created, 0 updated, 1 unchanged, 1 skipped, 0 failed across "
        "1 namespace(s), created shop; 1 image reference(s) rewritten."
    )
    result = report.as_hook_result()
    assert result.changed and result.details["copied"] == ["Secret shop/db", "Deployment shop/web"]


def test_report_raises_naming_failures_and_dry_run_changes_nothing() -> None:
    failed = CopyReport((CopyItem("Deployment", "shop", "web", "failed", "422 immutable"),))
    with pytest.raises(StepFailedError, match="Deployment shop/web: 422 immutable"):
        failed.as_hook_result()
    dry = CopyReport((CopyItem("ConfigMap", "shop", "c", "would-create"),), ("shop",), (), True)
    assert not dry.changed
    assert dry.summary().startswith("dry-run: copy to mirror: 1 would-create, 0 would-update")


# --- against two real clusters ------------------------------------------------------------

SOURCE_IMAGE = "registry.example.com/shop/web:1.0"
MIRROR_IMAGE = "registry-mirror.example.com/shop/web:1.0"
SECRET_VALUE = "s3cr3t-do-not-log"


@pytest.fixture
def primary(kube: KubeClients) -> KubeClients:
    return kube


@pytest.fixture
def mirror_nodes(
    mirror_cluster: Cluster, node_pools_factory: Callable[[Cluster], NodePools]
) -> NodePools:
    pools = node_pools_factory(mirror_cluster)
    pools.create(NodePoolSpec("mirror-workers", count=2))
    return pools


@pytest.fixture
def shop(
    primary: KubeClients,
    mirror: KubeClients,
    mirror_cluster: Cluster,
    namespace: str,
) -> Iterator[str]:
    """A namespace on the primary with a Deployment, Service, ConfigMap and Secret."""
    dep = deployment("web", 2)
    dep.spec.template.spec.containers[0].image = SOURCE_IMAGE
    dep.spec.template.spec.init_containers = [
        {"name": "init", "image": "myregistry.example.com/tools/init:1"}
    ]
    AppsV1Api(primary.api_client).create_namespaced_deployment(namespace, dep)
    core = CoreV1Api(primary.api_client)
    core.create_namespaced_service(namespace, service("web", "web"))
    core.create_namespaced_config_map(
        namespace, V1ConfigMap(metadata=V1ObjectMeta(name="web-config"), data={"mode": "live"})
    )
    core.create_namespaced_secret(
        namespace,
        V1Secret(
            metadata=V1ObjectMeta(name="web-db"),
            data={"password": base64.b64encode(SECRET_VALUE.encode()).decode()},
        ),
    )
    eventually(  # its ReplicaSet and pods exist, so ownership skips are exercised
        "ReplicaSet and 2 pods of web",
        lambda: (
            AppsV1Api(primary.api_client).list_namespaced_replica_set(namespace).items,
            core.list_namespaced_pod(namespace).items,
        ),
        until=lambda found: len(found[0]) == 1 and len(found[1]) == 2,
    )
    yield namespace
    with contextlib.suppress(ApiException):  # a failed test may not have created it
        CoreV1Api(mirror.api_client).delete_namespace(namespace, propagation_policy="Background")


@pytest.mark.controlplane
def test_copy_namespace_to_mirror_runs_rewritten_pods(
    primary: KubeClients,
    mirror: KubeClients,
    mirror_nodes: NodePools,
    shop: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    options = CopyOptions(namespaces=(shop,), registry_rewrites=(MIRROR,))
    caplog.set_level("DEBUG")

    dry = copy_namespaces(primary, mirror, options, dry_run=True)
    assert dry.namespaces_created == (shop,)
    assert {i.key for i in dry.by_action("would-create")} == {
        f"Secret {shop}/web-db",
        f"ConfigMap {shop}/web-config",
        f"Service {shop}/web",
        f"Deployment {shop}/web",
    }
    assert AppsV1Api(mirror.api_client).list_namespaced_deployment(shop).items == []

    report = copy_namespaces(primary, mirror, options)
    report.raise_for_failure()
    assert {i.key for i in report.by_action("created")} == {
        i.key for i in dry.by_action("would-create")
    }
    skipped = {i.key: i.reason for i in report.by_action("skipped")}
    assert skipped[f"ServiceAccount {shop}/default"].startswith("default service account")
    assert skipped[f"ConfigMap {shop}/kube-root-ca.crt"].startswith("cluster CA bundle")
    assert any(
        k.startswith("ReplicaSet") and v.startswith("made by Deployment/web")
        for k, v in skipped.items()
    )
    assert any(k.startswith("Pod") for k in skipped)
    assert SECRET_VALUE not in caplog.text
    assert base64.b64encode(SECRET_VALUE.encode()).decode() not in caplog.text
    assert SECRET_VALUE not in repr(report)

    copied = AppsV1Api(mirror.api_client).read_namespaced_deployment("web", shop)
    assert copied.spec.template.spec.containers[0].image == MIRROR_IMAGE
    assert copied.spec.template.spec.init_containers[0].image == (
        "myregistry.example.com/tools/init:1"
    )
    assert copied.metadata.managed_fields[0].manager == "kubeshift"
    svc = CoreV1Api(mirror.api_client).read_namespaced_service("web", shop)
    source_svc = CoreV1Api(primary.api_client).read_namespaced_service("web", shop)
    assert svc.spec.cluster_ip and svc.spec.cluster_ip != "None"
    assert svc.metadata.uid != source_svc.metadata.uid
    secret = CoreV1Api(mirror.api_client).read_namespaced_secret("web-db", shop)
    assert base64.b64decode(secret.data["password"]).decode() == SECRET_VALUE

    pods = eventually(
        "2 Ready pods of web on the mirror",
        lambda: [
            p
            for p in CoreV1Api(mirror.api_client).list_namespaced_pod(shop).items
            if any(c.type == "Ready" and c.status == "True" for c in p.status.conditions or [])
        ],
        until=lambda pods: len(pods) == 2,
        timeout=90,
    )
    assert {p.spec.containers[0].image for p in pods} == {MIRROR_IMAGE}
    assert all(p.spec.node_name in mirror_nodes.pools[0].node_names for p in pods)

    # idempotent: nothing is written the second time. (resourceVersion is no witness:
    # the deployment controller keeps writing status; kubeshift's own write would bump the
    # generation or the time of its managedFields entry.)
    def writes_by_kubeshift() -> dict[str, tuple[int, object]]:
        return {
            d.metadata.name: (
                d.metadata.generation,
                next(f.time for f in d.metadata.managed_fields if f.manager == "kubeshift"),
            )
            for d in AppsV1Api(mirror.api_client).list_namespaced_deployment(shop).items
        }

    versions = writes_by_kubeshift()
    again = copy_namespaces(primary, mirror, options)
    assert again.copied == [] and not again.changed
    assert len(again.by_action("unchanged")) == 4
    assert writes_by_kubeshift() == versions
    assert drift_since_copy(primary, mirror, options).done


@pytest.mark.controlplane
def test_drift_after_deploy_on_primary_then_recopy(
    primary: KubeClients, mirror: KubeClients, shop: str
) -> None:
    options = CopyOptions(namespaces=(shop,), registry_rewrites=(MIRROR,))
    copy_namespaces(primary, mirror, options).raise_for_failure()
    assert drift_since_copy(primary, mirror, options).done

    AppsV1Api(primary.api_client).patch_namespaced_deployment(
        "web",
        shop,
        {
            "spec": {
                "template": {
                    "spec": {
                        "containers": [
                            {"name": "app", "image": "registry.example.com/shop/web:1.1"}
                        ]
                    }
                }
            }
        },
        _content_type="application/strategic-merge-patch+json",
    )
    CoreV1Api(primary.api_client).create_namespaced_config_map(
        shop, V1ConfigMap(metadata=V1ObjectMeta(name="late"), data={"x": "1"})
    )
    CoreV1Api(primary.api_client).delete_namespaced_secret("web-db", shop)

    drift = drift_since_copy(primary, mirror, options)
    assert not drift.done
    assert drift.items == (
        f"ConfigMap {shop}/late: new on the primary",
        f"Deployment {shop}/web: changed on the primary (generation 1 -> 2)",
        f"Secret {shop}/web-db: deleted on the primary",
    )

    recopy = copy_namespaces(primary, mirror, options)
    assert {i.key: i.action for i in recopy.copied} == {
        f"ConfigMap {shop}/late": "created",
        f"Deployment {shop}/web": "updated",
    }
    image = AppsV1Api(mirror.api_client).read_namespaced_deployment("web", shop)
    assert (
        image.spec.template.spec.containers[0].image == "registry-mirror.example.com/shop/web:1.1"
    )
    left = drift_since_copy(primary, mirror, options)
    assert left.items == (f"Secret {shop}/web-db: deleted on the primary",)


def test_find_drift_status_churn_is_not_drift() -> None:
    """A status-only change keeps the digest: the same source yields no drift item."""
    spec = KIND_BY_NAME["Service"]
    source = _obj("Service", spec={"selector": {"app": "web"}, "ports": [{"port": 80}]})
    manifest, _ = prepare(spec, source)
    churned = _obj("Service", spec={"selector": {"app": "web"}, "ports": [{"port": 80}]})
    churned["status"] = {"loadBalancer": {"ingress": [{"hostname": "lb.example"}]}}
    churned["metadata"]["resourceVersion"] = "99"
    assert digest(prepare(spec, churned)[0]) == digest(manifest)


# --- workloads with PersistentVolumeClaims -----------------------------------------------


def _stateful(primary: KubeClients, namespace: str) -> None:
    """A StatefulSet with a claim template and a Deployment mounting a claim."""
    apps = AppsV1Api(primary.api_client)
    db = {
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {
            "serviceName": "db", "replicas": 0,
            "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}},
                         "spec": {"containers": [{"name": "db", "image": SOURCE_IMAGE}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}}}}],
        },
    }  # fmt: skip
    apps.create_namespaced_stateful_set(namespace, db)
    files = deployment("files", 0)
    files.spec.template.spec.volumes = [
        {"name": "uploads", "persistentVolumeClaim": {"claimName": "uploads"}}
    ]
    apps.create_namespaced_deployment(namespace, files)


@pytest.mark.controlplane
def test_workloads_with_claims_stop_the_copy_before_anything_is_written(
    primary: KubeClients, mirror: KubeClients, shop: str
) -> None:
    _stateful(primary, shop)
    options = CopyOptions(namespaces=(shop,), registry_rewrites=(MIRROR,))
    with pytest.raises(PreconditionFailed) as caught:
        copy_namespaces(primary, mirror, options)
    message = str(caught.value)
    assert f"StatefulSet {shop}/db (data)" in message
    assert f"Deployment {shop}/files (uploads)" in message
    assert "kubeshift:runtime.mirror.stateful" in message and "\n" not in message
    assert f"{shop}/web " not in message  # the stateless Deployment is not named
    names = [n.metadata.name for n in CoreV1Api(mirror.api_client).list_namespace().items]
    assert shop not in names  # nothing written: not even the namespace


@pytest.mark.controlplane
def test_left_on_the_primary_or_copied_without_data_as_the_stack_says(
    primary: KubeClients, mirror: KubeClients, shop: str
) -> None:
    _stateful(primary, shop)
    left = copy_namespaces(
        primary, mirror, CopyOptions(namespaces=(shop,), stateful="leave-on-primary")
    )
    skipped = {i.key: i.reason for i in left.by_action("skipped")}
    assert "left on the primary" in skipped[f"StatefulSet {shop}/db"]
    assert "left on the primary" in skipped[f"Deployment {shop}/files"]
    assert f"Deployment {shop}/web" in {i.key for i in left.copied}
    apps = AppsV1Api(mirror.api_client)
    assert [d.metadata.name for d in apps.list_namespaced_deployment(shop).items] == ["web"]

    empty = copy_namespaces(
        primary, mirror, CopyOptions(namespaces=(shop,), stateful="copy-without-data")
    )
    copied = {i.key: i.reason for i in empty.copied}
    assert copied[f"StatefulSet {shop}/db"] == "without its data (data start empty)"
    assert apps.read_namespaced_stateful_set("db", shop)


# --- taking the copy back ------------------------------------------------------------


def _namespaces(cluster: KubeClients) -> set[str]:
    return {n.metadata.name for n in CoreV1Api(cluster.api_client).list_namespace().items}


@pytest.mark.controlplane
def test_taking_the_copy_back_deletes_the_namespace_it_created_and_copying_again_works(
    primary: KubeClients, mirror: KubeClients, shop: str
) -> None:
    options = CopyOptions(namespaces=(shop,), registry_rewrites=(MIRROR,))
    copy_namespaces(primary, mirror, options).raise_for_failure()

    dry = remove_copies(mirror, options, dry_run=True)
    assert dry.namespaces == (shop,) and not dry.as_hook_result().changed
    assert shop in _namespaces(mirror) and not copies_gone(mirror, options).done

    removed = remove_copies(mirror, options).as_hook_result()
    assert removed.changed and removed.details["namespaces"] == [shop], removed
    gone = eventually(
        "the copied namespace gone from the mirror",
        lambda: copies_gone(mirror, options),
        until=lambda pending: pending.done,
        timeout=90,
    )
    assert shop not in _namespaces(mirror), gone
    assert shop in _namespaces(primary), "the primary keeps its namespace"
    again = remove_copies(mirror, options).as_hook_result()
    assert not again.changed and again.message.startswith("nothing the copy wrote")

    copied = copy_namespaces(primary, mirror, options)
    assert copied.namespaces_created == (shop,) and f"Deployment {shop}/web" in {
        i.key for i in copied.by_action("created")
    }


@pytest.mark.controlplane
def test_in_a_namespace_the_mirror_had_only_the_copies_go(
    primary: KubeClients, mirror: KubeClients, shop: str
) -> None:
    core = CoreV1Api(mirror.api_client)
    core.create_namespace({"metadata": {"name": shop}})
    core.create_namespaced_config_map(
        shop, V1ConfigMap(metadata=V1ObjectMeta(name="mirror-own"), data={"x": "1"})
    )
    options = CopyOptions(namespaces=(shop,), registry_rewrites=(MIRROR,))
    copy_namespaces(primary, mirror, options).raise_for_failure()

    removed = remove_copies(mirror, options)
    assert removed.namespaces == ()
    assert set(removed.objects) == {
        f"Secret {shop}/web-db",
        f"ConfigMap {shop}/web-config",
        f"Service {shop}/web",
        f"Deployment {shop}/web",
    }
    assert removed.objects[0] == f"Deployment {shop}/web", "workloads before what they use"
    assert copies_gone(mirror, options).done
    assert shop in _namespaces(mirror)
    left = {c.metadata.name for c in core.list_namespaced_config_map(shop).items}
    assert "mirror-own" in left and "web-config" not in left
    assert AppsV1Api(mirror.api_client).list_namespaced_deployment(shop).items == []
    assert remove_copies(mirror, options).objects == ()
