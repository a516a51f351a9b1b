"""An adopted cluster's launch templates keep the boot scripts another tool wrote, and a
migration's new templates of the same role boot them too (kops's nodeup reads its
instance group's configuration; kubeshift's node.env would need an image built for it);
a role the cluster keeps no script for boots kubeshift's way."""

from __future__ import annotations

import base64
import copy
from typing import Any

import pytest

from automation.review.render import render_program
from components.contract.loading import load_config
from components.contract.model_base import ConfigError
from components.contract.userdata import is_node_script
from tests.components.conftest import stack_values

TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
NODEUP = "#!/bin/bash\nset -o errexit\n# nodeup for instance group nodes-eu-west-1a\n"
MASTER = "#!/bin/bash\nset -o errexit\n# nodeup for instance group master-eu-west-1a\n"
KEPT = {"demo-workers-general-spot": NODEUP, "demo-control-plane-1": MASTER}


def _values(user_data: dict[str, str]) -> dict[str, Any]:
    values = copy.deepcopy(stack_values("vpc-move-small"))
    values["kubeshift:cluster"]["user_data"] = user_data
    return values


def _scripts(phase: str, user_data: dict[str, str]) -> dict[str, str]:
    """Template name -> the boot script it declares, decoded."""
    resources = render_program(_values(user_data), phase).resources
    return {
        r.inputs["name"]: base64.b64decode(r.inputs["userData"]).decode()
        for r in resources
        if r.type == TEMPLATE
    }


def test_the_original_templates_declare_the_scripts_they_carry() -> None:
    plain = _scripts("baseline", {})
    kept = _scripts("baseline", KEPT)

    assert {name: kept[name] for name in KEPT} == KEPT
    assert {n: s for n, s in kept.items() if n not in KEPT} == {
        n: s for n, s in plain.items() if n not in KEPT
    }
    assert all(is_node_script(plain[name]) for name in KEPT)


def test_new_workers_and_a_moved_member_boot_as_the_clusters_nodes_boot() -> None:
    workers = _scripts("target-workers", KEPT)
    assert workers["demo-workers-general-spot"] == NODEUP  # the old template, still used
    assert workers["demo-workers-general-spot-mig"] == NODEUP  # the new generation too
    assert is_node_script(workers["demo-workers-general-on-demand-mig"])  # none kept

    moved = _scripts("control-plane-1", KEPT)
    assert moved["demo-control-plane-1-mig"] == MASTER
    assert is_node_script(moved["demo-control-plane-2"])  # kept for member 1 only
    assert "aws ec2 attach-volume" in moved["demo-control-plane-2"]


def test_a_moved_members_kept_script_attaches_the_interface_it_moves_to() -> None:
    """A Terraform module's member script attaches its volume and fixed interface by id:
    the volume stays with the member, the interface is the one of the side it runs on."""
    module = (
        "#!/bin/bash\n"
        "aws ec2 attach-volume --volume-id vol-0123456789abcdef0 --device /dev/xvdf\n"
        "aws ec2 attach-network-interface --network-interface-id eni-0123456789abcdef0\n"
        "/opt/bootstrap/join --role control-plane\n"
    )
    kept = {"demo-control-plane-1": module}
    adopted = _scripts("baseline", kept)["demo-control-plane-1"]
    moved = _scripts("control-plane-1", kept)["demo-control-plane-1-mig"]
    # the rendering's ids are its mocks': the adopted interface's, then the moved one's
    assert adopted == module.replace("eni-0123456789abcdef0", "demo-control-plane-eni-1-id")
    assert moved == module.replace("eni-0123456789abcdef0", "demo-control-plane-eni-1-mig-id")
    assert "vol-0123456789abcdef0" in moved


@pytest.mark.parametrize(
    ("user_data", "says"),
    [
        ({"shop-workers-general-spot": NODEUP}, "is not a launch template name kubeshift gives"),
        ({"demo-workers-general-spot": ""}, "is 0 bytes; EC2 takes 1 to 16384 bytes"),
        ({"demo-workers-general-spot": "é" * 8193}, "is 16386 bytes; EC2 takes 1 to 16384"),
    ],
)
def test_a_script_ec2_would_not_take_or_for_no_template_of_the_cluster_is_refused(
    user_data: dict[str, str], says: str
) -> None:
    with pytest.raises(ConfigError, match=says) as caught:
        load_config(_values(user_data))
    assert str(caught.value).startswith("kubeshift:cluster.user_data ")


def test_a_script_of_exactly_ec2s_limit_is_accepted() -> None:
    script = "#!/bin/bash\n" + "#" * (16384 - 12)
    kept = load_config(_values({"demo-workers-general-spot": script})).cluster.user_data
    assert len(kept["demo-workers-general-spot"].encode()) == 16384
