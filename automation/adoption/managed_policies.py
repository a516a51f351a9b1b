"""The policies attached to the live identities' roles, for
``kubeshift:cluster.managed_policies``.

kubeshift attaches AWS managed policies to its roles (``components.identity.POLICIES``);
kops attaches none (its grants are inline policies, which the program leaves alone) and
a Terraform module attaches its own. Adoption must not attach or detach any: where a
role's live attachments differ from kubeshift's, the live ones are proposed.
"""

from __future__ import annotations

from automation.adoption.kept_names import identity_profiles
from automation.adoption.live import LiveCluster
from components.identity import POLICIES

_KEYS = {"node": "node", "control-plane": "control_plane"}
"""Identity role -> its key under ``managed_policies``."""


def managed_policies(live: LiveCluster) -> dict[str, list[str]]:
    """``managed_policies`` key -> the live role's attached ARNs, where they are not
    kubeshift's."""
    proposed: dict[str, list[str]] = {}
    for role, profile in identity_profiles(live).items():
        live_role = live.profile_roles.get(profile)
        if live_role is None:
            continue
        attached = live.attached_policies.get(live_role, [])
        if sorted(attached) != sorted(POLICIES[role].managed):
            proposed[_KEYS[role]] = sorted(attached)
    return proposed
