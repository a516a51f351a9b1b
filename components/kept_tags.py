"""Tags another tool put on an adopted cluster's resources, declared beside kubeshift's.

A resource's ``tags`` is one map in AWS's providers: whatever the program does not
declare, the next update removes. kops, Terraform modules and the cluster autoscaler
tag what they build (``kops.k8s.io/instancegroup``, ``SubnetType``,
``k8s.io/cluster-autoscaler/...``), and other tools read those tags. ``adopt
--write-config`` proposes them as ``kubeshift:cluster.kept_tags`` (logical name ->
tags) and :func:`apply` adds them to each such resource, under kubeshift's own: a tag
kubeshift declares keeps kubeshift's value, but for a kept ``Name``, which replaces
kubeshift's (the name another tool gave a subnet or a route table, by which adoption
finds it). An Auto Scaling group's tags are a list of blocks; kept ones propagate to its
instances, as kops's do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi

from components.contract import kept_use
from components.contract.tags import block_key

NAME = "Name"


def with_kept(tags: Any, kept: Mapping[str, str]) -> Any:
    """``tags`` (a map, or an Auto Scaling group's list of blocks) plus ``kept``."""
    if isinstance(tags, pulumi.Output):
        return tags.apply(lambda resolved: with_kept(resolved, kept))
    if isinstance(tags, list):
        declared = {block_key(block) for block in tags}
        extra = [
            {"key": k, "value": v, "propagate_at_launch": True}
            for k, v in sorted(kept.items())
            if k not in declared
        ]
        return [*tags, *extra]
    named = {NAME: kept[NAME]} if NAME in kept else {}
    return {**kept, **(tags or {}), **named}


def apply(kept_tags: Mapping[str, Mapping[str, str]]) -> None:
    """Add ``kept_tags`` to the resources they name, in every phase."""
    if not kept_tags:
        return

    def transform(
        args: pulumi.ResourceTransformationArgs,
    ) -> pulumi.ResourceTransformationResult | None:
        kept_use.note("kept_tags", args.name)
        kept = kept_tags.get(args.name)
        if not kept:
            return None  # a resource kubeshift tags not at all (a rule) takes kept tags too
        props = {**args.props, "tags": with_kept(args.props.get("tags"), kept)}
        return pulumi.ResourceTransformationResult(props, args.opts)

    pulumi.runtime.register_stack_transformation(transform)
