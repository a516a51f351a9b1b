"""The new CNI's manifest applied with server-side apply on a real control plane."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from kubernetes.client import AppsV1Api, CoreV1Api

from automation.config.clients import StaticClients
from automation.config.mirror_settings import MirrorSettings
from automation.config.settings import RuntimeSettings
from automation.core.errors import PreconditionFailed, UserError
from automation.kube.clients import KubeClients
from automation.kube.manifests import apply_manifest, load_manifest
from automation.model.context import HookContext
from automation.steps.mirror_cni import install_new_cni
from tests.support.workloads import PAUSE_IMAGE
from tests.support.yaml_bombs import BILLION_LAUGHS

SETTING = "kubeshift:runtime.mirror.new_cni_manifest"


def _manifest(namespace: str, image: str = PAUSE_IMAGE) -> list[dict]:  # type: ignore[type-arg]
    labels = {"k8s-app": "calico-node"}
    return [
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "calico-config", "namespace": namespace},
         "data": {"veth_mtu": "1440"}},
        {"apiVersion": "apps/v1", "kind": "DaemonSet",
         "metadata": {"name": "calico-node", "namespace": namespace, "labels": labels},
         "spec": {"selector": {"matchLabels": labels},
                  "template": {"metadata": {"labels": labels},
                               "spec": {"containers": [{"name": "calico-node", "image": image}],
                                        "nodeSelector": {"kubeshift.io/none": "x"}}}}},
    ]  # fmt: skip


def _write(path: Path, documents: list[dict]) -> Path:  # type: ignore[type-arg]
    path.write_text(yaml.safe_dump_all(documents))
    return path


@pytest.mark.controlplane
def test_the_manifest_applies_once_and_a_dry_run_writes_nothing(
    kube: KubeClients, namespace: str, tmp_path: Path
) -> None:
    documents = load_manifest(_write(tmp_path / "calico.yaml", _manifest(namespace)), SETTING)
    dry = apply_manifest(kube, documents, dry_run=True)
    assert len(dry.changed) == 2 and dry.message.startswith("would apply 2 object(s)")
    assert AppsV1Api(kube.api_client).list_namespaced_daemon_set(namespace).items == []

    first = apply_manifest(kube, documents)
    assert first.changed == (f"ConfigMap {namespace}/calico-config",
                             f"DaemonSet {namespace}/calico-node")  # fmt: skip
    again = apply_manifest(kube, documents)
    assert again.changed == () and again.message == "all 2 object(s) already as declared"

    newer = _manifest(namespace, image="registry.k8s.io/pause:3.9")
    planned = apply_manifest(kube, load_manifest(_write(tmp_path / "v2.yaml", newer), SETTING),
                             dry_run=True)  # fmt: skip
    assert planned.changed == (f"DaemonSet {namespace}/calico-node",)
    live = AppsV1Api(kube.api_client).read_namespaced_daemon_set("calico-node", namespace)
    assert live.spec.template.spec.containers[0].image == PAUSE_IMAGE
    config = CoreV1Api(kube.api_client).read_namespaced_config_map("calico-config", namespace)
    assert config.data == {"veth_mtu": "1440"}


@pytest.mark.controlplane
def test_the_install_hook_applies_the_named_manifest_or_needs_the_daemonset(
    kube: KubeClients, namespace: str, tmp_path: Path
) -> None:
    def ctx(manifest: Path | None) -> HookContext:
        mirror = MirrorSettings.model_validate(
            {"new_cni": {"namespace": namespace, "name": "calico-node"},
             "new_cni_manifest": str(manifest) if manifest else None}
        )  # fmt: skip
        return HookContext(
            stack="t", scenario="cni-swap", phase="cni-swap",
            clients=StaticClients(kube={"primary": kube}), settings=RuntimeSettings(mirror=mirror),
        )  # fmt: skip

    with pytest.raises(PreconditionFailed, match=r"calico-node does not exist; name its manifest"):
        install_new_cni(ctx(None))
    manifest = _write(tmp_path / "calico.yaml", _manifest(namespace))
    assert install_new_cni(ctx(manifest)).changed
    assert not install_new_cni(ctx(manifest)).changed
    assert not install_new_cni(ctx(None)).changed  # installed: nothing to do


def test_a_manifest_kubeshift_cannot_use_is_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="does not exist"):
        load_manifest(tmp_path / "missing.yaml", SETTING)
    with pytest.raises(UserError, match="is a directory, not a file"):
        load_manifest(tmp_path, SETTING)
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(BILLION_LAUGHS)
    with pytest.raises(UserError, match="expands past 1,000,000 values through its aliases"):
        load_manifest(bomb, SETTING)
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: ConfigMap\nmetadata: {name: x}\n")
    with pytest.raises(UserError, match=r"document 1 lacks apiVersion, kind or metadata\.name"):
        load_manifest(bad, SETTING)
    (tmp_path / "empty.yaml").write_text("---\n")
    with pytest.raises(UserError, match="holds no Kubernetes object"):
        load_manifest(tmp_path / "empty.yaml", SETTING)
