"""The fidelity ledger names every patch the sandbox's moto runs with."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

from automation.sandbox import moto_gaps, moto_route53

LEDGER = Path(__file__).resolve().parents[3] / "docs" / "sandbox-fidelity.md"


def _called(function: object) -> set[str]:
    tree = ast.parse(inspect.getsource(function))  # type: ignore[arg-type]
    return {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }


def _gap_functions() -> set[str]:
    """Every public function of the ``moto_gaps`` package's modules (but
    ``close_every_gap``): each closes one gap."""
    modules = [moto_gaps] + [
        importlib.import_module(m.name)
        for m in pkgutil.iter_modules(moto_gaps.__path__, f"{moto_gaps.__name__}.")
    ]
    return {
        name
        for module in modules
        for name, value in inspect.getmembers(module, inspect.isfunction)
        if value.__module__ == module.__name__ and not name.startswith("_")
    } - {"close_every_gap"}


def test_every_moto_gap_is_closed_by_close_every_gap() -> None:
    """Wherever a gap function lives in ``moto_gaps``, the sandbox's moto applies it."""
    applied = _called(moto_gaps.close_every_gap) - {"close_route53_gaps"}
    assert len(applied) >= 17
    assert sorted(_gap_functions() - applied) == []


def test_every_moto_patch_has_a_ledger_line() -> None:
    patches = (
        _gap_functions()
        | _called(moto_gaps.close_every_gap)
        | _called(moto_route53.close_route53_gaps)
    ) - {"close_route53_gaps"}
    assert len(patches) >= 17
    ledger = LEDGER.read_text()
    unlisted = sorted(p for p in patches if f"| `{p}` |" not in ledger)
    assert unlisted == []


def test_the_readme_and_the_sandbox_page_link_the_ledger() -> None:
    readme = (LEDGER.parents[1] / "README.md").read_text()
    assert "(docs/sandbox-fidelity.md)" in readme
    sandbox = (LEDGER.parent / "sandbox.md").read_text()
    assert "(sandbox-fidelity.md)" in sandbox


def test_every_field_moto_omits_has_a_ledger_line() -> None:
    """A refresh keeps the state's value only for a type's ``moto_omits``: each such
    path is a place where drift goes unseen, so each is said in the ledger."""
    from automation.sandbox.provider import types  # noqa: F401  (registers every type)
    from automation.sandbox.provider.model import REGISTRY

    ledger = LEDGER.read_text()
    unlisted = [
        (token, path)
        for token, kind in REGISTRY.items()
        for path in kind.moto_omits
        if f"`{token}` `{path}`" not in ledger
    ]
    assert unlisted == []


def test_every_attribute_not_read_is_named_on_its_types_ledger_line() -> None:
    """An import through the stand-in cannot differ on an attribute its read does not
    report: each type's ``not_read`` is named on the type's line of the ledger's
    section on them."""
    from automation.sandbox.provider import types  # noqa: F401  (registers every type)
    from automation.sandbox.provider.model import REGISTRY

    ledger = LEDGER.read_text()
    section = ledger.split("## Attributes pulumi-aws imports that the stand-in does not read")[1]
    section = section.split("\n## ")[0]
    lines = {
        line.split("`")[1]: line for line in section.splitlines() if line.startswith("| `aws:")
    }
    unlisted = [
        (token, attribute)
        for token, kind in REGISTRY.items()
        for attribute in kind.not_read
        if f"`{attribute}`" not in lines.get(token, "")
    ]
    assert sum(len(kind.not_read) for kind in REGISTRY.values()) > 100
    assert unlisted == []
