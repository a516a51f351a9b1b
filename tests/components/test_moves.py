"""Moves: the aliases a moved component and its children send to the engine."""

from __future__ import annotations

from automation.review.render import record
from components.contract.naming import Namer
from components.identity import NodeIdentity, NodeIdentityArgs
from components.moves import Move, moved_options

OLD_PARENT = "urn:pulumi:s::kubeshift::kubeshift:cluster:Common::prod-common"


def test_moved_options_adds_one_alias() -> None:
    assert moved_options(None).aliases is None
    opts = moved_options(Move("old", OLD_PARENT))
    assert opts.aliases is not None and len(opts.aliases) == 1


def test_identity_and_children_alias_their_old_urns() -> None:
    def program() -> None:
        NodeIdentity(
            "prod-common-mig-node-identity",
            NodeIdentityArgs(
                namer=Namer("prod"),
                role="node",
                moved_from=Move("prod-common-node-identity", OLD_PARENT),
            ),
        )

    resources = {r.name: r for r in record(program, stack="s").resources}
    component = resources["prod-common-mig-node-identity"]
    assert component.aliases == ({"name": "prod-common-node-identity", "parentUrn": OLD_PARENT},)
    role = resources["prod-common-mig-node-identity-role"]
    assert role.aliases == (
        {
            "name": "prod-common-node-identity-role",
            "parentUrn": "urn:pulumi:s::kubeshift::kubeshift:cluster:Common"
            "$kubeshift:iam:NodeIdentity::prod-common-node-identity",
        },
    )
    # Physical names come from the original side: a move never renames.
    assert role.inputs["name"] == "prod-node-role"
    assert resources["prod-common-mig-node-identity-profile"].inputs["name"] == (
        "prod-node-profile"
    )
