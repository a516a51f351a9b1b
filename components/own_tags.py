"""kubeshift's own tags, left off a cluster whose tool never wrote them.

The program marks what it declares with tags of its own (``managed-by``, the
``kubeshift.io/`` tags, and the ``node-template`` labels of kubeshift's node labels;
:func:`components.contract.tags.is_own_tag`). A cluster kops or Terraform built carries none of
them, and adopting it would otherwise mean an update that retags every resource it
has, launch templates included (a new version each). With
``kubeshift:cluster.own_tags: false`` (``adopt --write-config`` proposes it when the
live cluster carries none), :func:`apply` leaves them off every resource the program
declares, in every phase: nothing kubeshift runs reads them (members are told by their
role and number, nodes by their labels, groups by their names).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi

from components.contract.tags import block_key, is_own_tag


def without_own(tags: Any) -> Any:
    """``tags`` (a map, or an Auto Scaling group's list of blocks) less kubeshift's own."""
    if isinstance(tags, pulumi.Output):
        return tags.apply(without_own)
    if isinstance(tags, list):
        return [block for block in tags if not is_own_tag(str(block_key(block)))]
    if isinstance(tags, Mapping):
        return {k: v for k, v in tags.items() if not is_own_tag(k)}
    return tags


def _without_own_in_specifications(specifications: Any) -> Any:
    """A launch template's tag specifications, each less kubeshift's own tags."""
    if isinstance(specifications, pulumi.Output):
        return specifications.apply(_without_own_in_specifications)
    if not isinstance(specifications, list):
        return specifications
    return [
        {**spec, "tags": without_own(spec.get("tags"))} if isinstance(spec, Mapping) else spec
        for spec in specifications
    ]


def apply(declared: bool) -> None:
    """Leave kubeshift's own tags off every resource unless they are ``declared``."""
    if declared:
        return

    def transform(
        args: pulumi.ResourceTransformationArgs,
    ) -> pulumi.ResourceTransformationResult | None:
        props = dict(args.props)
        if "tags" in props:
            props["tags"] = without_own(props["tags"])
        if "tag_specifications" in props:
            props["tag_specifications"] = _without_own_in_specifications(
                props["tag_specifications"]
            )
        return pulumi.ResourceTransformationResult(props, args.opts)

    pulumi.runtime.register_stack_transformation(transform)
