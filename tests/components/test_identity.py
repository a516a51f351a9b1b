"""The identities' attached policies: kubeshift's by default, the stack file's when it
names them (kops attaches none: its grants are inline)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from automation.render import render_program
from components.config import ConfigError, load_config
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
