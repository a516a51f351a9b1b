"""Every input the program sends is one the provider knows, and required ones are there.

The mocks accept anything; the real engine does not. The provider SDK's ``*Args``
classes carry the engine's property names (``@pulumi.getter(name=...)``), so each
recorded input key is checked against them, and each required argument must be set.
"""

from __future__ import annotations

import importlib
import inspect

import pytest

from tests.components.conftest import rendered

PHASES = ["target-workers", "control-plane-1", "cleanup"]


def _schema(type_token: str) -> tuple[set[str], set[str]]:
    """(known camelCase inputs, required camelCase inputs) of a pulumi-aws resource type."""
    package, rest = type_token.split(":", 1)
    module_path, class_name = rest.split(":")
    package_module = importlib.import_module(f"pulumi_{package}.{module_path.split('/')[0]}")
    resource_module = importlib.import_module(getattr(package_module, class_name).__module__)
    # A resource's own args class; ``<Name>InitArgs`` when ``<Name>Args`` names a nested type.
    args_class = getattr(resource_module, f"{class_name}InitArgs", None) or getattr(
        resource_module, f"{class_name}Args"
    )
    known: dict[str, str] = {}
    for attr, value in vars(args_class).items():
        if isinstance(value, property) and value.fget is not None:
            known[attr] = getattr(value.fget, "_pulumi_name", attr)
    required = {
        known[p.name]
        for p in inspect.signature(args_class.__init__).parameters.values()
        if p.name not in ("self", "__self__") and p.default is inspect.Parameter.empty
    }
    return set(known.values()), required


@pytest.mark.parametrize("phase", PHASES)
def test_inputs_match_the_provider(phase: str) -> None:
    resources = [r for r in rendered("vpc-move-small", phase).resources if r.custom]
    assert resources
    problems = []
    for r in resources:
        known, required = _schema(r.type)
        unknown = set(r.inputs) - known
        missing = required - set(r.inputs)
        if unknown or missing:
            problems.append(
                f"{r.type} {r.name}: unknown {sorted(unknown)} missing {sorted(missing)}"
            )
    assert problems == []
