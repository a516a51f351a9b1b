"""Boot scripts (EC2 user data) that carry node labels and taints to the kubelet.

Pure functions of plain values (or of resolved outputs), so they are unit-testable and
render the same way every time: the kubelet flags, the API endpoint and, for
control-plane members, the etcd volume and network interface each member attaches.
"""

from __future__ import annotations

import base64
import binascii
import shlex
from collections.abc import Mapping, Sequence

GENERATION_LABEL = "kubeshift.io/generation"
POOL_LABEL = "kubeshift.io/pool"
LIFECYCLE_LABEL = "node.kubernetes.io/lifecycle"
CONTROL_PLANE_ROLE = "node-role.kubernetes.io/control-plane"
"""The role label (and taint key) of a control-plane member's node."""
NODE_ENV = "/etc/kubeshift/node.env"
"""Where kubeshift's boot script leaves what the node's image reads to join."""


def kubelet_flags(labels: Mapping[str, str], taints: Sequence[tuple[str, str, str]]) -> str:
    """``--node-labels=...`` and ``--register-with-taints=...`` (sorted, deterministic)."""
    flags = []
    if labels:
        flags.append("--node-labels=" + ",".join(f"{k}={v}" for k, v in sorted(labels.items())))
    if taints:
        rendered = ",".join(f"{k}={v}:{e}" if v else f"{k}:{e}" for k, v, e in taints)
        flags.append("--register-with-taints=" + rendered)
    return " ".join(flags)


def node_script(
    *,
    cluster_name: str,
    api_endpoint: str,
    labels: Mapping[str, str],
    taints: Sequence[tuple[str, str, str]],
    role: str = "worker",
    extra: str = "",
) -> str:
    """Shell script run by cloud-init on first boot."""
    env = {
        "CLUSTER_NAME": cluster_name,
        "API_ENDPOINT": api_endpoint,
        "NODE_ROLE": role,
        "KUBELET_EXTRA_ARGS": kubelet_flags(labels, taints),
    }
    lines = [f"{k}={shlex.quote(v)}" for k, v in env.items()]
    return "\n".join(
        [
            "#!/bin/bash",
            "set -euo pipefail",
            "install -d -m 0755 /etc/kubeshift",
            f"cat > {NODE_ENV} <<'ENV'",
            *lines,
            "ENV",
            extra.rstrip(),
            "systemctl daemon-reload",
            "systemctl enable --now kubelet",
            "",
        ]
    )


def is_node_script(text: str) -> bool:
    """Whether the boot script ``text`` is kubeshift's own (:func:`node_script`)."""
    return text.startswith("#!/bin/bash\n") and f"\ncat > {NODE_ENV} <<'ENV'\n" in text


def member_attach_script(
    volume_id: str, interface_id: str | None, device: str = "/dev/xvdf"
) -> str:
    """Attach this member's own etcd volume and network interface (where it has one),
    retrying until free.

    The previous instance of the member may still hold them while it terminates.
    """
    interface = (
        [
            f"until aws ec2 attach-network-interface --network-interface-id "
            f"{shlex.quote(interface_id)} --instance-id $IID --device-index 1; do sleep 5; done"
        ]
        if interface_id
        else []
    )
    return "\n".join(
        [
            'IID=$(curl -sf -H "X-aws-ec2-metadata-token: $(curl -sf -X PUT '
            "http://169.254.169.254/latest/api/token -H 'X-aws-ec2-metadata-token-ttl-seconds: "
            "60')\" http://169.254.169.254/latest/meta-data/instance-id)",
            f"until aws ec2 attach-volume --volume-id {shlex.quote(volume_id)} "
            f"--instance-id $IID --device {device}; do sleep 5; done",
            *interface,
        ]
    )


def encode(script: str) -> str:
    """Base64, as launch templates require."""
    return base64.b64encode(script.encode()).decode()


def decode(encoded: str) -> str | None:
    """The script base64 ``encoded`` holds, or None when it is no UTF-8 text (gzip)."""
    try:
        return base64.b64decode("".join(encoded.split()), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
