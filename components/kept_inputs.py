"""Live attributes another tool set, declared in place of kubeshift's own.

A cluster kops or Terraform built differs from what kubeshift would declare in
attributes AWS can change in place: a target group's deregistration delay, a group's
health-check grace period. Adopting it as it runs means declaring those values, not changing them.
``kubeshift adopt --keep-live`` writes each into ``kubeshift:cluster.kept_inputs``
(logical name -> Pulumi attribute name -> live and declared value) and :func:`apply`
declares the live value wherever the program declares what it declared when the value
was kept (or declares nothing: the provider's default stood for it then). A phase that
means to change the attribute (a group scaled to zero, a record moved to another load
balancer) declares something else, and its value goes through.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import pulumi
from pulumi import _types
from pulumi.runtime import rpc

from components.contract import kept_use
from components.contract.cluster_models import KeptInput


def _normal(value: Any) -> Any:
    """JSON data compared as the engine reports it: a whole float is an int."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {k: _normal(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_normal(v) for v in value]
    return value


def _args_type(resource: pulumi.Resource) -> type | None:
    """The resource's input type (``LaunchTemplateArgs`` for ``LaunchTemplate``)."""
    cls = type(resource)
    found = getattr(sys.modules.get(cls.__module__), f"{cls.__name__}Args", None)
    return found if isinstance(found, type) and _types.is_input_type(found) else None


async def _as_declared(py_name: str, value: Any, args_type: type) -> Any:
    """``value`` of the input ``py_name`` as the engine receives it (Pulumi's names)."""
    struct = await rpc.serialize_properties({py_name: value}, {}, typ=args_type)
    plain = rpc.deserialize_properties(struct)
    return _normal(next(iter(plain.values()), None))


def _kept(value: Any, kept: KeptInput, py_name: str, args_type: type) -> pulumi.Output[Any]:
    """``kept.live`` while the program declares ``kept.declared`` or nothing (the
    provider's default then stood for it); else ``value``."""

    async def choose(resolved: Any) -> Any:
        declared = await _as_declared(py_name, resolved, args_type)
        held = declared is None or declared == _normal(kept.declared)
        return kept.live if held else resolved

    return pulumi.Output.from_input(value).apply(choose)


def merged(
    *blocks: Mapping[str, Mapping[str, KeptInput]],
) -> dict[str, dict[str, KeptInput]]:
    """``blocks`` as one, attribute by attribute; a later block's value wins."""
    merged: dict[str, dict[str, KeptInput]] = {}
    for block in blocks:
        for name, kept in block.items():
            merged.setdefault(name, {}).update(kept)
    return merged


def apply(kept_inputs: Mapping[str, Mapping[str, KeptInput]]) -> None:
    """Declare the kept live values of the resources ``kept_inputs`` names, in every
    phase; one sentence when an attribute is not one of the resource's inputs."""
    if not kept_inputs:
        return

    def transform(
        args: pulumi.ResourceTransformationArgs,
    ) -> pulumi.ResourceTransformationResult | None:
        kept_use.note("kept_inputs", args.name)
        kept = kept_inputs.get(args.name)
        args_type = _args_type(args.resource) if kept else None
        if not kept or args_type is None:
            return None
        py_names = {v: k for k, v in _types.input_type_py_to_pulumi_names(args_type).items()}
        props = dict(args.props)
        for attribute, value in kept.items():
            py_name = py_names.get(attribute)
            if py_name is None:
                raise pulumi.RunError(
                    f"kubeshift:cluster.kept_inputs.{args.name}.{attribute}: {args.type_} "
                    f"has no input {attribute!r}."
                )
            props[py_name] = _kept(props.get(py_name), value, py_name, args_type)
        return pulumi.ResourceTransformationResult(props, args.opts)

    pulumi.runtime.register_stack_transformation(transform)
