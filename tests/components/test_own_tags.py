"""``own_tags: false``: a cluster another tool built gets none of kubeshift's own tags,
in any phase, while every other tag stays declared; ``legacy_tags: false`` the same for
the legacy cluster and role tags."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from automation.review.diff import policy_violations
from automation.review.render import render_program
from components.contract.loading import load_config
from components.contract.tags import LEGACY_TAGS, is_autoscaler_tag, is_own_tag
from tests.components.conftest import stack_values

VPC = "demo-source-network-vpc"


def _values(*, own_tags: bool, legacy_tags: bool = True) -> dict[str, Any]:
    values = copy.deepcopy(stack_values("vpc-move-small"))
    values["kubeshift:cluster"]["own_tags"] = own_tags
    values["kubeshift:cluster"]["legacy_tags"] = legacy_tags
    return values


def _rendered(
    phase: str,
    *,
    own_tags: bool,
    legacy_tags: bool = True,
    kept: dict[str, dict[str, str]] | None = None,
) -> Any:
    values = _values(own_tags=own_tags, legacy_tags=legacy_tags)
    values["kubeshift:cluster"]["kept_tags"] = kept or {}
    return render_program(values, phase).resources


def _keys(tags: Any) -> set[str]:
    if isinstance(tags, list):
        return {block["key"] for block in tags}
    return set(tags or {})


def _tag_keys(resource: Any) -> set[str]:
    keys = _keys(resource.inputs.get("tags"))
    for spec in resource.inputs.get("tagSpecifications") or []:
        keys |= _keys(spec.get("tags"))
    return keys


@pytest.mark.parametrize("phase", ["baseline", "target-workers", "cleanup"])
def test_no_resource_carries_an_own_tag_and_every_other_tag_stays(phase: str) -> None:
    marked = {r.name: _tag_keys(r) for r in _rendered(phase, own_tags=True)}
    plain = {r.name: _tag_keys(r) for r in _rendered(phase, own_tags=False)}
    assert marked.keys() == plain.keys()
    assert any(is_own_tag(k) for keys in marked.values() for k in keys)
    for name, keys in marked.items():
        assert plain[name] == {k for k in keys if not is_own_tag(k)}, name


@pytest.mark.parametrize("phase", ["baseline", "control-plane-2", "cleanup"])
def test_no_resource_carries_a_legacy_tag_and_the_current_cluster_tag_stays(phase: str) -> None:
    marked = {r.name: _tag_keys(r) for r in _rendered(phase, own_tags=False)}
    plain = {r.name: _tag_keys(r) for r in _rendered(phase, own_tags=False, legacy_tags=False)}
    assert marked.keys() == plain.keys()
    assert {k for keys in marked.values() for k in keys} >= set(LEGACY_TAGS)
    for name, keys in marked.items():
        assert plain[name] == keys - set(LEGACY_TAGS), name
    assert any("kubernetes.io/cluster/demo" in keys for keys in plain.values())


def test_a_cluster_without_autoscaler_tags_gets_none_and_keeps_the_rest() -> None:
    values = _values(own_tags=True)
    tagged = {r.name: _tag_keys(r) for r in render_program(values, "target-workers").resources}
    values["kubeshift:cluster"]["autoscaler_tags"] = False
    plain = {r.name: _tag_keys(r) for r in render_program(values, "target-workers").resources}
    assert any(is_autoscaler_tag(k) for keys in tagged.values() for k in keys)
    for name, keys in tagged.items():
        assert plain[name] == {k for k in keys if not is_autoscaler_tag(k)}, name


def test_the_policy_asks_a_cluster_without_legacy_tags_for_the_current_tag_alone() -> None:
    values = _values(own_tags=False, legacy_tags=False)
    rendered = render_program(values, "baseline").resources
    assert policy_violations(load_config(values), rendered) == []
    values["kubeshift:cluster"]["legacy_tags"] = True
    assert any(
        "asg-cluster-tags" in v and "KubernetesCluster" in v
        for v in policy_violations(load_config(values), rendered)
    )


def test_kept_tags_stay_even_where_they_look_like_kubeshifts() -> None:
    rendered = _rendered("baseline", own_tags=False, kept={VPC: {"managed-by": "terraform"}})
    vpc = next(r for r in rendered if r.name == VPC)
    assert vpc.inputs["tags"]["managed-by"] == "terraform"


def test_the_load_balancers_groups_admit_the_public_listeners_by_their_role() -> None:
    values = copy.deepcopy(stack_values("vpc-move-small"))
    values["kubeshift:cluster"]["own_tags"] = False
    values["kubeshift:cluster"]["ingress"]["internal"] = False
    values["kubeshift:cluster"]["ingress"]["allowed_cidrs"] = ["0.0.0.0/0"]
    values["kubeshift:cluster"].setdefault("api", {})["internal"] = False
    rendered = render_program(values, "baseline").resources
    assert not any("kubeshift.io/role" in json.dumps(r.inputs) for r in rendered)
    assert any("0.0.0.0/0" in json.dumps(r.inputs) for r in rendered)
    assert policy_violations(load_config(values), rendered) == []
