"""kops's state store in moto's S3: what each instance group's nodeup reads at boot.

kops keeps a cluster's configuration in an S3 bucket (``ConfigBase`` =
``s3://<bucket>/<cluster domain>``). nodeup, started by every node's boot script, reads
the cluster there (``cluster-completed.spec``) and its instance group's
``igconfig/<role>/<group>/nodeupconfig.yaml``, whose SHA-256 the boot script names
(kops ``upup/pkg/fi/nodeup/command.go``). The group's kubelet labels and taints are in
that file (kops ``pkg/apis/nodeup`` ``Config.KubeletConfig``, a ``KubeletConfigSpec``
with ``nodeLabels`` and ``taints``); kops mirrors them into the Auto Scaling group's
cluster-autoscaler tags, which the kubelet never reads. The world writes only what
nodeup's start reads: the sandbox has no nodeup to read the rest.

kops's own spec of each instance group sits beside them at ``instancegroup/<group>``
(kops ``pkg/client/simple/vfsclientset``): what ``kops update cluster`` builds groups
from, and what a phase that would change a group waits to see released
(:mod:`automation.aws.kops_state`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import yaml

from automation.aws.kops_state import INSTANCE_GROUPS
from automation.sandbox.boots import CLUSTER_SPEC, nodeup_config_hash, nodeup_config_key
from automation.sandbox.provider.model import Aws
from automation.sandbox.world.kops import NODEUP_VERSION, STATE_STORE
from automation.sandbox.world.model import KopsCluster

KUBERNETES_VERSION = "1.28.4"


def nodeup_config(
    cluster: KopsCluster,
    group: str,
    role: str,
    labels: Mapping[str, str],
    taints: Sequence[str] = (),
) -> bytes:
    """``group``'s ``nodeupconfig.yaml`` as kops writes it (the fields nodeup's start and
    the kubelet's registration read): its name, role, the kubelet's labels and taints."""
    kubelet: dict[str, object] = {"nodeLabels": dict(sorted(labels.items()))}
    if taints:
        kubelet["taints"] = list(taints)
    document = {
        "Assets": {"amd64": [
            f"https://dl.k8s.io/release/v{KUBERNETES_VERSION}/bin/linux/amd64/kubelet",
        ]},
        "ClusterName": cluster.domain,
        "InstanceGroupName": group,
        "InstanceGroupRole": role,
        "KubeletConfig": kubelet,
    }  # fmt: skip
    return yaml.safe_dump(document, sort_keys=True).encode()


SPEC_ROLES = {"ControlPlane": "Master", "Node": "Node"}
"""The role an instance group's spec names in kops's ``v1alpha2`` API, which the state
store keeps (``ControlPlane`` is the ``v1alpha3`` name of ``Master``)."""


def instance_group_spec(
    cluster: KopsCluster, group: str, role: str, labels: Mapping[str, str], taints: Sequence[str]
) -> bytes:
    """``instancegroup/<group>`` as kops keeps it, reduced to its identity, role and the
    kubelet's labels and taints."""
    spec: dict[str, object] = {
        "role": SPEC_ROLES[role],
        "nodeLabels": dict(sorted(labels.items())),
    }
    if taints:
        spec["taints"] = list(taints)
    document = {
        "apiVersion": "kops.k8s.io/v1alpha2",
        "kind": "InstanceGroup",
        "metadata": {"name": group, "labels": {"kops.k8s.io/cluster": cluster.domain}},
        "spec": spec,
    }
    return yaml.safe_dump(document, sort_keys=True).encode()


def cluster_spec(cluster: KopsCluster) -> bytes:
    """``cluster-completed.spec``: the cluster as kops completed it (what nodeup parses
    first), reduced to its identity and where its configuration lives."""
    document = {
        "apiVersion": "kops.k8s.io/v1alpha2",
        "kind": "Cluster",
        "metadata": {"name": cluster.domain},
        "spec": {
            "cloudProvider": "aws",
            "configBase": f"s3://{STATE_STORE}/{cluster.domain}",
            "kubernetesVersion": KUBERNETES_VERSION,
            "kopsVersion": NODEUP_VERSION,
        },
    }
    return yaml.safe_dump(document, sort_keys=True).encode()


class StateStore:
    """The bucket, the cluster's spec, and each instance group's file, written as the
    groups are built (a group's boot script names its file's hash)."""

    def __init__(self, aws: Aws, cluster: KopsCluster) -> None:
        self._s3 = aws.client("s3")
        self._cluster = cluster
        buckets = {b["Name"] for b in self._s3.list_buckets().get("Buckets", [])}
        if STATE_STORE not in buckets:
            location = {} if aws.region == "us-east-1" else {
                "CreateBucketConfiguration": {"LocationConstraint": aws.region}
            }  # fmt: skip
            self._s3.create_bucket(Bucket=STATE_STORE, **location)
        self._put(f"{cluster.domain}/{CLUSTER_SPEC}", cluster_spec(cluster))

    def instance_group(
        self, group: str, role: str, labels: Mapping[str, str], taints: Sequence[str] = ()
    ) -> str:
        """Write ``group``'s spec and nodeup configuration; return the hash its script
        names."""
        spec = instance_group_spec(self._cluster, group, role, labels, taints)
        self._put(f"{self._cluster.domain}/{INSTANCE_GROUPS}{group}", spec)
        config = nodeup_config(self._cluster, group, role, labels, taints)
        self._put(nodeup_config_key(self._cluster.domain, role, group), config)
        return nodeup_config_hash(config)

    def _put(self, key: str, body: bytes) -> None:
        self._s3.put_object(Bucket=STATE_STORE, Key=key, Body=body)
