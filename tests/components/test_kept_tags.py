"""Tags another tool put on an adopted cluster's resources are declared beside kubeshift's,
so adoption changes no tag and no later phase removes one."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from automation.review.render import render_program
from components.contract.loading import load_config
from components.contract.model_base import ConfigError
from tests.components.conftest import stack_values

VPC = "demo-source-network-vpc"
GROUP = "demo-workers-general-m5-large-us-west-2a-on-demand"


def _values(kept: dict[str, dict[str, str]]) -> dict[str, Any]:
    values = copy.deepcopy(stack_values("vpc-move-small"))
    values["kubeshift:cluster"]["kept_tags"] = kept
    return values


def _tags(phase: str, kept: dict[str, dict[str, str]]) -> dict[str, Any]:
    return {r.name: r.inputs.get("tags") for r in render_program(_values(kept), phase).resources}


def test_kept_tags_join_kubeshifts_own_and_kubeshifts_values_win() -> None:
    plain = _tags("baseline", {})
    kept = _tags("baseline", {VPC: {"SubnetType": "x", "managed-by": "kops"}})
    assert kept[VPC] == {**plain[VPC], "SubnetType": "x"}
    assert kept[VPC]["managed-by"] == plain[VPC]["managed-by"]
    others = {name for name in plain if plain[name] != kept[name]}
    assert others == {VPC}


def test_a_groups_kept_tags_are_blocks_that_propagate_to_its_instances() -> None:
    plain = _tags("baseline", {})
    kept = _tags("baseline", {GROUP: {"kops.k8s.io/instancegroup": "nodes-a"}})
    added = [b for b in kept[GROUP] if b not in plain[GROUP]]
    assert added == [
        {"key": "kops.k8s.io/instancegroup", "value": "nodes-a", "propagateAtLaunch": True}
    ]


def test_kept_tags_stay_declared_while_the_resource_lives() -> None:
    later = _tags("target-workers", {VPC: {"SubnetType": "x"}, GROUP: {"k": "v"}})
    assert later[VPC]["SubnetType"] == "x"
    assert {"key": "k", "value": "v", "propagateAtLaunch": True} in later[GROUP]


def test_a_kept_name_replaces_kubeshifts_as_another_tool_named_the_resource() -> None:
    table = "demo-source-network-private-rt-us-west-2a"
    kept = _tags("baseline", {table: {"Name": "private-us-west-2a.demo.k8s.local"}})
    assert kept[table]["Name"] == "private-us-west-2a.demo.k8s.local"
    assert kept[table]["KubernetesCluster"] == "demo"  # kubeshift's other tags stay


def test_a_resource_kubeshift_tags_not_at_all_takes_its_kept_tags() -> None:
    rule = "demo-common-sg-node-egress"
    plain = _tags("baseline", {})
    assert plain[rule] is None
    name = {"Name": "from-nodes.demo.k8s.local-egress-all-0to0-0.0.0.0/0"}
    assert _tags("baseline", {rule: name})[rule] == name


@pytest.mark.parametrize(
    ("tags", "says"),
    [
        ({"aws:cloudformation:stack-name": "x"}, "the 'aws:' prefix is reserved by AWS"),
        ({"k" * 129: "v"}, "AWS tag keys are 1-128 characters"),
    ],
)
def test_a_tag_aws_would_refuse_is_a_config_error(tags: dict[str, str], says: str) -> None:
    with pytest.raises(ConfigError, match=says) as raised:
        load_config(_values({VPC: tags}))
    assert f"kept_tags.{VPC}" in str(raised.value)
