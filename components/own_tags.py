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

The legacy tags kops and kubeshift write beside ``kubernetes.io/cluster/<id>``
(``KubernetesCluster=<id>``, and ``k8s.io/role/master`` on a member's parts) are left off
the same way with ``kubeshift:cluster.legacy_tags: false``, for a cluster whose tool wrote
only the current cluster tag (seed 001's Terraform modules): the runner finds instances
by either form (:mod:`automation.aws.nodes`). So are cluster-autoscaler's tags on the
worker groups with ``kubeshift:cluster.autoscaler_tags: false``, for a cluster whose groups
carry none: a cluster-autoscaler that discovers groups by tag keeps leaving them alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pulumi

from components.contract.tags import LEGACY_TAGS, block_key, is_autoscaler_tag, is_own_tag

Dropped = Callable[[str], bool]


def without(tags: Any, dropped: Dropped) -> Any:
    """``tags`` (a map, or an Auto Scaling group's list of blocks) less those ``dropped``
    says."""
    if isinstance(tags, pulumi.Output):
        return tags.apply(lambda resolved: without(resolved, dropped))
    if isinstance(tags, list):
        return [block for block in tags if not dropped(str(block_key(block)))]
    if isinstance(tags, Mapping):
        return {k: v for k, v in tags.items() if not dropped(k)}
    return tags


def _without_in_specifications(specifications: Any, dropped: Dropped) -> Any:
    """A launch template's tag specifications, each less the tags ``dropped`` says."""
    if isinstance(specifications, pulumi.Output):
        return specifications.apply(lambda resolved: _without_in_specifications(resolved, dropped))
    if not isinstance(specifications, list):
        return specifications
    return [
        {**spec, "tags": without(spec.get("tags"), dropped)}
        if isinstance(spec, Mapping)
        else spec
        for spec in specifications
    ]


def dropped_tags(*, own: bool, legacy: bool, autoscaler: bool = True) -> Dropped | None:
    """Which tag keys the program leaves off: kubeshift's own unless ``own``, the legacy
    ones unless ``legacy``, cluster-autoscaler's unless ``autoscaler`` (``None``: none)."""
    if own and legacy and autoscaler:
        return None
    return lambda key: (
        (not own and is_own_tag(key))
        or (not legacy and key in LEGACY_TAGS)
        or (not autoscaler and is_autoscaler_tag(key))
    )


def apply(*, own: bool, legacy: bool = True, autoscaler: bool = True) -> None:
    """Leave kubeshift's own tags off every resource unless they are declared (``own``),
    the legacy ones unless ``legacy``, cluster-autoscaler's unless ``autoscaler``."""
    dropped = dropped_tags(own=own, legacy=legacy, autoscaler=autoscaler)
    if dropped is None:
        return

    def transform(
        args: pulumi.ResourceTransformationArgs,
    ) -> pulumi.ResourceTransformationResult | None:
        props = dict(args.props)
        if "tags" in props:
            props["tags"] = without(props["tags"], dropped)
        if "tag_specifications" in props:
            props["tag_specifications"] = _without_in_specifications(
                props["tag_specifications"], dropped
            )
        return pulumi.ResourceTransformationResult(props, args.opts)

    pulumi.runtime.register_stack_transformation(transform)
