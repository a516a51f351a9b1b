"""The descriptions a live cluster's security groups carry, for
``kubeshift:cluster.descriptions``.

EC2 cannot change a security group's description: a group whose description differs
from the one kubeshift gives its part would be replaced, and adoption refuses that.
Each group is told apart by its part, as for its name (:func:`.kept_names.
security_group_roles`); each description that differs from kubeshift's is kept under
the name kubeshift would give the group.
"""

from __future__ import annotations

from automation.adoption.kept_names import security_group_roles
from automation.adoption.live import LiveCluster
from components.contract.naming import NameKind, physical_name
from components.security_groups import DESCRIPTIONS


def kept_descriptions(live: LiveCluster) -> dict[str, str]:
    """Group name kubeshift would give -> the live description, where they differ."""
    kept = {}
    for role, group_id in security_group_roles(live):
        description = live.group_descriptions.get(group_id, "")
        if description and description != DESCRIPTIONS[role]:
            derived = physical_name(live.name, role, kind=NameKind.SECURITY_GROUP)
            kept[derived] = description
    return dict(sorted(kept.items()))
