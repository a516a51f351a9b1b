"""Names of the stack outputs the runner reads (exported by ``__main__.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from automation.errors import PreconditionFailed

SOURCE_VPC_ID = "source_vpc_id"
TARGET_VPC_ID = "target_vpc_id"
TARGET_INGRESS_TARGET_GROUP_ARNS = "target_ingress_target_group_arns"
SOURCE_INGRESS_TARGET_GROUP_ARNS = "source_ingress_target_group_arns"
API_TARGET_GROUP_ARNS = "api_target_group_arns"
ROUTE_TABLE_IDS = "route_table_ids"
NODE_SECURITY_GROUP_IDS = "node_security_group_ids"


def require(outputs: Mapping[str, Any], key: str, phase: str) -> Any:
    """An output the phase cannot work without; a clear error when it is missing."""
    value = outputs.get(key)
    if value in (None, "", [], {}):
        raise PreconditionFailed(
            f"Phase '{phase}' needs the stack output '{key}', which the stack does not have "
            "yet; run the earlier phases first."
        )
    return value
