"""An adopted cluster's original resources keep the names they carry; a migration's
duplicates get kubeshift's."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from automation.review.render import render_program
from components.contract.loading import load_config
from components.contract.model_base import ConfigError
from tests.components.conftest import stack_values

KEPT = {
    "demo-workers-general-m5-large-us-west-2a-on-demand": "nodes-us-west-2a.demo.k8s.local",
    "demo-api": "api-demo-k8s-local-7fa2",
    "demo-node": "nodes.demo.k8s.local",
    "demo-node-role": "nodes.demo.k8s.local",
    "autoscaling-group:demo-control-plane-1": "master-us-west-2a.masters.demo.k8s.local",
}


def _values(names: dict[str, str]) -> dict[str, Any]:
    values = copy.deepcopy(stack_values("vpc-move-small"))
    values["kubeshift:cluster"]["names"] = names
    return values


def _names(phase: str, names: dict[str, str]) -> dict[tuple[str, str], Any]:
    resources = render_program(_values(names), phase).resources
    return {(r.type, r.name): r.inputs.get("name") for r in resources if "name" in r.inputs}


def test_the_original_resources_are_declared_with_the_names_they_carry() -> None:
    plain = _names("baseline", {})
    kept = _names("baseline", KEPT)

    changed = {k: (plain[k], kept[k]) for k in plain if plain[k] != kept[k]}
    assert {new for _, new in changed.values()} == set(KEPT.values())
    groups = "aws:autoscaling/group:Group"
    for (type_, _), (old, new) in changed.items():
        qualified = f"autoscaling-group:{old}" if type_ == groups else old
        assert KEPT.get(qualified, KEPT.get(old)) == new
    # the member's launch template shares the group's derived name, not its kept one
    templates = [n for (t, _), n in kept.items() if t.endswith("LaunchTemplate")]
    assert "demo-control-plane-1" in templates


def test_a_migrations_duplicates_are_named_by_kubeshift() -> None:
    kept = _names("target-workers", KEPT)
    names = set(kept.values())
    assert "nodes-us-west-2a.demo.k8s.local" in names  # the old group, still running
    assert "demo-workers-general-m5-large-us-west-2a-on-demand-mig" in names
    assert "demo-ingress-mig" in names


def test_kubeshifts_inline_policy_on_an_adopted_role_is_its_own() -> None:
    policy = "aws:iam/rolePolicy:RolePolicy"
    kept = _names("baseline", {"demo-control-plane-role": "masters.demo.k8s.local"})
    # the role is kops's; kubeshift's grants beside kops's are a policy of their own
    assert [n for (t, _), n in kept.items() if t == policy] == ["control-plane-inline"]


@pytest.mark.parametrize(
    ("names", "says"),
    [
        ({"shop-api": "api-x"}, "is not a name kubeshift gives cluster 'demo'"),
        ({"demo-api": "bad\nname"}, "is not a name AWS gives"),
        (
            {"inline-policy:demo-control-plane-role": "masters.demo.k8s.local"},
            "would make kubeshift write over a role's inline policy",
        ),
    ],
)
def test_a_kept_name_kubeshift_would_not_give_or_aws_would_not_take_is_refused(
    names: dict[str, str], says: str
) -> None:
    with pytest.raises(ConfigError, match=says) as caught:
        load_config(_values(names))
    assert str(caught.value).startswith("kubeshift:cluster.names ")


LONG_CLUSTER = "analytics-prod-eu-central-1"  # 27 characters, as issue 47 met it


def test_a_long_clusters_kept_names_are_taken_where_the_limit_cut_them() -> None:
    """A load balancer's name is cut at 32 characters, the cluster's name with it:
    the kept name for it is still one kubeshift gives this cluster."""
    from components.contract.naming import NameKind, physical_name

    derived = physical_name(LONG_CLUSTER, "ingress", kind=NameKind.LOAD_BALANCER)
    assert not derived.startswith(f"{LONG_CLUSTER}-")  # cut: the cluster's name too
    values = _values({derived: "a1b2c3-kops-ingress"})
    values["kubeshift:cluster"]["name"] = LONG_CLUSTER
    load_config(values)
    resources = render_program(values, "baseline").resources
    assert "a1b2c3-kops-ingress" in {r.inputs.get("name") for r in resources}

    other = physical_name("analytics-staging-eu-west-1", "ingress", kind=NameKind.LOAD_BALANCER)
    values["kubeshift:cluster"]["names"] = {other: "a1b2c3-kops-ingress"}
    with pytest.raises(ConfigError, match="is not a name kubeshift gives cluster"):
        load_config(values)
