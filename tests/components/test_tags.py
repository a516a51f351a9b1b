"""Which tags are kubeshift's own (another tool's cluster lacks them)."""

from __future__ import annotations

import pytest

from components.contract.tags import NODE_TEMPLATE_LABEL, NODE_TEMPLATE_TAINT, is_own_tag


@pytest.mark.parametrize(
    "key",
    [
        "managed-by",
        "kubeshift.io/pool",
        "kubeshift.io/member",
        f"{NODE_TEMPLATE_LABEL}kubeshift.io/generation",
        f"{NODE_TEMPLATE_TAINT}kubeshift.io/migration",
    ],
)
def test_kubeshifts_marker_and_its_own_tags_are_its_own(key: str) -> None:
    assert is_own_tag(key)


@pytest.mark.parametrize(
    "key",
    [
        "Name",
        "KubernetesCluster",
        "kubernetes.io/cluster/shop",
        "kops.k8s.io/instancegroup",
        f"{NODE_TEMPLATE_LABEL}team",
        "k8s.io/cluster-autoscaler/enabled",
        "team",
    ],
)
def test_the_clusters_and_other_tools_tags_are_not(key: str) -> None:
    assert not is_own_tag(key)
