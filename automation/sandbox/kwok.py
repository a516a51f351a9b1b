"""kwok in front of a test cluster: plays kubelet for the nodes carrying a label.

kwok needs Stage configurations to act. We take upstream's stages (copied into the
testbin cache) and add one knob to the pod-ready stage: a delay before a pod turns
Ready, set per cluster (``pod_ready_delay`` / ``KUBESHIFT_KWOK_POD_READY_DELAY``) or per
pod with the ``kubeshift.io/pod-ready-delay`` annotation (a Go duration, e.g. ``"2s"``).
Drain benchmarks use it to make replacement pods take realistic time to become Ready.

kwok applies its own option defaults only when it is started without a configuration
file. With one, every option the file leaves out is zero — above all
``podsOnNodeSyncParallelism``, the workers that list a node's pods once kwok has
learned of the node. With none of them, a pod whose event reached kwok before its
node's (a DaemonSet pod on a node that has just joined) was skipped as "not managed"
and never looked at again: it stayed Pending for good (2 of 40 in a full test run on
2 cores; the API server's log showed kwok never listing any node's pods).
``write_config`` therefore states every option kwok would have defaulted.

kwok plays one more part of a kubelet: its pod status sync. When a node misses its
heartbeats (an API server stalled on a busy machine, as one did when etcd members
moved before ``automation.sandbox.etcd_fronts``), the
node lifecycle controller marks the node's pods not Ready; a kubelet reports them Ready
again once it is heard from, while upstream's stages never revisit a Running pod, so a
Deployment stayed short of a replica and every drain behind its budget waited for good.
The ``pod-ready-again`` stage restores a Ready condition that was turned False without a
reason, as that controller does; a not-Ready condition with a reason (a failing
readiness probe, as a kubelet reports it) stands.

kwok runs without node leases (``nodeLeaseDurationSeconds: 0``) and heartbeats through
node conditions instead, as kubelets did before leases: fewer writes, and no node is
read-only while kwok waits to see its own lease.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import yaml

from automation.sandbox.processes import Daemon

MANAGED_LABEL = "kwok.x-k8s.io/managed"
MANAGED_SELECTOR = f"{MANAGED_LABEL}=true"
POD_READY_DELAY_ANNOTATION = "kubeshift.io/pod-ready-delay"
POD_READY_DELAY_ENV = "KUBESHIFT_KWOK_POD_READY_DELAY"
# WARN by default: INFO logs every pod patch, costly at thousands of pods. DEBUG also
# logs every event kwok skips and why, for diagnosing a pod kwok never played.
LOG_LEVEL_ENV = "KUBESHIFT_KWOK_LOG_LEVEL"
# /10 gives ~4M pod IPs; kwok's default /24 runs out at 254 pods.
POD_CIDR = "10.64.0.0/10"

NODE_STATUS_STAGES = ("node-initialize", "node-heartbeat")
STAGE_FILES = (
    "node-initialize.yaml",
    "node-heartbeat.yaml",
    "pod-ready.yaml",
    "pod-complete.yaml",
    "pod-delete.yaml",
)


def parse_duration_ms(text: str) -> int:
    """``"1.5s"``, ``"250ms"``, ``"2m"`` or a bare number of milliseconds."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*", text)
    if not match:
        raise ValueError(f"not a duration: {text!r} (use e.g. 250ms, 2s, 1m)")
    value, unit = float(match.group(1)), match.group(2) or "ms"
    return int(value * {"ms": 1, "s": 1000, "m": 60000}[unit])


def default_pod_ready_delay_ms() -> int:
    return parse_duration_ms(os.environ.get(POD_READY_DELAY_ENV, "0"))


# Node status heartbeats, as a kubelet's every 10 s (nodeStatusUpdateFrequency): with
# leases off they are a node's only sign of life, and upstream's 20-25 s left a stalled
# API server (an etcd member moving on a busy machine) less than the controller
# manager's 50 s grace before the node went Unknown and its pods were marked not Ready
# (which ``pod-ready-again`` reverts, but only after the stall).
HEARTBEAT_DELAY = {"durationMilliseconds": 10000, "jitterDurationMilliseconds": 12000}


# The node lifecycle controller re-marks a pod while its node is still not Ready, so the
# pod's status is restored a little after, by when the node's next heartbeat has landed.
POD_RESYNC_DELAY = {"durationMilliseconds": 3000, "jitterDurationMilliseconds": 6000}
POD_RESYNC_STAGE = "pod-ready-again"


