"""The attributes pulumi-aws holds for a resource type, from the pinned Python SDK.

An import through pulumi-aws compares the program with the whole Terraform state of the
resource, every attribute of its type; the SDK's resource class has one property getter
per attribute, its wire name set by ``@pulumi.getter(name=...)``. The stand-in's import
is as strict as the real one only where its ``read`` covers that list.
"""

from __future__ import annotations

import importlib
import inspect

# ``pulumi.getter`` records the wire name on the function it decorates (pulumi's
# ``_types._PULUMI_NAME``).
_PULUMI_NAME = "_pulumi_name"
_NOT_ATTRIBUTES = frozenset({"id", "urn"})  # every resource's, no attribute of the type


def sdk_class(token: str) -> type:
    """``aws:ec2/launchTemplate:LaunchTemplate`` -> ``pulumi_aws.ec2.LaunchTemplate``."""
    package, module_path, name = token.split(":")
    module = importlib.import_module(f"pulumi_{package}.{module_path.split('/')[0]}")
    found = getattr(module, name)
    assert isinstance(found, type), f"{token}: pulumi_{package} has no class {name}"
    return found


def state_attributes(token: str) -> frozenset[str]:
    """The wire names (camelCase) of the type's state attributes, ``id`` and ``urn`` aside."""
    cls = sdk_class(token)
    names = {
        getattr(member.fget, _PULUMI_NAME)
        for _, member in inspect.getmembers(cls, lambda m: isinstance(m, property))
        if hasattr(member.fget, _PULUMI_NAME)
    }
    return frozenset(names - _NOT_ATTRIBUTES)
