"""An adopted cluster's security groups keep the descriptions they carry (EC2 cannot
change one); a migration's duplicates get kubeshift's."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from automation.review.render import render_program
from components.contract.loading import load_config
from components.contract.model_base import ConfigError
from tests.components.conftest import stack_values

GROUP = "aws:ec2/securityGroup:SecurityGroup"
KEPT = {"demo-node": "Security group for nodes", "demo-api-lb": "Security group for api ELB"}


def _values(descriptions: dict[str, str]) -> dict[str, Any]:
    values = copy.deepcopy(stack_values("vpc-move-small"))
    values["kubeshift:cluster"]["descriptions"] = descriptions
    return values


def _descriptions(phase: str, descriptions: dict[str, str]) -> dict[str, str]:
    resources = render_program(_values(descriptions), phase).resources
    return {r.inputs["name"]: r.inputs["description"] for r in resources if r.type == GROUP}


def test_the_original_groups_are_declared_with_the_descriptions_they_carry() -> None:
    plain = _descriptions("baseline", {})
    kept = _descriptions("baseline", KEPT)

    assert {name: kept[name] for name in KEPT} == KEPT
    assert {n: d for n, d in kept.items() if n not in KEPT} == {
        n: d for n, d in plain.items() if n not in KEPT
    }
    assert all(plain[name] != description for name, description in KEPT.items())


def test_a_migrations_duplicates_are_described_by_kubeshift() -> None:
    plain = _descriptions("target-workers", {})
    kept = _descriptions("target-workers", KEPT)

    assert kept["demo-node"] == KEPT["demo-node"]  # the old group, still running
    assert kept["demo-node-mig"] == plain["demo-node-mig"] != KEPT["demo-node"]
    assert kept["demo-api-lb-mig"] == plain["demo-api-lb-mig"] != KEPT["demo-api-lb"]


@pytest.mark.parametrize(
    ("descriptions", "says"),
    [
        ({"shop-node": "x"}, "is not a security group name kubeshift gives cluster 'demo'"),
        ({"demo-node": "Gruppe für Knoten"}, "is not a description EC2 accepts"),
        ({"demo-node": "two\nlines"}, "is not a description EC2 accepts"),
        ({"demo-node": "x" * 256}, "is not a description EC2 accepts"),
        ({"demo-node": ""}, "is not a description EC2 accepts"),
    ],
)
def test_a_description_ec2_would_not_take_or_for_no_group_of_the_cluster_is_refused(
    descriptions: dict[str, str], says: str
) -> None:
    with pytest.raises(ConfigError, match=says) as caught:
        load_config(_values(descriptions))
    assert str(caught.value).startswith("kubeshift:cluster.descriptions ")


def test_every_character_ec2_accepts_in_a_description_is_accepted() -> None:
    accepted = "Aa0 ._-:/()#,@[]+=&;{}!$*"
    assert load_config(_values({"demo-node": accepted})).cluster.descriptions == {
        "demo-node": accepted
    }