def pod_resync_stage() -> dict[str, Any]:
    """A Running pod whose Ready condition was turned False with no reason (the node
    lifecycle controller's mark) turns Ready again, as its kubelet's status sync does."""
    ready = '.status.conditions.[] | select( .type == "Ready" )'
    return {
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": "Stage",
        "metadata": {"name": POD_RESYNC_STAGE},
        "spec": {
            "resourceRef": {"apiGroup": "v1", "kind": "Pod"},
            "selector": {
                "matchExpressions": [
                    {"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"},
                    {"key": ".status.phase", "operator": "In", "values": ["Running"]},
                    {"key": f"{ready} | .status", "operator": "In", "values": ["False"]},
                    {"key": f"{ready} | .reason", "operator": "DoesNotExist"},
                ]
            },
            "delay": dict(POD_RESYNC_DELAY),
            "next": {
                "statusTemplate": (
                    "conditions:\n"
                    "- lastTransitionTime: {{ Now | Quote }}\n"
                    '  status: "True"\n'
                    "  type: Ready\n"
                )
            },
        },
    }


# kwok reports every node's ``NetworkUnavailable`` as False/RouteCreated on its own.
# Where a route controller owns that condition (overlay-switch), kwok leaves it out of
# its node status patches, which merge conditions by type: the controller's stands.
_EACH_CONDITION = "{{ range NodeConditions }}"
_EACH_BUT_ROUTES = _EACH_CONDITION + '{{ if ne .type "NetworkUnavailable" }}'


def _without_route_condition(stage: dict[str, Any]) -> None:
    template = stage["spec"]["next"]["statusTemplate"]
    head, each, tail = template.partition(_EACH_CONDITION)
    body, end, rest = tail.partition("{{ end }}")
    if not each or not end:
        raise ValueError(f"kwok stage {stage['metadata']['name']}: no node conditions loop")
    stage["spec"]["next"]["statusTemplate"] = (
        f"{head}{_EACH_BUT_ROUTES}{body}{{{{ end }}}}{end}{rest}"
    )


def stages(
    stage_dir: Path, pod_ready_delay_ms: int, *, route_conditions: bool = True
) -> list[dict[str, Any]]:
    """Upstream stages with a configurable pod-ready delay and kubelet-paced heartbeats,
    plus the pod status sync; without ``route_conditions`` kwok leaves
    ``NetworkUnavailable`` to a route controller."""
    docs: list[dict[str, Any]] = []
    for name in STAGE_FILES:
        doc = yaml.safe_load((stage_dir / name).read_text())
        if not route_conditions and doc["metadata"]["name"] in NODE_STATUS_STAGES:
            _without_route_condition(doc)
        if doc["metadata"]["name"] == "node-heartbeat":
            doc["spec"]["delay"] = dict(HEARTBEAT_DELAY)
        if doc["metadata"]["name"] == "pod-ready":
            doc["spec"]["delay"] = {
                "durationMilliseconds": pod_ready_delay_ms,
                "durationFrom": {
                    "expressionFrom": f'.metadata.annotations["{POD_READY_DELAY_ANNOTATION}"]'
                },
            }
        docs.append(doc)
    docs.append(pod_resync_stage())
    return docs


def write_config(
    path: Path, stage_dir: Path, pod_ready_delay_ms: int, *, route_conditions: bool = True
) -> Path:
    """One multi-document kwok config: options plus stages."""
    options = {
        "apiVersion": "config.kwok.x-k8s.io/v1alpha1",
        "kind": "KwokConfiguration",
        "options": {
            "cidr": POD_CIDR,
            "manageAllNodes": False,
            "manageNodesWithLabelSelector": MANAGED_SELECTOR,
            "nodeLeaseDurationSeconds": 0,
            "nodeLeaseParallelism": 4,
            "podPlayStageParallelism": 16,
            "nodePlayStageParallelism": 8,
            "podsOnNodeSyncParallelism": 2,
            "enablePodsOnNodeSyncListPager": True,
            "enablePodsOnNodeSyncStreamWatch": False,
            "enableDebuggingHandlers": False,
            "enableProfilingHandler": False,
            "enableContentionProfiling": False,
        },
    }
    docs = stages(stage_dir, pod_ready_delay_ms, route_conditions=route_conditions)
    path.write_text(yaml.safe_dump_all([options, *docs]))
    return path


def start_kwok(
    binary: Path,
    stage_dir: Path,
    kubeconfig: Path,
    workdir: Path,
    *,
    name: str,
    pod_ready_delay_ms: int,
    route_conditions: bool = True,
) -> Daemon:
    """Start kwok managing only nodes labelled ``kwok.x-k8s.io/managed=true``."""
    config = write_config(
        workdir / "kwok.yaml", stage_dir, pod_ready_delay_ms, route_conditions=route_conditions
    )
    return Daemon.start(
        name,
        [
            binary,
            f"--config={config}",
            f"--kubeconfig={kubeconfig}",
            "--manage-all-nodes=false",
            f"--manage-nodes-with-label-selector={MANAGED_SELECTOR}",
            f"--cidr={POD_CIDR}",
            "--server-address=",
            f"--v={os.environ.get(LOG_LEVEL_ENV, 'WARN')}",
        ],
        workdir / "logs",
        env={"HOME": str(workdir)},  # keeps kwok away from ~/.kwok
    )
