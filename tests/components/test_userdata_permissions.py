"""Every AWS call a boot script makes is allowed by the role its instance carries.

moto neither runs user data nor enforces instance roles, so this is checked from the
rendered program: the ``aws <service> <command>`` calls parsed from each launch
template's user data, against the policy documents of the role behind the template's
instance profile (inline policies; AWS-managed ones grant none of these calls).
"""

from __future__ import annotations

import base64
import fnmatch
import json
import re
from typing import Any

import pytest

from automation.review.render import RenderedResource
from tests.components.conftest import by_type, rendered

CALL = re.compile(r"\baws\s+([a-z0-9-]+)\s+([a-z0-9-]+)")
CASES = [
    ("overlay-switch-example", "baseline"),
    ("overlay-switch-example", "routes"),
    ("overlay-switch-example", "native-routing"),
    ("vpc-move-small", "target-workers"),
    ("vpc-move-small", "control-plane-2"),
    ("cni-swap-example", "mirror-cluster"),
]


def action(service: str, command: str) -> str:
    """``ec2 modify-instance-attribute`` -> ``ec2:ModifyInstanceAttribute``."""
    return f"{service}:{''.join(part.capitalize() for part in command.split('-'))}"


def calls(template: RenderedResource) -> set[str]:
    script = base64.b64decode(template.inputs.get("userData") or "").decode()
    return {action(service, command) for service, command in CALL.findall(script)}


def allowed_actions(resources: list[RenderedResource], template: RenderedResource) -> list[str]:
    """Action patterns the inline policies of the template's role allow."""
    profile_name = (template.inputs.get("iamInstanceProfile") or {}).get("name")
    profile = next(
        r for r in by_type(resources, "aws:iam/instanceProfile:InstanceProfile")
        if r.inputs.get("name") == profile_name
    )  # fmt: skip
    role = profile.inputs["role"]
    patterns: list[str] = []
    for policy in by_type(resources, "aws:iam/rolePolicy:RolePolicy"):
        if policy.inputs.get("role") != role:
            continue
        document: dict[str, Any] = json.loads(policy.inputs["policy"])
        for statement in document["Statement"]:
            if statement["Effect"] == "Allow":
                listed = statement["Action"]
                patterns += [listed] if isinstance(listed, str) else listed
    return patterns


@pytest.mark.parametrize(("stack", "phase"), CASES)
def test_every_boot_script_call_is_allowed_by_its_instance_role(stack: str, phase: str) -> None:
    resources = rendered(stack, phase).resources
    templates = by_type(resources, "aws:ec2/launchTemplate:LaunchTemplate")
    assert templates
    denied = {}
    for template in templates:
        patterns = allowed_actions(resources, template)
        missing = [
            call for call in calls(template)
            if not any(fnmatch.fnmatchcase(call, pattern) for pattern in patterns)
        ]  # fmt: skip
        if missing:
            denied[template.name] = sorted(missing)
    assert denied == {}


def test_native_routing_workers_call_modify_instance_attribute_on_their_own_cluster_only() -> None:
    resources = rendered("overlay-switch-example", "routes").resources
    workers = [t for t in by_type(resources, "aws:ec2/launchTemplate:LaunchTemplate")
               if "ec2:ModifyInstanceAttribute" in calls(t)]  # fmt: skip
    assert workers, "no worker switches its source/destination check off"
    statements = [
        s
        for p in by_type(resources, "aws:iam/rolePolicy:RolePolicy")
        for s in json.loads(p.inputs["policy"])["Statement"]
        if "ec2:ModifyInstanceAttribute" in s["Action"] and s.get("Sid", "").startswith("Source")
    ]
    assert statements and all(
        any(k.startswith("aws:ResourceTag/kubernetes.io/cluster/") for k in
            s["Condition"]["StringEquals"])
        for s in statements
    )  # fmt: skip
    baseline = rendered("overlay-switch-example", "baseline").resources
    assert not any("ec2:ModifyInstanceAttribute" in calls(t) for t in
                   by_type(baseline, "aws:ec2/launchTemplate:LaunchTemplate"))  # fmt: skip
