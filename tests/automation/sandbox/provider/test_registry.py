"""The stand-in serves every ``aws:*`` type kubeshift's program declares, each once.

The types live one resource family a module under ``provider/types/``; importing the
package registers them. A module the package forgot to import, or a type the program
starts declaring that nothing serves, would surface only when an engine run asks for
it: here it is found without one.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import pulumi

from automation.sandbox.provider import types
from automation.sandbox.provider.model import REGISTRY, ResourceType
from tests.automation.sandbox.provider.sdk_attributes import sdk_class

COMPONENTS = Path(__file__).resolve().parents[4] / "components"


def _declared_classes(source: str) -> set[str]:
    """``pulumi_aws.<module>.<Name>`` for every ``<alias>.<module>.<Name>`` in ``source``
    whose ``<alias>`` is ``pulumi_aws`` imported under another name (``import pulumi_aws
    as aws``), and ``<module>.<Name>`` for a module imported from it."""
    tree = ast.parse(source)
    roots: dict[str, str] = {}  # local name -> the pulumi_aws path it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "pulumi_aws":
                    roots[alias.asname or alias.name] = "pulumi_aws"
        elif isinstance(node, ast.ImportFrom) and node.module == "pulumi_aws":
            for alias in node.names:
                roots[alias.asname or alias.name] = f"pulumi_aws.{alias.name}"
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        chain = [node.attr]
        value = node.value
        while isinstance(value, ast.Attribute):
            chain.insert(0, value.attr)
            value = value.value
        if isinstance(value, ast.Name) and value.id in roots:
            path = ".".join([roots[value.id], *chain])
            if path.count(".") == 2:  # pulumi_aws.<module>.<Name>
                found.add(path)
    return found


def _resource_classes(paths: set[str]) -> set[type]:
    """The classes among ``paths`` that are resources (not args types or functions)."""
    classes = set()
    for path in paths:
        module, _, name = path.rpartition(".")
        value = getattr(importlib.import_module(module), name, None)
        if inspect.isclass(value) and issubclass(value, pulumi.CustomResource):
            classes.add(value)
    return classes


def test_the_program_reader_finds_resources_through_either_import() -> None:
    source = (
        "import pulumi_aws as aws\nfrom pulumi_aws import ec2 as e\n"
        "aws.ec2.Vpc('v', cidr_block=aws.ec2.VpcArgs)\ne.Subnet('s')\naws.get_region()\n"
    )
    paths = _declared_classes(source)
    assert paths == {"pulumi_aws.ec2.Vpc", "pulumi_aws.ec2.VpcArgs", "pulumi_aws.ec2.Subnet"}
    assert {c.__name__ for c in _resource_classes(paths)} == {"Vpc", "Subnet"}


def test_every_type_the_program_declares_is_served() -> None:
    paths = set().union(*(_declared_classes(p.read_text()) for p in COMPONENTS.rglob("*.py")))
    declared = _resource_classes(paths)
    served = {sdk_class(token) for token in REGISTRY}
    assert len(declared) >= 25, sorted(c.__name__ for c in declared)
    unserved = sorted(f"{c.__module__}.{c.__name__}" for c in declared - served)
    assert unserved == []


def _imported_by_the_package() -> set[str]:
    """The modules ``types/__init__.py`` imports by name."""
    tree = ast.parse(inspect.getsource(types))
    return {
        alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module == types.__name__
        for alias in node.names
    }


def test_every_type_module_is_imported_and_each_type_registered_once() -> None:
    """The package imports each module that defines a type, and the types defined are
    exactly the registry's, none twice (``register`` refuses a second)."""
    names = sorted(m.name for m in pkgutil.iter_modules(types.__path__))
    defined = {
        name: [
            cls.token
            for cls in vars(importlib.import_module(f"{types.__name__}.{name}")).values()
            if inspect.isclass(cls)
            and issubclass(cls, ResourceType)
            and cls.__module__ == f"{types.__name__}.{name}"
            and "token" in vars(cls)
        ]
        for name in names
    }
    tokens = [token for name in names for token in defined[name]]
    with_types = {name for name in names if defined[name]}
    assert with_types <= _imported_by_the_package() <= set(names)
    assert sorted(tokens) == sorted(REGISTRY)
    assert len(tokens) == len(set(tokens)) >= 30


def test_one_list_of_set_attributes_serves_the_stand_in_and_the_judgement() -> None:
    """What the stand-in keeps in the state's order (a set) is what the offline judgement
    of a phase compares in any order (``review.set_attributes``), and every name there is
    a state attribute of the type in the pinned pulumi-aws SDK: a misspelt one would be
    compared in order by both, silently."""
    from automation.review.set_attributes import SET_ATTRIBUTES
    from tests.automation.sandbox.provider.sdk_attributes import state_attributes

    served = {token: frozenset(kind.sets) for token, kind in REGISTRY.items() if kind.sets}
    assert served == dict(SET_ATTRIBUTES)
    for token, names in SET_ATTRIBUTES.items():
        assert names <= state_attributes(token), (token, names - state_attributes(token))
