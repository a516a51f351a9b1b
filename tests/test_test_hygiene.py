"""Tests whose evidence cannot fail, found with ``ast`` over every module under tests/.

A test passes when nothing raises, so one that checks nothing, or checks only in the
body of a loop (or an ``all(...)``) over a collection that may be empty, passes whatever
the code does. Evidence is an ``assert``, ``pytest.raises``/``fail``/``warns``, or a call
to a helper defined under tests/ that itself asserts or fails (``eventually``, a
rehearsal's ``must``); product functions named ``check*``/``expect*`` are not evidence.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
PYTEST_EVIDENCE = {"raises", "fail", "warns", "deprecated_call"}

Function = ast.FunctionDef | ast.AsyncFunctionDef


def _called_name(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def _is_pytest_evidence(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "pytest"
        and node.func.attr in PYTEST_EVIDENCE
    )


def _fails_by_itself(function: Function) -> bool:
    """The helper asserts, fails through pytest, or raises ``AssertionError``."""
    for node in ast.walk(function):
        if isinstance(node, ast.Assert) or _is_pytest_evidence(node):
            return True
        if isinstance(node, ast.Raise) and node.exc is not None:
            raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(raised, ast.Name) and raised.id == "AssertionError":
                return True
    return False


def _functions(tree: ast.AST) -> Iterator[Function]:
    return (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))


def _non_empty_literal(iterable: ast.expr, bound: dict[str, ast.expr] | None = None) -> bool:
    """A loop over ``("a", "b")``, ``[x, *more]``, ``range(3)`` or a name the test binds
    once to one of those runs: it is not the doubt."""
    if isinstance(iterable, ast.Name) and bound and iterable.id in bound:
        return _non_empty_literal(bound[iterable.id])
    if isinstance(iterable, ast.Tuple | ast.List | ast.Set):
        return any(not isinstance(e, ast.Starred) for e in iterable.elts)
    if isinstance(iterable, ast.Constant) and isinstance(iterable.value, str | bytes):
        return bool(iterable.value)
    if (
        isinstance(iterable, ast.Call)
        and isinstance(iterable.func, ast.Name)
        and iterable.func.id == "range"
        and all(isinstance(a, ast.Constant) for a in iterable.args)
    ):
        return len(range(*(a.value for a in iterable.args))) > 0  # type: ignore[misc, union-attr]
    return False


def _bound_once(function: Function) -> dict[str, ast.expr]:
    """Names the function assigns exactly once, to the value assigned."""
    values: dict[str, ast.expr] = {}
    counts: dict[str, int] = {}
    for node in ast.walk(function):
        if not isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.For):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for name in (n for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)):
            counts[name.id] = counts.get(name.id, 0) + 1
            if isinstance(node, ast.Assign) and node.value is not None:
                values[name.id] = node.value
    return {k: v for k, v in values.items() if counts[k] == 1}


def _vacuous_all(node: ast.Assert, bound: dict[str, ast.expr]) -> bool:
    """``assert all(x for x in xs)`` holds for an empty ``xs``."""
    test = node.test
    if not (isinstance(test, ast.Call) and _called_name(test) == "all" and test.args):
        return False
    [argument] = test.args
    if isinstance(argument, ast.GeneratorExp | ast.ListComp | ast.SetComp):
        return not all(_non_empty_literal(g.iter, bound) for g in argument.generators)
    return not _non_empty_literal(argument, bound)


def _evidence(
    node: ast.AST, helpers: set[str], bound: dict[str, ast.expr], looped: bool
) -> Iterator[bool]:
    """Whether each piece of evidence under ``node`` sits only in a possibly empty loop."""
    if isinstance(node, ast.Assert):
        yield looped or _vacuous_all(node, bound)
    elif isinstance(node, ast.Call) and (
        _is_pytest_evidence(node) or _called_name(node) in helpers
    ):
        yield looped
    if isinstance(node, ast.For | ast.AsyncFor):
        body_looped = looped or not _non_empty_literal(node.iter, bound)
        yield from _evidence(node.iter, helpers, bound, looped)
        for child in node.body:
            yield from _evidence(child, helpers, bound, body_looped)
        for child in node.orelse:
            yield from _evidence(child, helpers, bound, looped)
        return
    for child in ast.iter_child_nodes(node):
        yield from _evidence(child, helpers, bound, looped)


def hygiene_hits(sources: dict[str, str]) -> list[str]:
    """``path:line name: why`` for each test function in ``sources`` (path -> text)
    whose evidence cannot fail."""
    trees = {path: ast.parse(text) for path, text in sources.items()}
    helpers = {
        f.name
        for tree in trees.values()
        for f in _functions(tree)
        if not f.name.startswith("test_") and _fails_by_itself(f)
    }
    hits = []
    for path, tree in trees.items():
        for function in _functions(tree):
            if not function.name.startswith("test_"):
                continue
            bound = _bound_once(function)
            looped = [x for s in function.body for x in _evidence(s, helpers, bound, False)]
            where = f"{path}:{function.lineno} {function.name}"
            if not looped:
                hits.append(f"{where}: asserts nothing")
            elif all(looped):
                hits.append(f"{where}: asserts only inside loops that may run zero times")
    return hits


def test_no_test_passes_whatever_the_code_does() -> None:
    sources = {
        str(p.relative_to(TESTS.parent)): p.read_text()
        for p in sorted(TESTS.rglob("*.py"))
    }
    assert len(sources) > 100  # the walk found the suite
    assert hygiene_hits(sources) == []


def _hits(source: str) -> list[str]:
    return [h.split(": ", 1)[1] for h in hygiene_hits({"t.py": textwrap.dedent(source)})]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def test_a():\n    run()\n", ["asserts nothing"]),
        ("def test_a(xs):\n    for x in xs:\n        assert x\n", ["asserts only inside loops"]),
        ("def test_a(xs):\n    assert all(x for x in xs)\n", ["asserts only inside loops"]),
        ("def test_a(xs):\n    for x in xs:\n        pytest.raises(E)\n", ["asserts only inside"]),
        # a helper from a product module named like a check is not evidence
        ("from m import check\ndef test_a():\n    check(1)\n", ["asserts nothing"]),
        ("def test_a(xs):\n    assert xs\n    for x in xs:\n        assert x\n", []),
        ("def test_a(xs):\n    for x in ('a', 'b'):\n        assert x\n", []),
        ("def test_a(xs):\n    for x in range(3):\n        assert x\n", []),
        ("def test_a(a, b):\n    xs = [a, *b]\n    for x in xs:\n        assert x\n", []),
        ("def test_a(b):\n    for x in [*b]:\n        assert x\n", ["asserts only inside"]),
        ("def test_a(b):\n    xs = [1]\n    xs = b\n    for x in xs:\n        assert x\n",
         ["asserts only inside"]),
        ("def test_a():\n    with pytest.raises(E):\n        run()\n", []),
        ("def must(x):\n    pytest.fail('no')\ndef test_a():\n    must(1)\n", []),
        ("def ok(x):\n    raise AssertionError(x)\ndef test_a():\n    ok(1)\n", []),
    ],
)
def test_the_lint_tells_evidence_from_none(source: str, expected: list[str]) -> None:
    found = _hits(source)
    assert len(found) == len(expected), found
    for hit, start in zip(found, expected, strict=True):
        assert hit.startswith(start), hit
