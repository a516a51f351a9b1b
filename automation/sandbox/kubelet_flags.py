"""What the kubelet reads from its flags: the labels and taints a booting instance's
Node registers with, read from its user data as its kubelet would get them.

The user data is decoded as the instance sees it (base64, gzip, MIME parts); the
kubelet's ``--node-labels`` and ``--register-with-taints`` are read wherever the boot
script passes them, and where kops's nodeup boots the instance, its instance group's
labels and taints are added as kops gives them. Also read from the script: the API
server it points the kubelet at, and the labels a real kubelet would refuse to set.
"""

from __future__ import annotations

import base64
import binascii
import email
import gzip
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from automation.sandbox.boots import JOIN_SCRIPT, Kubelet
from components.contract.tags import node_template
from components.contract.userdata import CONTROL_PLANE_ROLE

_FLAG = r"--{name}(?:=|\s+)[\"']?([^\s\"']+)"
_API_ENDPOINT = re.compile(r"^API_ENDPOINT=[\"']?([^\s\"']+)", re.MULTILINE)
_INSTANCE_GROUP = re.compile(r"^InstanceGroupName:\s*(\S+)\s*$", re.MULTILINE)
_INSTANCE_GROUP_ROLE = re.compile(r"^InstanceGroupRole:\s*(\S+)\s*$", re.MULTILINE)
INSTANCE_GROUP_LABEL = "kops.k8s.io/instancegroup"
NODE_ROLE_LABEL = "node-role.kubernetes.io/node"
_JOINS_CONTROL_PLANE = re.compile(
    rf"^\s*{re.escape(JOIN_SCRIPT)}\b[^\n]*\s--role(?:=|\s+)[\"']?control-plane\b", re.MULTILINE
)
_KUBELET_LABELS = {
    "kubernetes.io/hostname", "kubernetes.io/os", "kubernetes.io/arch",
    "beta.kubernetes.io/os", "beta.kubernetes.io/arch", "beta.kubernetes.io/instance-type",
    "node.kubernetes.io/instance-type", "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
}  # fmt: skip
_KUBELET_NAMESPACES = ("kubelet.kubernetes.io", "node.kubernetes.io")


@dataclass(frozen=True)
class KubeletFlags:
    """Labels and taints a kubelet registers its Node with."""

    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[tuple[str, str, str], ...] = ()
    """(key, value, effect) triples."""


def user_data_text(encoded: str | None) -> str:
    """Base64 user data as the instance sees it: gunzipped, MIME parts joined."""
    if not encoded:
        return ""
    try:
        data = base64.b64decode("".join(encoded.split()), validate=True)
    except (binascii.Error, ValueError):  # already plain text
        data = encoded.encode()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    text = data.decode("utf-8", errors="replace")
    if text.lstrip().startswith(("Content-Type: multipart", "MIME-Version")):
        parts = email.message_from_string(text).walk()
        payloads = (p.get_payload(decode=True) for p in parts if not p.is_multipart())
        text = "\n".join(p.decode("utf-8", "replace") for p in payloads if isinstance(p, bytes))
    return text


def kubelet_flags(text: str) -> KubeletFlags:
    """``--node-labels`` and ``--register-with-taints`` anywhere in a boot script.

    Works for kubeshift's ``node.env``, EKS's ``--kubelet-extra-args`` and nodeadm's
    flag lists alike; repeated flags merge in order, like the kubelet's map flags.
    """
    labels: dict[str, str] = {}
    for value in re.findall(_FLAG.format(name="node-labels"), text):
        for item in filter(None, value.split(",")):
            key, sep, val = item.partition("=")
            if sep:
                labels[key] = val
    taints: dict[tuple[str, str], tuple[str, str, str]] = {}
    for value in re.findall(_FLAG.format(name="register-with-taints"), text):
        for item in filter(None, value.split(",")):
            head, sep, effect = item.rpartition(":")
            if sep:
                key, _, val = head.partition("=")
                taints[(key, effect)] = (key, val, effect)
    return KubeletFlags(labels, tuple(taints.values()))


def kops_role(text: str) -> str:
    """The role (``Node``, ``ControlPlane``) of the instance group whose nodeup the boot
    script ``text`` runs; ``""`` for a script that is not kops's."""
    found = _INSTANCE_GROUP_ROLE.search(text)
    return found.group(1) if found else ""


def registered_flags(
    text: str, tags: Mapping[str, str], kubelet: Kubelet | None = None
) -> KubeletFlags:
    """The labels and taints a node registers with, booted by the script ``text`` from
    an instance tagged ``tags``: its kubelet's flags, and where kops's nodeup boots it,
    what kops gives its instance group's nodes (nodeup passes the group's labels and
    taints to the kubelet, read from the state store as ``kubelet`` holds them; without
    it, as the group's cluster-autoscaler tags mirror them; kops-controller labels the
    Node after the group); where seed 001's join script joins a member, what kubeadm
    marks a control-plane node with."""
    flags = kubelet_flags(text)
    if _JOINS_CONTROL_PLANE.search(text):
        # kubeadm join --control-plane's mark-control-plane phase, which seed 001's
        # image's join script runs for a member: the role label and its NoSchedule taint
        role = (CONTROL_PLANE_ROLE, "", "NoSchedule")
        merged = {(k, e): (k, v, e) for k, v, e in (*flags.taints, role)}
        return KubeletFlags({**flags.labels, CONTROL_PLANE_ROLE: ""}, tuple(merged.values()))
    group = _INSTANCE_GROUP.search(text)
    if group is None:
        return flags
    labels, taints = (
        (dict(kubelet.labels), kubelet.taints) if kubelet is not None else node_template(tags)
    )
    kops = {**labels, INSTANCE_GROUP_LABEL: group.group(1)}
    if kops_role(text) == "Node":  # a member's role label comes with its member tag
        kops[NODE_ROLE_LABEL] = ""
    merged = {(k, e): (k, v, e) for k, v, e in (*taints, *flags.taints)}
    return KubeletFlags({**kops, **flags.labels}, tuple(merged.values()))


def api_host(text: str) -> str:
    """The API server host a boot script points its kubelet at (``""``: none named)."""
    found = _API_ENDPOINT.search(text)
    return (urlsplit(found.group(1)).hostname or "") if found else ""


def kubelet_refuses(labels: Mapping[str, str]) -> list[str]:
    """Labels a real kubelet refuses in ``--node-labels`` (it then fails to start).

    Since Kubernetes 1.16 only a fixed set of ``kubernetes.io``/``k8s.io`` labels and the
    ``kubelet.kubernetes.io``/``node.kubernetes.io`` namespaces may be self-set; roles
    such as ``node-role.kubernetes.io/control-plane`` must be applied by a controller.
    """
    refused = []
    for key in labels:
        namespace = key.split("/", 1)[0] if "/" in key else ""
        restricted = any(
            namespace == d or namespace.endswith("." + d) for d in ("kubernetes.io", "k8s.io")
        )
        allowed = key in _KUBELET_LABELS or any(
            namespace == n or namespace.endswith("." + n) for n in _KUBELET_NAMESPACES
        )
        if restricted and not allowed:
            refused.append(key)
    return sorted(refused)
