"""Entries of ``names``, ``descriptions``, ``user_data``, ``kept_tags`` and
``kept_inputs`` that match nothing the program declares.

Each block is keyed by what kubeshift calls a resource: ``names`` by the physical name
it would give (``<kind>:`` optional), ``descriptions`` by a security group's,
``user_data`` by a launch template's, ``kept_tags`` and ``kept_inputs`` by the logical
name. A key with a typo would
silently keep nothing, and adoption would then report a resource missing or a tag
differing far from the cause; each such key is one sentence instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from automation.review.render import render_program
from components.contract import keys as stack_keys
from components.contract.naming import NameKind, kind_key

SECURITY_GROUP = "aws:ec2/securityGroup:SecurityGroup"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"


def unmatched(values: Mapping[str, Any], phase: str) -> list[str]:
    """One sentence per ``names``, ``descriptions``, ``user_data``, ``kept_tags`` or
    ``kept_inputs`` key that matches no resource the program declares at ``phase`` (its
    first)."""
    cluster = dict(values[stack_keys.CLUSTER_KEY])
    names: dict[str, str] = dict(cluster.pop("names", None) or {})
    descriptions: dict[str, str] = dict(cluster.pop("descriptions", None) or {})
    user_data: dict[str, str] = dict(cluster.pop("user_data", None) or {})
    kept_tags: dict[str, Any] = dict(cluster.pop("kept_tags", None) or {})
    kept_inputs: dict[str, Any] = dict(cluster.pop("kept_inputs", None) or {})
    if not (names or descriptions or user_data or kept_tags or kept_inputs):
        return []
    plain = {**values, stack_keys.CLUSTER_KEY: cluster}
    rendered = render_program(plain, phase).resources
    derived = {r.inputs["name"] for r in rendered if isinstance(r.inputs.get("name"), str)}
    derived |= {  # a kept Name tag (a member's etcd volume's)
        str(r.inputs["tags"]["Name"])
        for r in rendered
        if isinstance(r.inputs.get("tags"), dict) and "Name" in r.inputs["tags"]
    }
    groups, templates = (
        {str(r.inputs["name"]) for r in rendered if r.type == kind and "name" in r.inputs}
        for kind in (SECURITY_GROUP, LAUNCH_TEMPLATE)
    )
    logical = {r.name for r in rendered if r.custom}
    key = f"{stack_keys.CLUSTER_KEY}.names"
    problems = []
    kinds = tuple(f"{kind_key(k)}:" for k in NameKind)
    for entry in sorted(names):
        bare = next((entry.removeprefix(k) for k in kinds if entry.startswith(k)), entry)
        if bare not in derived:
            problems.append(
                f"{key} {entry!r} matches no resource kubeshift declares at {phase} "
                "(`kubeshift render --json` lists their names)."
            )
    problems += [
        f"{stack_keys.CLUSTER_KEY}.descriptions {entry!r} is no security group kubeshift "
        f"declares at {phase} (`kubeshift render --json` lists their names)."
        for entry in sorted(descriptions)
        if entry not in groups
    ]
    problems += [
        f"{stack_keys.CLUSTER_KEY}.user_data {entry!r} is no launch template kubeshift "
        f"declares at {phase} (`kubeshift render --json` lists their names)."
        for entry in sorted(user_data)
        if entry not in templates
    ]
    problems += [
        f"{stack_keys.CLUSTER_KEY}.{block} {entry!r} is no resource's logical name at "
        f"{phase} (`kubeshift render` lists them)."
        for block, entries in (("kept_tags", kept_tags), ("kept_inputs", kept_inputs))
        for entry in sorted(entries)
        if entry not in logical
    ]
    return problems
