"""Whether an instance's boot would start a kubelet: its image and its user data together.

On an account a node joins only when its image runs the bootstrap its user data speaks:

- **kops's nodeup.** The script kops writes leaves its bootstrap settings in
  ``/opt/kops/conf/kube_env.yaml`` and fetches nodeup itself, so it runs on any image
  with cloud-init. nodeup then reads the cluster's ``cluster-completed.spec`` and its
  instance group's ``igconfig/<role>/<group>/nodeupconfig.yaml`` under ``ConfigBase``
  (the state store, an S3 bucket), and stops with "nodeup config hash mismatch" unless
  the file's SHA-256 is the ``NodeupConfigHash`` the script names (kops
  ``upup/pkg/fi/nodeup/command.go``, ``Run``). The kubelet's labels and taints are the
  group's, from that file (``KubeletConfig.nodeLabels``/``taints``).
- **kubeshift's node.env.** The script only leaves ``/etc/kubeshift/node.env``; an image
  built for that contract reads it and starts the kubelet. On a stock image (kops's
  Ubuntu, say) cloud-init runs the script and nothing reads the file: no node.

The sandbox cannot run either, so it is told what each image does
(:data:`ImageBoot`, per image id: ``sandbox up`` declares the stack's images) and reads
the state store from moto's S3 as nodeup would. :meth:`Boots.kubelet` answers the labels
and taints the kubelet registers with, or why it never starts.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml
from botocore.exceptions import ClientError

from components.contract.userdata import NODE_ENV, is_node_script

ImageBoot = Literal["cloud-init", "node-env", "join"]
"""What an image runs at boot: ``cloud-init`` (a stock image: its user data runs, and
that is all), ``node-env`` (built for kubeshift: cloud-init, then a unit that reads
``/etc/kubeshift/node.env`` and starts the kubelet), ``join`` (seed 001's image, built by
Packer: cloud-init, and its own :data:`JOIN_SCRIPT`, which a boot script calls with the
kubelet's flags)."""
IMAGE_BOOTS: tuple[ImageBoot, ...] = ("cloud-init", "node-env", "join")
JOIN_SCRIPT = "/opt/bootstrap/join"
"""The join script a ``join`` image carries: it starts the kubelet with the flags it is
given (``--node-labels``, ``--register-with-taints``)."""

_KUBE_ENV_KEY = re.compile(r"^(ConfigBase|InstanceGroupName|InstanceGroupRole|NodeupConfigHash):"
                           r"\s*(\S+)\s*$", re.MULTILINE)  # fmt: skip
CLUSTER_SPEC = "cluster-completed.spec"
"""kops's ``registry.PathClusterCompleted``: the cluster as nodeup reads it."""


def images_argument(images: Mapping[str, ImageBoot]) -> str:
    """``<image id>=<boot>,…``: how ``sandbox up`` tells the supervisor its images."""
    return ",".join(f"{image}={boot}" for image, boot in sorted(images.items()))


def parse_images(text: str) -> dict[str, ImageBoot]:
    """The images :func:`images_argument` wrote."""
    images: dict[str, ImageBoot] = {}
    for item in filter(None, text.split(",")):
        image, _, boot = item.partition("=")
        if boot not in IMAGE_BOOTS:
            raise ValueError(f"image {image!r}: boot {boot!r} is none of {IMAGE_BOOTS}")
        images[image] = boot  # type: ignore[assignment]  # checked just above
    return images


def declared_images(
    cluster_image: str, mirror_image: str | None, *, cluster_boot: ImageBoot
) -> dict[str, ImageBoot]:
    """What the sandbox's images run: the cluster's, what its builder boots
    (``cluster_boot``: kops's world, a stock image, its nodes fetch nodeup; a
    kubeshift-built world, an image made for node.env; the Terraform modules' world,
    seed 001's image and its join script); a mirror's own, node.env (the mirror is
    kubeshift's cluster)."""
    images: dict[str, ImageBoot] = {cluster_image: cluster_boot}
    if mirror_image:
        images[mirror_image] = "node-env"
    return images


def nodeup_config_key(cluster_domain: str, role: str, group: str) -> str:
    """Where under the state store's bucket nodeup reads ``group``'s configuration."""
    return f"{cluster_domain}/igconfig/{role.lower()}/{group}/nodeupconfig.yaml"


def nodeup_config_hash(config: bytes) -> str:
    """The ``NodeupConfigHash`` a boot script must name for ``config``: base64 SHA-256."""
    return base64.b64encode(hashlib.sha256(config).digest()).decode()


@dataclass(frozen=True)
class KubeEnv:
    """The bootstrap settings a kops boot script leaves for nodeup."""

    config_base: str
    group: str
    role: str
    config_hash: str

    @classmethod
    def of(cls, script: str) -> KubeEnv | None:
        found = dict(_KUBE_ENV_KEY.findall(script))
        if "InstanceGroupName" not in found:
            return None
        return cls(
            found.get("ConfigBase", ""),
            found["InstanceGroupName"],
            found.get("InstanceGroupRole", "Node"),
            found.get("NodeupConfigHash", ""),
        )


@dataclass(frozen=True)
class Kubelet:
    """What a kubelet that started registers with; ``problem`` says why none started."""

    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[tuple[str, str, str], ...] = ()
    problem: str = ""


class Boots:
    """The images the sandbox knows, and kops's state store in moto's S3."""

    def __init__(self, images: Mapping[str, ImageBoot], s3: Any = None) -> None:
        self._images = dict(images)
        self._s3 = s3
        self._read: dict[tuple[str, str], bytes | None] = {}

    def kubelet(self, image_id: str, script: str) -> Kubelet:
        """Whether booting ``image_id`` with user data ``script`` starts a kubelet."""
        image = self._images.get(image_id)
        if image is None:
            known = ", ".join(f"{i} ({b})" for i, b in sorted(self._images.items())) or "none"
            return Kubelet(problem=f"image {image_id} is none the sandbox knows the boot of "
                                   f"(known: {known})")  # fmt: skip
        env = KubeEnv.of(script)
        if env is not None:  # nodeup fetches itself: any image with cloud-init runs it
            return self._nodeup(env)
        if image == "join" and JOIN_SCRIPT in script:
            return Kubelet()  # the join script's flags, read by the bridge
        if is_node_script(script):
            if image == "node-env":
                return Kubelet()  # the kubelet's own flags, read by the bridge
            kind = "a stock image" if image == "cloud-init" else "seed 001's image"
            return Kubelet(problem=f"image {image_id} is {kind}: the boot script leaves "
                                   f"{NODE_ENV}, which nothing on it reads")  # fmt: skip
        return Kubelet(problem="its user data runs neither kops's nodeup, kubeshift's "
                               f"node.env nor the image's {JOIN_SCRIPT}")  # fmt: skip

    def _nodeup(self, env: KubeEnv) -> Kubelet:
        """nodeup's start (kops ``command.go``): the cluster, the group's configuration,
        its hash; then the group's kubelet labels and taints."""
        bucket, _, prefix = env.config_base.removeprefix("s3://").partition("/")
        if not env.config_base.startswith("s3://") or not bucket:
            return Kubelet(problem=f"nodeup: cannot parse ConfigBase {env.config_base!r}")
        if self._object(bucket, f"{prefix}/{CLUSTER_SPEC}") is None:
            return Kubelet(problem=f"nodeup: error loading Cluster "
                                   f"{env.config_base}/{CLUSTER_SPEC}")  # fmt: skip
        key = nodeup_config_key(prefix, env.role, env.group)
        config = self._object(bucket, key)
        if config is None:
            return Kubelet(problem=f"nodeup: error loading NodeupConfig s3://{bucket}/{key}")
        if nodeup_config_hash(config) != env.config_hash:
            return Kubelet(problem=f"nodeup: nodeup config hash mismatch (s3://{bucket}/{key})")
        kubelet: dict[str, Any] = (yaml.safe_load(config) or {}).get("KubeletConfig") or {}
        labels = {str(k): str(v) for k, v in (kubelet.get("nodeLabels") or {}).items()}
        return Kubelet(labels, tuple(_taint(t) for t in kubelet.get("taints") or []))

    def _object(self, bucket: str, key: str) -> bytes | None:
        """The state store's object (cached once found: kops rewrites a group's file under
        a new hash, and the script names the hash)."""
        cached = self._read.get((bucket, key))
        if cached is not None or self._s3 is None:
            return cached
        try:
            body = self._s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "NoSuchBucket", "404"):
                return None
            raise
        self._read[(bucket, key)] = body
        return body


def _taint(text: str) -> tuple[str, str, str]:
    """kops's ``key=value:Effect`` (or ``key:Effect``) taint."""
    head, _, effect = str(text).rpartition(":")
    key, _, value = head.partition("=")
    return key, value, effect
