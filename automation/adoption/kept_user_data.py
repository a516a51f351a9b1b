"""The boot scripts a live cluster's launch templates carry, for
``kubeshift:cluster.user_data``.

A template another tool wrote boots its nodes that tool's way (kops's nodeup, a
Terraform template, eksctl's bootstrap): replacing its user data with kubeshift's
script would leave every node the old groups launch during the migration unable to
join. Each template is told apart by the groups that launch from it
(:func:`.kept_names.template_roles`); a script that is not kubeshift's own is kept, as
text, under the name kubeshift would give the template.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from automation.adoption.kept_names import template_roles
from automation.adoption.live import LiveCluster
from automation.core.masking import mask_credentials
from components.contract.naming import NameKind, physical_name
from components.contract.userdata import decode, is_node_script


@dataclass(frozen=True)
class KeptUserData:
    scripts: dict[str, str] = field(default_factory=dict)
    """Template name kubeshift would give -> the live boot script."""
    not_text: list[str] = field(default_factory=list)
    """Live templates whose user data is not text (compressed, say): not kept."""
    credentials: dict[str, list[int]] = field(default_factory=dict)
    """Live template name -> the lines (from 1) of its kept script that look like they
    carry a credential: the proposed stack file holds them in plain text."""


def kept_user_data(live: LiveCluster) -> KeptUserData:
    """Every live template's boot script that is not kubeshift's."""
    kept = KeptUserData()
    for template_id, role in sorted(template_roles(live).items(), key=lambda t: t[1]):
        encoded = live.templates.get(template_id, {}).get("UserData")
        if not encoded:
            continue
        script = decode(encoded)
        if script is None:
            kept.not_text.append(live.template_names.get(template_id, template_id))
        elif not is_node_script(script):
            derived = physical_name(live.name, role, kind=NameKind.LAUNCH_TEMPLATE)
            kept.scripts[derived] = script
            lines = [
                number
                for number, line in enumerate(script.splitlines(), start=1)
                if mask_credentials(line) != line
            ]
            if lines:
                kept.credentials[live.template_names.get(template_id, template_id)] = lines
    return kept
