"""Names of the stack outputs the runner reads (exported by ``__main__.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from automation.errors import PreconditionFailed

SOURCE_VPC_ID = "source_vpc_id"
TARGET_VPC_ID = "target_vpc_id"
TARGET_GROUP_ARNS = "target_group_arns"  # {lb key: {port: arn}}; keys like "ingress-target"
WORKER_LABEL_SELECTORS = "worker_label_selectors"  # {"source"|"target": "label=value"}
RECORDS = "records"  # {key: {"name", "type": "CNAME"|"A", "values": [...]}}; key "api"
NODE_SECURITY_GROUP_IDS = "node_security_group_ids"  # [sg id, ...] of the primary's nodes
MIRROR_NODE_SECURITY_GROUP_IDS = "mirror_node_security_group_ids"  # cni-swap: the mirror's


def require(outputs: Mapping[str, Any], key: str, phase: str) -> Any:
    """An output the phase cannot work without; a clear error when it is missing."""
    value = outputs.get(key)
    if value in (None, "", [], {}):
        raise PreconditionFailed(
            f"Phase '{phase}' needs the stack output '{key}', which the stack does not have "
            "yet; run the earlier phases first."
        )
    return value


def target_group_arns(outputs: Mapping[str, Any], lb_key: str, phase: str) -> list[str]:
    """Every target group ARN of load balancer ``lb_key`` (e.g. ``ingress-target``)."""
    groups = require(outputs, TARGET_GROUP_ARNS, phase)
    by_port = groups.get(lb_key) or {}
    if not by_port:
        raise PreconditionFailed(
            f"Phase '{phase}' needs the target groups of load balancer '{lb_key}', which the "
            "stack does not have yet."
        )
    return [by_port[port] for port in sorted(by_port)]


def worker_selector(outputs: Mapping[str, Any], side: str, phase: str) -> str:
    """Label selector of the source or target workers (set on them by their kubelet)."""
    return str(require(outputs, WORKER_LABEL_SELECTORS, phase)[side])
