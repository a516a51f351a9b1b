"""Fixtures for component tests: a valid raw config and a way to run code under mocks.

Every test that builds resources goes through ``automation.review.render.record``, which
installs a fresh ``MockMonitor`` per call, so tests never share registrations.
"""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import pytest

from automation.review.render import RenderedResource, Rendering, render_program
from components.contract.loading import load_stack_file

REPO = Path(__file__).resolve().parents[2]
STACKS = REPO / "stacks"


def stack_values(name: str) -> dict[str, Any]:
    """Raw config of ``stacks/Pulumi.<name>.yaml``."""
    return load_stack_file(STACKS / f"Pulumi.{name}.yaml")


@pytest.fixture
def small_values() -> dict[str, Any]:
    """A deep copy of the small vpc-move stack, safe to mutate."""
    return copy.deepcopy(stack_values("vpc-move-small"))


@functools.cache
def rendered(stack: str, phase: str) -> Rendering:
    """Render ``stack`` at ``phase`` once per test session (renders are pure)."""
    return render_program(stack_values(stack), phase)


def by_type(resources: list[RenderedResource], type_token: str) -> list[RenderedResource]:
    return [r for r in resources if r.type == type_token]


def by_name(resources: list[RenderedResource]) -> dict[str, RenderedResource]:
    return {r.name: r for r in resources}


def template_groups(inputs: dict[str, Any]) -> set[str]:
    """The security groups a launch template gives its instances (directly, or on its
    network interfaces)."""
    carried = set(inputs.get("vpcSecurityGroupIds") or [])
    for interface in inputs.get("networkInterfaces") or []:
        carried |= set(interface.get("securityGroups") or [])
    return carried
