"""The identities' policies: kubeshift's attached ones by default, the stack file's when it
names them (kops attaches none: its grants are inline); kubeshift's inline grants from the
first phase whose instances boot its script."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from automation.review.render import render_program
from components.contract.loading import load_config
from components.contract.model_base import ConfigError
from components.identity import POLICIES
from tests.components.conftest import stack_values

ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
OWN = "arn:aws:iam::123456789012:policy/payments-nodes"


def _values(**managed: list[str]) -> dict[str, Any]:
    values = copy.deepcopy(stack_values("vpc-move-small"))
    if managed:
        values["kubeshift:cluster"]["managed_policies"] = managed
    return values


def _attached(values: dict[str, Any], phase: str = "baseline") -> list[tuple[str, str]]:
    rendered = render_program(values, phase).resources
    roles = {r.name: r.inputs["name"] for r in rendered if r.type == "aws:iam/role:Role"}
    assert roles
    return sorted(
        (str(r.inputs["role"]), str(r.inputs["policyArn"]))
        for r in rendered
        if r.type == ATTACHMENT
    )


def test_without_a_setting_each_role_has_kubeshifts_policies() -> None:
    attached = _attached(_values())
    expected = {*POLICIES["node"].managed, *POLICIES["control-plane"].managed}
    assert {arn for _, arn in attached} == expected
    assert len(attached) == len(POLICIES["node"].managed) + len(POLICIES["control-plane"].managed)


def test_the_stack_files_policies_replace_kubeshifts_and_none_attaches_nothing() -> None:
    attached = _attached(_values(node=[OWN], control_plane=[]))
    assert [arn for _, arn in attached] == [OWN]
    assert _attached(_values(node=[], control_plane=[]), "target-workers") == []


@pytest.mark.parametrize(
    ("managed", "says"),
    [
        ({"node": ["AmazonSSMManagedInstanceCore"]}, "is not an IAM policy ARN"),
        ({"control_plane": [OWN, OWN]}, "lists a policy twice"),
    ],
)
def test_a_policy_iam_would_refuse_is_one_sentence(
    managed: dict[str, list[str]], says: str
) -> None:
    with pytest.raises(ConfigError, match=says):
        load_config(_values(**managed))


POLICY = "aws:iam/rolePolicy:RolePolicy"
KOPS_BOOT = "#!/bin/bash\n/opt/kops/bin/nodeup --conf=/opt/kops/conf/kube_env.yaml\n"


def _booting_another_tools_script() -> dict[str, Any]:
    """vpc-move-small adopted from a tool whose boot script every template keeps."""
    values = _values()
    templates = [
        str(r.inputs["name"])
        for r in render_program(values, "baseline").resources
        if r.type == "aws:ec2/launchTemplate:LaunchTemplate"
    ]
    values["kubeshift:cluster"]["user_data"] = dict.fromkeys(templates, KOPS_BOOT)
    return values


def _grants(values: dict[str, Any], phase: str) -> dict[str, list[str]]:
    """Each inline policy kubeshift declares at ``phase``: its name -> its actions."""
    return {
        str(r.inputs["name"]): [a for s in json.loads(r.inputs["policy"])["Statement"]
                                for a in s["Action"]]
        for r in render_program(values, phase).resources
        if r.type == POLICY
    }  # fmt: skip


def test_kubeshifts_grants_wait_for_the_first_member_that_boots_its_script() -> None:
    adopted = _booting_another_tools_script()
    # the other tool's agent boots every instance, moved members too (they boot as the
    # cluster's nodes boot): nothing of kubeshift's needs a grant
    for phase in ("baseline", "retire-old-workers", "control-plane-1", "cleanup"):
        assert _grants(adopted, phase) == {}, phase
    # a cluster whose member 1 keeps no script: its members boot kubeshift's script,
    # which attaches the member's volume and interface, and the role grants it that
    values = _booting_another_tools_script()
    del values["kubeshift:cluster"]["user_data"]["demo-control-plane-1"]
    moved = _grants(values, "baseline")
    assert list(moved) == ["control-plane-inline"]
    assert {"ec2:AttachVolume", "ec2:AttachNetworkInterface"} <= set(moved["control-plane-inline"])
    # a cluster kubeshift built boots its script from the first phase
    assert list(_grants(_values(), "baseline")) == ["control-plane-inline"]


def test_a_member_launches_only_once_its_role_grants_what_its_script_calls() -> None:
    rendered = render_program(_values(), "control-plane-1").resources
    policy = next(r for r in rendered if r.type == POLICY)
    groups = {
        r.inputs["name"]: r.options.get("dependsOn", [])
        for r in rendered
        if r.type == "aws:autoscaling/group:Group" and r.parent == "demo-control-plane"
    }
    moved = [name for name in groups if str(name).endswith("-mig")]
    assert len(moved) == 1 and len(groups) == 3
    assert all(policy.name in depends for depends in groups.values()), groups
