"""LabelSelector matching, as the API server does it."""

from __future__ import annotations

import pytest

from automation.kube.selectors import matches, to_string

LABELS = {"app": "web", "tier": "front"}

CASES = [
    ("null matches nothing", None, False),
    ("empty matches everything", {}, True),
    ("matchLabels hit", {"matchLabels": {"app": "web"}}, True),
    ("matchLabels miss", {"matchLabels": {"app": "db"}}, False),
    ("In", {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]}, True),
    ("In miss", {"matchExpressions": [{"key": "x", "operator": "In", "values": ["a"]}]}, False),
    ("NotIn", {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["db"]}]}, True),
    (
        "NotIn miss",
        {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]},
        False,
    ),
    ("NotIn absent key", {"matchExpressions": [{"key": "x", "operator": "NotIn"}]}, True),
    ("Exists", {"matchExpressions": [{"key": "tier", "operator": "Exists"}]}, True),
    ("DoesNotExist", {"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}, False),
    (
        "labels and expressions both needed",
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["back"]}],
        },
        False,
    ),
]


@pytest.mark.parametrize(
    ("selector", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_matches(selector: dict | None, expected: bool) -> None:
    assert matches(selector, LABELS) is expected


def test_unknown_operator_is_an_error() -> None:
    with pytest.raises(ValueError, match="Near"):
        matches({"matchExpressions": [{"key": "a", "operator": "Near"}]}, LABELS)


def test_to_string_is_sorted() -> None:
    assert to_string({"b": "2", "a": "1"}) == "a=1,b=2"
