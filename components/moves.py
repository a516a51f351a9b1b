"""Moving resources between components without replacing them: Pulumi aliases as code.

The seed's ``terraform state mv module.a.x module.b.x`` becomes an alias: the resource
is declared under its new parent and name, and says where it used to live. A moved
component passes a :class:`Move` down to each child so every child also names its old
URN (explicit aliases, rather than relying on the engine's inherited child aliases).
Physical names never change in a move, so the engine sees no diff at all.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi


@dataclass(frozen=True)
class Move:
    """Where a resource used to live: its old logical name and its old parent's URN."""

    old_name: str
    old_parent_urn: pulumi.Input[str]

    def alias(self) -> pulumi.Alias:
        return pulumi.Alias(name=self.old_name, parent=self.old_parent_urn)

    def child(self, component_type: str, role: str) -> Move:
        """The move of this component's child named ``<component name>-<role>``."""
        old_component_urn = pulumi.create_urn(
            self.old_name, component_type, parent=self.old_parent_urn
        )
        return Move(f"{self.old_name}-{role}", old_component_urn)


def moved_options(
    move: Move | None, opts: pulumi.ResourceOptions | None = None
) -> pulumi.ResourceOptions:
    """``opts`` plus the alias of ``move`` (unchanged when nothing moved)."""
    base = opts or pulumi.ResourceOptions()
    if move is None:
        return base
    return pulumi.ResourceOptions.merge(base, pulumi.ResourceOptions(aliases=[move.alias()]))


def child_options(
    parent: pulumi.Resource,
    component_type: str,
    role: str,
    move: Move | None,
    **extra: object,
) -> pulumi.ResourceOptions:
    """Options of child ``<name>-<role>`` of ``parent``, aliased to its old URN if moved."""
    opts = pulumi.ResourceOptions(parent=parent, **extra)  # type: ignore[arg-type]
    return moved_options(move.child(component_type, role) if move else None, opts)
